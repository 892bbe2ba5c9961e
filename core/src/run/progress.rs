//! [`ToolProgress`]: how far a running tool call got, told to a streamed run's consumer.

/// How far a running tool call got: an MCP server's progress notification, or a long tool's
/// own report ([`ToolContext::progress`](crate::ToolContext::progress)). A streamed run gives
/// it as [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress), between the call's
/// [`ToolCallStarted`](crate::AgentEvent::ToolCallStarted) and
/// [`ToolCallFinished`](crate::AgentEvent::ToolCallFinished): for a progress bar, never part
/// of the history nor of what the model reads.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolProgress {
    /// The id of the call.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// How far it got, in the tool's units (it only grows).
    pub progress: f64,
    /// How far it will go, if the tool knows.
    pub total: Option<f64>,
    /// What it is doing, for people.
    pub message: Option<String>,
}

impl ToolProgress {
    /// `progress` of the call `call_id` of `tool`, out of `total` if known.
    pub fn new(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        progress: f64,
        total: Option<f64>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool: tool.into(),
            progress,
            total,
            message: None,
        }
    }

    /// With what it is doing.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The share done, from 0 to 1, when the total is known (and not zero).
    #[must_use]
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|total| *total > 0.0)
            .map(|total| (self.progress / total).clamp(0.0, 1.0))
    }
}

/// Where a tool call's progress goes when it is not part of a streamed run: put into the
/// [`RunContext`](crate::RunContext) of a call made with
/// [`Agent::call_tool`](crate::Agent::call_tool) — an MCP server serving the agent's tools
/// sends each report to its client this way — or of a run that is not streamed. Each
/// [`ToolContext::progress`](crate::ToolContext::progress) of a call is given to it, in order,
/// on the call's task: it should not block (hand the report to a channel).
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use hookchain::{ProgressSink, RunContext, ToolProgress};
///
/// let seen: Arc<Mutex<Vec<ToolProgress>>> = Arc::default();
/// let kept = Arc::clone(&seen);
/// let run_context =
///     RunContext::new().with(ProgressSink::new(move |report| kept.lock().unwrap().push(report)));
/// # let _ = run_context;
/// ```
#[derive(Clone)]
pub struct ProgressSink(std::sync::Arc<dyn Fn(ToolProgress) + Send + Sync>);

impl ProgressSink {
    /// A sink that gives each report to `report`.
    pub fn new(report: impl Fn(ToolProgress) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(report))
    }

    pub(crate) fn report(&self, report: ToolProgress) {
        (self.0)(report);
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressSink").finish_non_exhaustive()
    }
}
