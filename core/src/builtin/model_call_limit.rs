//! Model call limits: at most so many model calls per run and per thread.
//!
//! ```
//! use hookchain::builtin::{LimitExit, ModelCallLimit};
//! use hookchain::{Agent, EndReason, ModelResponse, ScriptedModel, ToolCall};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let limit = ModelCallLimit::builder()
//!     .run_limit(1)
//!     .thread_limit(50)
//!     .exit(LimitExit::End)
//!     .build()?;
//! let model = ScriptedModel::new([ModelResponse::tool_calls([ToolCall::new(
//!     "c1",
//!     "missing_tool",
//!     serde_json::json!({}),
//! )])]);
//! let agent = Agent::builder(model).chain(limit).build()?;
//! let output = agent.run("Hi").await.unwrap();
//! assert_eq!(output.end, EndReason::Jumped);
//! assert_eq!(output.model_calls, 1);
//! assert!(output.text().unwrap().contains("run limit of 1 model call"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Checked in `before_model`, before each model call: the call is refused when
//!   `count >= limit`, for the run limit (calls so far in this run) and for the thread limit
//!   (calls so far in every run of the [`Thread`](crate::Thread)); the run limit is checked
//!   first. A call that is let through counts in both.
//! - The run count is run-scoped state, counted from zero at every run; the thread count is
//!   thread-scoped state, kept across the thread's runs (both are checkpointed).
//! - When a limit trips, [`LimitExit::End`] (the default) adds an assistant message naming the
//!   limit and both counts and ends the run ([`EndReason::Jumped`](crate::EndReason::Jumped));
//!   [`LimitExit::Error`] fails the run with [`ModelCallLimitExceeded`].
//! - A model call is a step that gets past this hook towards the model: retries a
//!   `wrap_model_call` makes inside one step are not counted here (see
//!   [`Context::model_calls`] for those). List it after `before_model` hooks that answer in
//!   the model's place (a cache of answers), so that their answers are not counted.

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

use super::ConfigError;
use super::limit::{LimitExit, LimitScope, Limits};
use crate::context::Context;
use crate::message::Message;
use crate::middleware::Flow;

/// Limits model calls per run and per thread (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCallLimit {
    limits: Limits,
    exit: LimitExit,
}

/// Builds a [`ModelCallLimit`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct ModelCallLimitBuilder {
    limits: Limits,
    exit: LimitExit,
}

/// Model calls made in the current run (run-scoped state of [`ModelCallLimit`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunModelCalls(pub u32);

/// Model calls made in every run of the thread (thread-scoped state of [`ModelCallLimit`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadModelCalls(pub u32);

/// The error of [`LimitExit::Error`]: a model call limit was reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "model call limit reached: {scope} limit of {limit} ({run_calls} calls in this run, \
     {thread_calls} in the thread)"
)]
#[non_exhaustive]
pub struct ModelCallLimitExceeded {
    /// The limit that tripped.
    pub scope: LimitScope,
    /// Its value.
    pub limit: u32,
    /// Model calls made in the run.
    pub run_calls: u32,
    /// Model calls made in the thread.
    pub thread_calls: u32,
}

impl ModelCallLimit {
    /// A builder with no limit set yet (at least one is needed) and the exit
    /// [`LimitExit::End`].
    pub fn builder() -> ModelCallLimitBuilder {
        ModelCallLimitBuilder::default()
    }

    /// The limit a call would exceed with these counts, if any (the run limit first).
    fn tripped(&self, run: u32, thread: u32) -> Option<(LimitScope, u32)> {
        self.limits.reached(run, thread)
    }
}

impl ModelCallLimitBuilder {
    /// At most `limit` model calls per run.
    pub fn run_limit(mut self, limit: u32) -> Self {
        self.limits.run = Some(limit);
        self
    }

    /// At most `limit` model calls per thread, over all its runs.
    pub fn thread_limit(mut self, limit: u32) -> Self {
        self.limits.thread = Some(limit);
        self
    }

    /// What happens when a limit trips.
    pub fn exit(mut self, exit: LimitExit) -> Self {
        self.exit = exit;
        self
    }

    /// The middleware; an error names a setting that cannot work: no limit at all, or a limit
    /// of 0.
    pub fn build(self) -> Result<ModelCallLimit, ConfigError> {
        let limits = self.limits.checked()?;
        Ok(ModelCallLimit {
            limits,
            exit: self.exit,
        })
    }
}

#[middleware(crate = crate, live_stream, state = RunModelCalls, thread_state = ThreadModelCalls)]
impl ModelCallLimit {
    /// Refuses the call when a limit is reached; counts it otherwise.
    #[hook(before_model, jumps = [end])]
    fn check(
        &self,
        cx: &mut Context,
        run: &mut RunModelCalls,
        thread: &mut ThreadModelCalls,
    ) -> Result<Flow, ModelCallLimitExceeded> {
        let Some((scope, limit)) = self.tripped(run.0, thread.0) else {
            run.0 += 1;
            thread.0 += 1;
            return Ok(Flow::Continue);
        };
        let exceeded = ModelCallLimitExceeded {
            scope,
            limit,
            run_calls: run.0,
            thread_calls: thread.0,
        };
        tracing::warn!(
            %scope,
            limit,
            run_calls = run.0,
            thread_calls = thread.0,
            exit = ?self.exit,
            "model call limit reached"
        );
        match self.exit {
            LimitExit::Error => Err(exceeded),
            LimitExit::End => {
                let text = format!(
                    "Model call limit reached: the {scope} limit of {limit} model call{} \
                     allows no more ({} in this run, {} in this thread), so the run ends here.",
                    plural(limit),
                    exceeded.run_calls,
                    exceeded.thread_calls,
                );
                // No call waits for a result before a model call, so the edit keeps the
                // history valid; were it refused, the run still ends (without the note).
                if let Err(error) =
                    cx.edit_history(|messages| messages.push(Message::assistant(text)))
                {
                    tracing::warn!(%error, "model call limit: the closing message was refused");
                }
                Ok(Flow::end())
            }
        }
    }
}

/// `"s"` unless there is one.
pub(crate) fn plural(count: u32) -> &'static str {
    if count == 1 { "" } else { "s" }
}
