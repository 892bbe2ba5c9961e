//! A failed tool call as the application sees it: classified, with the full error.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::ToolError;
use crate::error::Error;

/// Why a tool call failed, as wraps, `tracing` and the application see it: the tool, the kind of
/// failure and the full error. The model reads only [`message`](Self::message) (or what the
/// agent's [`tool_error_message`](crate::AgentBuilder::tool_error_message) policy makes of the
/// failure).
#[derive(Clone)]
pub struct ToolFailure {
    tool: String,
    kind: ToolFailureKind,
    error: Arc<dyn std::error::Error + Send + Sync>,
    /// The text the model reads by default.
    message: String,
}

/// The kind of a [`ToolFailure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFailureKind {
    /// The model called a tool that is not registered.
    UnknownTool,
    /// The arguments do not fit the tool.
    InvalidArguments,
    /// The tool failed.
    Failed,
    /// The tool failed with a message meant for the model ([`ToolError::ForModel`]).
    ForModel,
    /// The tool panicked.
    Panicked,
    /// The tool's output could not be turned into text.
    Output,
    /// A `wrap_tool_call` hook failed (with an error, or a panic).
    Middleware,
    /// The call did not finish in the time it was given (see
    /// [`Timeout`](crate::builtin::Timeout)).
    TimedOut,
}

impl ToolFailure {
    /// The failure of the tool `tool` with `error`.
    #[must_use]
    pub fn from_tool_error(tool: &str, error: ToolError) -> Self {
        use ToolFailureKind as Kind;
        let (kind, message) = match &error {
            ToolError::UnknownTool { .. } => (Kind::UnknownTool, error.to_string()),
            ToolError::InvalidArguments { source, .. } => {
                (Kind::InvalidArguments, format!("{error}: {source}"))
            }
            ToolError::ForModel { message, .. } => (Kind::ForModel, message.clone()),
            ToolError::Panicked { .. } => (
                Kind::Panicked,
                format!("tool `{tool}` failed unexpectedly (it crashed)"),
            ),
            ToolError::Output { .. } => (Kind::Output, format!("tool `{tool}` failed")),
            ToolError::Failed { .. } | ToolError::Interrupt { .. } => {
                (Kind::Failed, format!("tool `{tool}` failed"))
            }
        };
        ToolFailure {
            tool: tool.to_owned(),
            kind,
            error: Arc::new(error),
            message,
        }
    }

    /// The call of `tool` did not finish within `limit`: a failure of kind
    /// [`TimedOut`](ToolFailureKind::TimedOut), which the model reads as
    /// "tool `name` timed out after 5s".
    #[must_use]
    pub fn timed_out(tool: &str, limit: Duration) -> Self {
        ToolFailure {
            tool: tool.to_owned(),
            kind: ToolFailureKind::TimedOut,
            error: Arc::new(TimedOut(limit)),
            message: format!("tool `{tool}` timed out after {limit:?}"),
        }
    }

    /// The failure of a `wrap_tool_call` hook around a call of `tool`.
    pub(crate) fn from_middleware(tool: &str, error: Error) -> Self {
        Self::middleware(tool, Arc::new(error))
    }

    /// A `wrap_tool_call` hook around a call of `tool` panicked with `message`.
    pub(crate) fn from_middleware_panic(tool: &str, message: String) -> Self {
        Self::middleware(tool, Arc::new(MiddlewarePanicked(message)))
    }

    fn middleware(tool: &str, error: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        ToolFailure {
            tool: tool.to_owned(),
            kind: ToolFailureKind::Middleware,
            error,
            message: format!("tool call `{tool}` failed"),
        }
    }

    /// The tool called.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The kind of failure.
    #[must_use]
    pub fn kind(&self) -> ToolFailureKind {
        self.kind
    }

    /// The full error (its `source()` chain holds every cause): for logs and the application,
    /// not for the model.
    #[must_use]
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }

    /// What the model reads by default: a short message naming the tool and the kind of
    /// failure, with no internal detail — the error's own text only where it is meant for the
    /// model (bad arguments, an unknown tool, [`ToolError::ForModel`]).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What the model reads of a failed tool call, when the agent sets a policy
/// ([`AgentBuilder::tool_error_message`](crate::AgentBuilder::tool_error_message)).
#[derive(Clone)]
pub(crate) struct MessagePolicy(Arc<dyn Fn(&ToolFailure) -> String + Send + Sync>);

impl MessagePolicy {
    pub(crate) fn new(policy: impl Fn(&ToolFailure) -> String + Send + Sync + 'static) -> Self {
        MessagePolicy(Arc::new(policy))
    }

    pub(crate) fn message(&self, failure: &ToolFailure) -> String {
        (self.0)(failure)
    }
}

impl fmt::Debug for MessagePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MessagePolicy(..)")
    }
}

/// See [`ToolFailure::timed_out`].
#[derive(Debug, thiserror::Error)]
#[error("the tool call did not finish within {0:?}")]
struct TimedOut(Duration);

/// A `wrap_tool_call` hook panicked.
#[derive(Debug, thiserror::Error)]
#[error("a middleware panicked: {0}")]
struct MiddlewarePanicked(String);

impl fmt::Debug for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFailure")
            .field("tool", &self.tool)
            .field("kind", &self.kind)
            .field("error", &self.error)
            .finish()
    }
}

// Two failures are the same if they tell the same: tool, kind and error text (errors have no
// equality of their own).
impl PartialEq for ToolFailure {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool
            && self.kind == other.kind
            && self.error.to_string() == other.error.to_string()
    }
}

impl Eq for ToolFailure {}
