//! [`Timeout`]: a model call or a tool call that takes too long fails.
//!
//! # The rules
//!
//! - **A model call** over its time fails with a [`ModelError`] of kind
//!   [`Timeout`](crate::ModelErrorKind::Timeout). That kind is retryable: a
//!   [`ModelRetry`](super::ModelRetry) listed *outside* the timeout sends the call again (each
//!   attempt gets the full time); listed inside, the time bounds all attempts together.
//! - **A tool call** over its time gets an error result, classified as
//!   [`ToolFailureKind::TimedOut`](crate::tool::ToolFailureKind::TimedOut) (the model reads
//!   "tool `name` timed out after 5s"), and the run goes on. A per-tool time overrides the
//!   default one; a tool with neither has no limit.
//! - What runs inside the timeout (the inner middleware, the model or the tool) is dropped
//!   when the time is up: a tool run as a task of its own
//!   ([`ToolExecution::Spawned`](crate::tool::ToolExecution)) is no longer awaited.
//! - The time runs on tokio's timer. Each timeout is a `tracing` warning.
//!
//! ```
//! use std::time::Duration;
//! use hookchain::builtin::Timeout;
//!
//! let timeout = Timeout::builder()
//!     .model_call(Duration::from_secs(60))
//!     .tool_call(Duration::from_secs(10))
//!     .tool("crawl", Duration::from_secs(120))
//!     .build()?;
//! # let _ = hookchain::chain![timeout];
//! # Ok::<(), hookchain::builtin::ConfigError>(())
//! ```

use std::time::Duration;

use hookchain_macros::middleware;

use crate::builtin::ConfigError;
use crate::context::{Context, ToolContext};
use crate::error::{Error, ModelError};
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{ModelNext, ToolNext};
use crate::model::{ModelRequest, ModelResponse};
use crate::tool::ToolFailure;

/// Fails a model call or a tool call that takes too long (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Timeout {
    model_call: Option<Duration>,
    tool_call: Option<Duration>,
    /// Per-tool times, overriding `tool_call`.
    tools: Vec<(String, Duration)>,
}

impl Timeout {
    /// A builder with no time set.
    #[must_use]
    pub fn builder() -> TimeoutBuilder {
        TimeoutBuilder {
            timeout: Timeout {
                model_call: None,
                tool_call: None,
                tools: Vec::new(),
            },
        }
    }

    /// The time a call of `tool` is given, if any.
    fn tool_limit(&self, tool: &str) -> Option<Duration> {
        self.tools
            .iter()
            .find(|(name, _)| name == tool)
            .map(|&(_, limit)| limit)
            .or(self.tool_call)
    }
}

#[middleware(crate = crate, live_stream)]
impl Timeout {
    /// Fails the model call with a `Timeout` model error when it takes longer than allowed.
    #[hook(wrap_model_call)]
    async fn limit_model(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let Some(limit) = self.model_call else {
            return next.call(cx, request).await;
        };
        match tokio::time::timeout(limit, next.call(cx, request)).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => {
                tracing::warn!(limit = ?limit, "Timeout: the model call timed out");
                Err(Error::from(ModelError::timeout(format!(
                    "the model call took longer than {limit:?}"
                ))))
            }
        }
    }

    /// Answers the tool call with a timed-out error result when it takes longer than allowed.
    #[hook(wrap_tool_call)]
    async fn limit_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> ToolResult {
        let Some(limit) = self.tool_limit(&call.name) else {
            return next.call(cx, call).await;
        };
        match tokio::time::timeout(limit, next.call(cx, call)).await {
            Ok(result) => result,
            Err(_elapsed) => {
                tracing::warn!(tool = cx.tool(), limit = ?limit, "Timeout: the tool call timed out");
                ToolResult::failed(cx.call_id(), ToolFailure::timed_out(cx.tool(), limit))
            }
        }
    }
}

/// Builds a [`Timeout`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
pub struct TimeoutBuilder {
    timeout: Timeout,
}

impl TimeoutBuilder {
    /// The time a model call is given (the inner middleware and the model).
    #[must_use]
    pub fn model_call(mut self, limit: Duration) -> Self {
        self.timeout.model_call = Some(limit);
        self
    }

    /// The time a tool call is given, unless its tool has one of its own.
    #[must_use]
    pub fn tool_call(mut self, limit: Duration) -> Self {
        self.timeout.tool_call = Some(limit);
        self
    }

    /// The time a call of `tool` is given (replacing an earlier one for that tool).
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>, limit: Duration) -> Self {
        let tool = tool.into();
        self.timeout.tools.retain(|(name, _)| *name != tool);
        self.timeout.tools.push((tool, limit));
        self
    }

    /// The timeout, or the first setting that cannot work: no time set at all, a zero time
    /// (every call would fail), a tool with an empty name.
    pub fn build(self) -> Result<Timeout, ConfigError> {
        let t = &self.timeout;
        if t.model_call.is_none() && t.tool_call.is_none() && t.tools.is_empty() {
            return Err(ConfigError::new(
                "model_call",
                "no time is set: set model_call, tool_call or a tool's",
            ));
        }
        if t.model_call == Some(Duration::ZERO) {
            return Err(ConfigError::new(
                "model_call",
                "is zero: every call would time out",
            ));
        }
        if t.tool_call == Some(Duration::ZERO) {
            return Err(ConfigError::new(
                "tool_call",
                "is zero: every call would time out",
            ));
        }
        for (name, limit) in &t.tools {
            if name.is_empty() {
                return Err(ConfigError::new("tool", "names a tool with an empty name"));
            }
            if limit.is_zero() {
                return Err(ConfigError::new(
                    "tool",
                    format!("the time of `{name}` is zero: every call would time out"),
                ));
            }
        }
        Ok(self.timeout)
    }
}
