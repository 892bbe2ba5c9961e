//! A server's progress notifications, each routed to the call that asked for them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{
    CancelledNotificationParam, ProgressNotificationParam, ProgressToken, RequestId,
};
use rmcp::service::Peer;
use tokio::sync::mpsc;

/// How many reports of one call wait for it to take them. Past that a report is dropped: a
/// progress report is superseded by the next, and a call that does not keep up (its run's
/// consumer is slow) must never hold up the session, which every call to the server shares.
const WAITING_REPORTS: usize = 16;

/// Each call's sender, and the progress of the last report handed to it.
type Routes = HashMap<ProgressToken, (mpsc::Sender<ProgressNotificationParam>, Option<f64>)>;

/// The calls waiting for progress reports, by the progress token of their request.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<Routes>>,
}

impl ProgressRoutes {
    /// The reports for the request of `token`, until the returned value is dropped.
    pub(crate) fn subscribe(&self, token: ProgressToken) -> ProgressReports {
        let (sender, receiver) = mpsc::channel(WAITING_REPORTS);
        self.lock().insert(token.clone(), (sender, None));
        ProgressReports {
            token,
            receiver,
            routes: self.clone(),
        }
    }

    /// Hands `report` to its call, if it still waits (else, or when its reports are full, the
    /// report is dropped), unless a later report came first: rmcp handles each notification
    /// in a task of its own, so two may arrive here out of order, and progress only grows.
    pub(crate) fn route(&self, report: ProgressNotificationParam) {
        let mut routes = self.lock();
        let Some((sender, last)) = routes.get_mut(&report.progress_token) else {
            return;
        };
        if last.is_some_and(|last| report.progress <= last) {
            return;
        }
        *last = Some(report.progress);
        // Under the lock: a later report is never handed over before this one.
        let _ = sender.try_send(report);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        // Nothing panics while holding the lock: a poisoned map is still consistent.
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One call's progress reports; its route goes when it is dropped.
#[derive(Debug)]
pub(crate) struct ProgressReports {
    token: ProgressToken,
    receiver: mpsc::Receiver<ProgressNotificationParam>,
    routes: ProgressRoutes,
}

impl ProgressReports {
    /// The next report (never `None` while the route is there).
    pub(crate) async fn next(&mut self) -> Option<ProgressNotificationParam> {
        self.receiver.recv().await
    }

    /// A report already waiting, if any.
    pub(crate) fn try_next(&mut self) -> Option<ProgressNotificationParam> {
        self.receiver.try_recv().ok()
    }
}

impl Drop for ProgressReports {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

/// Sends `notifications/cancelled` for a request whose caller dropped it before its answer (a
/// run cancelled, a `Timeout` middleware, the call timeout), so that the server stops working
/// on a result nobody reads. Disarmed once the answer came.
pub(crate) struct CancelOnDrop<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl<'a> CancelOnDrop<'a> {
    const REASON: &'static str = "the call was abandoned by its caller";

    pub(crate) fn new(peer: &'a Peer<RoleClient>, id: RequestId) -> Self {
        Self { peer, id: Some(id) }
    }

    pub(crate) fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        // A notification is sent by a future: in a task of the runtime the call ran on (there
        // is one: the call was awaited on it). Without one, the server finishes the call and
        // its answer is dropped.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let cancelled =
                    CancelledNotificationParam::new(Some(id), Some(Self::REASON.into()));
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn report(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), progress)
    }

    #[tokio::test]
    async fn a_report_reaches_its_call_only_and_the_route_goes_with_it() {
        let routes = ProgressRoutes::default();
        let mut first = routes.subscribe(ProgressToken(NumberOrString::Number(1)));
        let mut second = routes.subscribe(ProgressToken(NumberOrString::Number(2)));
        routes.route(report(2, 0.5));
        routes.route(report(1, 0.25));
        routes.route(report(3, 1.0)); // nobody's: dropped
        assert_eq!(first.next().await.unwrap().progress, 0.25);
        assert_eq!(second.next().await.unwrap().progress, 0.5);
        drop(first);
        assert_eq!(routes.lock().len(), 1);
        drop(second);
        assert!(routes.lock().is_empty());
    }

    #[tokio::test]
    async fn a_call_that_does_not_keep_up_loses_reports_not_the_session() {
        let routes = ProgressRoutes::default();
        let mut slow = routes.subscribe(ProgressToken(NumberOrString::Number(1)));
        for step in 0..100 {
            // Never waits: the session's task routes every notification of every call.
            routes.route(report(1, f64::from(step)));
        }
        let mut taken = Vec::new();
        while let Some(report) = slow.try_next() {
            taken.push(report.progress);
        }
        assert_eq!(taken.len(), WAITING_REPORTS);
        assert_eq!(taken[0], 0.0);
    }

    #[tokio::test]
    async fn a_report_that_comes_after_a_later_one_is_dropped() {
        let routes = ProgressRoutes::default();
        let mut call = routes.subscribe(ProgressToken(NumberOrString::Number(1)));
        for progress in [1.0, 3.0, 2.0, 3.0, 4.0] {
            routes.route(report(1, progress));
        }
        let mut taken = Vec::new();
        while let Some(report) = call.try_next() {
            taken.push(report.progress);
        }
        assert_eq!(taken, [1.0, 3.0, 4.0]);
    }
}
