//! A served call driven to its end: its progress and log lines relayed to the client as they
//! come, the client's cancellation obeyed, and the claim of a resumed call kept while it runs.

use std::future::Future;

use hookchain_core::{
    CallOutcome, Error, LogLevel, LogSink, ProgressSink, RunContext, ToolLog, ToolProgress,
};
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::mpsc;

use super::logging::notification;
use super::pauses::{SealedState, ServedPauses};
use hookchain_core::interrupt::Lease;

/// The most progress reports and log lines of one served call waiting to be sent: past it,
/// they are dropped (a progress bar's and a log's, not the result's).
const REPORT_QUEUE: usize = 64;

/// What a served call tells its client while it runs.
enum Report {
    Progress(ToolProgress),
    Log(ToolLog),
}

/// The claim a resumed call runs under, renewed while it runs.
pub(super) struct Claimed<'a> {
    pub(super) pauses: &'a ServedPauses,
    pub(super) state: &'a SealedState,
    pub(super) lease: &'a Lease,
}

/// Where a served call's progress and log lines go: to the client, if it asked (a progress
/// token; a log level).
pub(super) struct Relay {
    reports: mpsc::Receiver<Report>,
}

impl Relay {
    /// Puts sinks for the call's progress and its log lines at `least` or above into
    /// `run_context`, for what the client asked for.
    pub(super) fn attach(
        run_context: &mut RunContext,
        context: &RequestContext<RoleServer>,
        least: Option<LogLevel>,
    ) -> Self {
        let (sender, reports) = mpsc::channel::<Report>(REPORT_QUEUE);
        if context.meta.get_progress_token().is_some() {
            let sender = sender.clone();
            run_context.insert(ProgressSink::new(move |report| {
                // A client slower than the reports loses some; the call never waits for it.
                let _ = sender.try_send(Report::Progress(report));
            }));
        }
        if let Some(least) = least {
            run_context.insert(LogSink::new(move |line: ToolLog| {
                if line.level >= least {
                    let _ = sender.try_send(Report::Log(line));
                }
            }));
        }
        Relay { reports }
    }

    /// Drives `calling` to its end, sending its progress and log lines as they come and
    /// keeping `claimed`.
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

/// Sends `report` to the client: `notifications/progress` of the request's token, or
/// `notifications/message`.
async fn send(context: &RequestContext<RoleServer>, report: Report) {
    let report = match report {
        Report::Progress(report) => report,
        Report::Log(line) => {
            #[allow(deprecated)]
            let sent = context
                .peer
                .notify_logging_message(notification(line))
                .await;
            if let Err(error) = sent {
                tracing::debug!(%error, "a served call's log line did not reach the client");
            }
            return;
        }
    };
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
