//! A served call driven to its end: its progress relayed to the client as it comes, the
//! client's cancellation obeyed, and the claim of a resumed call kept while it runs.

use std::future::Future;

use hookchain_core::{CallOutcome, Error, ProgressSink, RunContext, ToolProgress};
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::mpsc;

use super::pauses::{SealedState, ServedPauses};
use hookchain_core::interrupt::Lease;

/// The most progress reports of one served call waiting to be sent: past it, reports are
/// dropped (a progress bar's, not the result's).
const PROGRESS_QUEUE: usize = 64;

/// The claim a resumed call runs under, renewed while it runs.
pub(super) struct Claimed<'a> {
    pub(super) pauses: &'a ServedPauses,
    pub(super) state: &'a SealedState,
    pub(super) lease: &'a Lease,
}

/// Where a served call's progress goes: to the client, if it asked (a progress token).
pub(super) struct Progress {
    reports: mpsc::Receiver<ToolProgress>,
}

impl Progress {
    /// Puts a sink for the call's progress into `run_context` when the client asked for it.
    pub(super) fn attach(
        run_context: &mut RunContext,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let (sender, reports) = mpsc::channel::<ToolProgress>(PROGRESS_QUEUE);
        if context.meta.get_progress_token().is_some() {
            run_context.insert(ProgressSink::new(move |report| {
                // A client slower than the reports loses some; the call never waits for it.
                let _ = sender.try_send(report);
            }));
        }
        Progress { reports }
    }

    /// Drives `calling` to its end, sending its progress as it comes and keeping `claimed`.
    /// `Err` when the client cancelled the call or its claim was lost: its future was dropped,
    /// so the tool stopped at its next `.await`.
    pub(super) async fn drive(
        &mut self,
        calling: impl Future<Output = Result<CallOutcome, Error>>,
        context: &RequestContext<RoleServer>,
        name: &str,
        claimed: Option<Claimed<'_>>,
    ) -> Result<Result<CallOutcome, Error>, McpError> {
        tokio::pin!(calling);
        let every = ServedPauses::renew_every();
        let mut renewal = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        // rmcp cancels the request's token on `notifications/cancelled` but keeps polling the
        // handler; dropping the call's future is what stops the tool.
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut calling => break outcome,
                Some(report) = self.reports.recv() => send(context, report).await,
                () = context.ct.cancelled() => {
                    tracing::debug!(tool = %name, "MCP tool call cancelled by the client");
                    return Err(McpError::internal_error("the call was cancelled", None));
                }
                _ = renewal.tick(), if claimed.is_some() => {
                    let Some(claimed) = &claimed else { continue };
                    if let Err(error) = claimed.pauses.renew(claimed.state, claimed.lease).await {
                        // Another replica may run it now: this one must not go on.
                        tracing::warn!(tool = %name, %error, "a served call's claim was lost");
                        return Err(McpError::internal_error("the call's claim was lost", None));
                    }
                }
            }
        };
        // Reports made as the call ended go before its result.
        while let Ok(report) = self.reports.try_recv() {
            send(context, report).await;
        }
        Ok(outcome)
    }
}

/// Sends `report` to the client as `notifications/progress` of the request's token.
async fn send(context: &RequestContext<RoleServer>, report: ToolProgress) {
    let Some(token) = context.meta.get_progress_token() else {
        return;
    };
    let mut notification = ProgressNotificationParam::new(token, report.progress);
    notification.total = report.total;
    notification.message = report.message;
    if let Err(error) = context.peer.notify_progress(notification).await {
        tracing::debug!(%error, "a served call's progress did not reach the client");
    }
}
