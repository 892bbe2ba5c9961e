//! Retries: [`ModelRetry`] sends a failed model call again, [`ToolRetry`] a failed tool call,
//! after a growing, jittered wait.
//!
//! # The rules
//!
//! - **How often.** At most `max_retries` retries (default 2), so `max_retries + 1` attempts.
//! - **How long between.** Before retry `n` (from 0): `initial_delay × factor^n` (defaults
//!   500 ms and 2), capped at `max_delay` (default 30 s), then jittered by ±25 % (see
//!   [`Jitter`]; never below zero). A model error with a
//!   [`retry_after`](crate::ModelError::retry_after) (the provider's `Retry-After`) waits at
//!   least that long, even beyond `max_delay`, up to `max_retry_after` (default 60 s): a
//!   `Retry-After` longer than that is not waited for, the retry gives up at once (see
//!   [`ModelRetryBuilder::max_retry_after`]). The waits run on tokio's timer.
//! - **What is retried.** A predicate over the classified error, `retry_on`: by default the
//!   [retryable kinds](crate::ModelErrorKind::is_retryable) of model errors (rate limited,
//!   overloaded, timed out, connection), and the [`ToolFailureKind`]s `Failed` and `TimedOut`
//!   of tool calls (a wrap sees a tool's failure, classified, in
//!   [`ToolResult::failure`](crate::ToolResult::failure)). An interrupt is never retried: on
//!   the model path it is not a model error, on the tool path a paused result
//!   ([`is_paused`](crate::ToolResult::is_paused)) is passed on as it is. Errors of other
//!   middleware pass through unchanged.
//! - **When it gives up** (retries used up, or an error it does not retry): [`OnFailure`] —
//!   the error as it is (the default), or go on with a message that says what failed (an
//!   assistant message that ends the run for a model call, an error result the model reads
//!   for a tool call), or a message of your own.
//! - **Which tools.** [`ToolRetry`] retries every tool, or only those listed.
//!
//! Each retry is a `tracing` warning (what failed, the attempt, the wait); giving up after
//! retries is one too (an error not retried at all is a debug event).
//! A retry holds no state between calls: the attempts of a call are counted in its own future.

mod backoff;
mod model;
mod tool;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use backoff::Jitter;
pub use model::{ModelRetry, ModelRetryBuilder};
pub use tool::{ToolRetry, ToolRetryBuilder};

use backoff::Backoff;

use crate::builtin::ConfigError;
use crate::tool::ToolFailureKind;

/// What a retry does when it gives up on a failure of type `E`
/// ([`ModelError`](crate::ModelError) or [`ToolFailure`](crate::tool::ToolFailure)).
#[derive(Default)]
#[non_exhaustive]
pub enum OnFailure<E: ?Sized> {
    /// Pass the failure on: the model call fails with its error (the run ends with it unless
    /// a middleware outside handles it), a tool call keeps its error result. The default.
    #[default]
    Error,
    /// Go on with a short message that says what failed (the kind of failure, the number of
    /// attempts; no internal detail): for a model call, an assistant answer (which ends the
    /// run, as any answer without tool calls); for a tool call, the error result's text.
    Continue,
    /// Go on with the text `format(failure, attempts)` as in [`Continue`](Self::Continue).
    Format(Formatter<E>),
}

/// The text an [`OnFailure::Format`] makes of a failure and the number of attempts.
pub type Formatter<E> = Arc<dyn Fn(&E, u32) -> String + Send + Sync>;

impl<E: ?Sized> OnFailure<E> {
    /// [`OnFailure::Format`] with `format`.
    pub fn format(format: impl Fn(&E, u32) -> String + Send + Sync + 'static) -> Self {
        OnFailure::Format(Arc::new(format))
    }

    /// The text to go on with, or `None` to pass the failure on.
    fn text(&self, failure: &E, attempts: u32, default: impl FnOnce() -> String) -> Option<String> {
        match self {
            OnFailure::Error => None,
            OnFailure::Continue => Some(default()),
            OnFailure::Format(format) => Some(format(failure, attempts)),
        }
    }
}

impl<E: ?Sized> Clone for OnFailure<E> {
    fn clone(&self) -> Self {
        match self {
            OnFailure::Error => OnFailure::Error,
            OnFailure::Continue => OnFailure::Continue,
            OnFailure::Format(format) => OnFailure::Format(Arc::clone(format)),
        }
    }
}

impl<E: ?Sized> fmt::Debug for OnFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnFailure::Error => "Error",
            OnFailure::Continue => "Continue",
            OnFailure::Format(_) => "Format(..)",
        })
    }
}

/// The settings both retries share, as their builders collect them.
#[derive(Debug, Clone)]
struct RetrySettings {
    max_retries: u32,
    initial_delay: Duration,
    factor: f64,
    max_delay: Duration,
    jitter: Jitter,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_retries: 2,
            initial_delay: Backoff::DEFAULT_INITIAL,
            factor: Backoff::DEFAULT_FACTOR,
            max_delay: Backoff::DEFAULT_MAX_DELAY,
            jitter: Jitter::Random,
        }
    }
}

impl RetrySettings {
    fn backoff(&self) -> Result<Backoff, ConfigError> {
        Backoff::new(self.initial_delay, self.factor, self.max_delay, self.jitter)
    }
}

/// The setters of the settings both retry builders share.
macro_rules! retry_setters {
    () => {
        /// At most this many retries (default 2); 0 turns retrying off.
        #[must_use]
        pub fn max_retries(mut self, max_retries: u32) -> Self {
            self.settings.max_retries = max_retries;
            self
        }

        /// The wait before the first retry (default 500 ms).
        #[must_use]
        pub fn initial_delay(mut self, delay: ::std::time::Duration) -> Self {
            self.settings.initial_delay = delay;
            self
        }

        /// How much each wait grows over the one before (default 2; at least 1).
        #[must_use]
        pub fn factor(mut self, factor: f64) -> Self {
            self.settings.factor = factor;
            self
        }

        /// The longest wait before jitter (default 30 s; at least `initial_delay`). A
        /// provider's `Retry-After` may ask for longer, and a model retry honours it up to its
        /// `max_retry_after`.
        #[must_use]
        pub fn max_delay(mut self, delay: ::std::time::Duration) -> Self {
            self.settings.max_delay = delay;
            self
        }

        /// How the waits vary (default [`Jitter::Random`](crate::builtin::retry::Jitter::Random),
        /// ±25 %).
        #[must_use]
        pub fn jitter(mut self, jitter: $crate::builtin::retry::Jitter) -> Self {
            self.settings.jitter = jitter;
            self
        }
    };
}
use retry_setters;

/// The tool failures retried by default: the tool failed or timed out (maybe a passing fault);
/// not a bad call (unknown tool, bad arguments, a message for the model), a panic (a bug) or a
/// hook's error.
fn retryable_tool_failure(kind: ToolFailureKind) -> bool {
    matches!(kind, ToolFailureKind::Failed | ToolFailureKind::TimedOut)
}
