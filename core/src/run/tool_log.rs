//! [`ToolLog`]: a line a running tool call logs for whoever called it.

use std::fmt;

/// How much a [`ToolLog`] matters, least first (the levels of RFC 5424 that a tool has a use
/// for; MCP's `logging` uses the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detail for whoever debugs the tool.
    Debug,
    /// What the tool is doing.
    Info,
    /// Something worth noticing, not wrong.
    Notice,
    /// Something that may be wrong.
    Warning,
    /// Something that went wrong.
    Error,
}

impl LogLevel {
    /// Its name, in lower case (`"warning"`), as MCP writes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A line a running tool call logs ([`ToolContext::log`](crate::ToolContext::log)) for whoever
/// called it: the client of an MCP server serving the agent's tools gets it as a log message.
/// Never part of the history nor of what the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolLog {
    /// The id of the call.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// How much it matters.
    pub level: LogLevel,
    /// What it says.
    pub message: String,
}

impl ToolLog {
    /// `message` at `level`, of the call `call_id` of `tool`.
    pub fn new(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        level: LogLevel,
        message: impl Into<String>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool: tool.into(),
            level,
            message: message.into(),
        }
    }
}

/// Where a tool call's log lines go besides `tracing`: put into the
/// [`RunContext`](crate::RunContext) of a call or a run — an MCP server serving the agent's
/// tools sends each line to the client that asked for them this way. Each
/// [`ToolContext::log`](crate::ToolContext::log) of a call is given to it, in order, on the
/// call's task: it should not block (hand the line to a channel).
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use hookchain::{LogSink, RunContext, ToolLog};
///
/// let seen: Arc<Mutex<Vec<ToolLog>>> = Arc::default();
/// let kept = Arc::clone(&seen);
/// let run_context = RunContext::new().with(LogSink::new(move |line| kept.lock().unwrap().push(line)));
/// # let _ = run_context;
/// ```
#[derive(Clone)]
pub struct LogSink(std::sync::Arc<dyn Fn(ToolLog) + Send + Sync>);

impl LogSink {
    /// A sink that gives each line to `log`.
    pub fn new(log: impl Fn(ToolLog) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(log))
    }

    pub(crate) fn log(&self, line: ToolLog) {
        (self.0)(line);
    }
}

impl fmt::Debug for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogSink").finish_non_exhaustive()
    }
}
