//! [`ToolRetry`]: a failed tool call, run again after a wait.

use std::fmt;
use std::sync::Arc;

use hookchain_macros::middleware;

use super::backoff::Backoff;
use super::{OnFailure, RetrySettings, retry_setters, retryable_tool_failure};
use crate::builtin::ConfigError;
use crate::context::ToolContext;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::ToolNext;
use crate::tool::ToolFailure;

/// Which tool failures a [`ToolRetry`] retries.
type RetryOn = Arc<dyn Fn(&ToolFailure) -> bool + Send + Sync>;

/// Runs a failed tool call again, after a growing, jittered wait (the rules are in the
/// [module docs](super)).
///
/// ```
/// use hookchain::builtin::ToolRetry;
/// use hookchain::tool::ToolFailureKind;
///
/// let retry = ToolRetry::builder()
///     .tools(["search", "fetch_page"])
///     .max_retries(1)
///     .retry_on(|failure| failure.kind() != ToolFailureKind::InvalidArguments)
///     .build()?;
/// # let _ = hookchain::chain![retry];
/// # Ok::<(), hookchain::builtin::ConfigError>(())
/// ```
///
/// It retries what its inner layers and the tool return as a classified failure
/// ([`ToolResult::failure`]); an error result without one (written by a hook as plain text) is
/// passed on, and so is a paused call.
pub struct ToolRetry {
    max_retries: u32,
    backoff: Backoff,
    /// The tools retried; `None` for all.
    tools: Option<Vec<String>>,
    retry_on: Option<RetryOn>,
    on_failure: OnFailure<ToolFailure>,
}

impl ToolRetry {
    /// The defaults: every tool, 2 retries of failed and timed-out calls, waits of 500 ms × 2^n
    /// up to 30 s with random jitter, the last error result kept when it gives up.
    #[must_use]
    pub fn new() -> Self {
        // The default settings are valid.
        Self::builder().build().unwrap_or_else(|_| unreachable!())
    }

    /// A builder, from the defaults.
    #[must_use]
    pub fn builder() -> ToolRetryBuilder {
        ToolRetryBuilder {
            settings: RetrySettings::default(),
            tools: None,
            retry_on: None,
            on_failure: OnFailure::Error,
        }
    }

    fn applies_to(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|name| name == tool))
    }

    fn retries(&self, failure: &ToolFailure) -> bool {
        match &self.retry_on {
            Some(retry_on) => retry_on(failure),
            None => retryable_tool_failure(failure.kind()),
        }
    }

    /// The result once this retry gives up on `result` (which failed) after `attempts`.
    fn give_up(&self, mut result: ToolResult, attempts: u32) -> ToolResult {
        let Some(failure) = result.failure() else {
            return result;
        };
        if attempts > 1 {
            tracing::warn!(
                tool = failure.tool(),
                attempts,
                kind = ?failure.kind(),
                error = %failure.for_log(),
                "ToolRetry: giving up on the tool call"
            );
        } else {
            tracing::debug!(tool = failure.tool(), kind = ?failure.kind(), "ToolRetry: a failure not retried");
        }
        let text = self.on_failure.text(failure, attempts, || {
            format!(
                "{} (gave up after {attempts} attempt{})",
                failure.message(),
                if attempts == 1 { "" } else { "s" }
            )
        });
        if let Some(text) = text {
            result.content = text.into();
        }
        result
    }
}

impl Default for ToolRetry {
    fn default() -> Self {
        Self::new()
    }
}

#[middleware(crate = crate)]
impl ToolRetry {
    /// Calls `next` until the call succeeds, pauses, fails in a way not retried, or the
    /// retries are used up.
    #[hook(wrap_tool_call)]
    async fn retry(
        &self,
        cx: ToolContext<'_>,
        mut call: ToolCall,
        mut next: impl ToolNext,
    ) -> ToolResult {
        if !self.applies_to(&call.name) {
            return next.call(cx, call).await;
        }
        let mut retry = 0;
        loop {
            let last = retry == self.max_retries;
            let attempt = if last {
                ToolCall::new(
                    std::mem::take(&mut call.id),
                    std::mem::take(&mut call.name),
                    std::mem::take(&mut call.arguments),
                )
            } else {
                call.clone()
            };
            let result = next.call(cx, attempt).await;
            // A success, a paused call (an interrupt is never retried), or an error result
            // that is not a classified failure: passed on as it is.
            let Some(failure) = result.failure().filter(|_| !result.is_paused()) else {
                return result;
            };
            if last || !self.retries(failure) {
                return self.give_up(result, retry + 1);
            }
            let delay = self.backoff.delay(retry, None);
            tracing::warn!(
                tool = failure.tool(),
                attempt = retry + 1,
                retries_left = self.max_retries - retry,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                kind = ?failure.kind(),
                error = %failure.for_log(),
                "ToolRetry: the tool call failed; retrying"
            );
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }
}

impl fmt::Debug for ToolRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRetry")
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("tools", &self.tools)
            .field("retry_on", &self.retry_on.as_ref().map(|_| ".."))
            .field("on_failure", &self.on_failure)
            .finish()
    }
}

/// Builds a [`ToolRetry`]; [`build`](Self::build) checks the settings.
pub struct ToolRetryBuilder {
    settings: RetrySettings,
    tools: Option<Vec<String>>,
    retry_on: Option<RetryOn>,
    on_failure: OnFailure<ToolFailure>,
}

impl ToolRetryBuilder {
    retry_setters!();

    /// Retries only the calls of these tools (default: every tool).
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Retries the failures for which `retry_on` is true, instead of the kinds `Failed` and
    /// `TimedOut`.
    #[must_use]
    pub fn retry_on(
        mut self,
        retry_on: impl Fn(&ToolFailure) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_on = Some(Arc::new(retry_on));
        self
    }

    /// What to do when giving up (default [`OnFailure::Error`]: the last error result).
    #[must_use]
    pub fn on_failure(mut self, on_failure: OnFailure<ToolFailure>) -> Self {
        self.on_failure = on_failure;
        self
    }

    /// The retry, or the first setting that cannot work: `factor` below 1 or not finite,
    /// `max_delay` below `initial_delay`, `tools` empty or naming an empty tool.
    pub fn build(self) -> Result<ToolRetry, ConfigError> {
        if let Some(tools) = &self.tools {
            if tools.is_empty() {
                return Err(ConfigError::new(
                    "tools",
                    "lists no tool: leave it unset to retry every tool",
                ));
            }
            if tools.iter().any(String::is_empty) {
                return Err(ConfigError::new("tools", "names a tool with an empty name"));
            }
        }
        Ok(ToolRetry {
            max_retries: self.settings.max_retries,
            backoff: self.settings.backoff()?,
            tools: self.tools,
            retry_on: self.retry_on,
            on_failure: self.on_failure,
        })
    }
}

impl fmt::Debug for ToolRetryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRetryBuilder")
            .field("settings", &self.settings)
            .field("tools", &self.tools)
            .field("on_failure", &self.on_failure)
            .finish_non_exhaustive()
    }
}
