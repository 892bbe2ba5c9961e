//! Tool call limits: at most so many calls (of every tool, or of one) per run and per thread.
//!
//! ```
//! use hookchain::builtin::tool_call_limit::{ToolCallLimit, ToolLimitExit};
//! use hookchain::{Agent, EndReason, ModelResponse, ScriptedModel, ToolCall};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let limit = ToolCallLimit::builder()
//!     .tool("search")
//!     .run_limit(1)
//!     .exit(ToolLimitExit::Continue)
//!     .build()?;
//! let search = |id: &str| ToolCall::new(id, "search", serde_json::json!({ "q": id }));
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls([search("a"), search("b")]),
//!     ModelResponse::text("done"),
//! ]);
//! let agent = Agent::builder(model).chain(limit).build()?;
//! let output = agent.run("Hi").await.unwrap();
//! // `b` got an error result telling the model not to call `search` again.
//! assert!(output.messages[3].text().contains("Do not call `search` again"));
//! assert_eq!(output.end, EndReason::Finished);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Checked in `after_model`, once the model has answered, for each call it made of the
//!   limited tool (or of any tool), in order: a call is blocked when `count + 1 > limit`, for
//!   the run limit (calls in this run) or the thread limit (calls in every run of the
//!   [`Thread`](crate::Thread)); the run limit is checked first.
//! - A call that is let through counts in both; a blocked call counts towards the run total,
//!   not the thread total (it did not run, but the run tried it).
//! - The exits, when a call is blocked: [`ToolLimitExit::Continue`] (the default) gives each
//!   blocked call an error result telling the model not to call the tool again; the other calls
//!   run, and the loop goes on. [`ToolLimitExit::End`]: no call of the answer runs; every call
//!   still gets a result (saying why it did not run); an assistant message with the counts ends
//!   the history, and the run ends ([`EndReason::Jumped`](crate::EndReason::Jumped)); the calls
//!   of the answer count as blocked. [`ToolLimitExit::Error`]: the run fails with
//!   [`ToolCallLimitExceeded`] and the answer does not enter the history.
//! - Whatever the exit, no tool call is left without its result.
//! - Calls of other tools are neither counted nor blocked (except by `End`, which runs no call
//!   of the answer). Nor are calls another `after_model` hook has already answered (they do
//!   not run): list `ToolCallLimit` *before* middleware that answer calls in `after_model` (a
//!   person's rejection, [`ToolCallRepair`](super::ToolCallRepair) for nameless calls), since
//!   `after_model` hooks run in reverse order.

mod error;
mod state;

use hookchain_macros::middleware;

pub use error::ToolCallLimitExceeded;
pub use state::{RunToolCalls, ThreadToolCalls};

use super::ConfigError;
use super::limit::{LimitScope, Limits};
use super::model_call_limit::plural;
use crate::context::Context;
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::Flow;
use crate::model::ModelResponse;

/// What [`ToolCallLimit`] does when a call is blocked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolLimitExit {
    /// Blocked calls get an error result; the others run; the loop goes on. The default.
    #[default]
    Continue,
    /// No call runs, each gets a result; an assistant message with the counts; the run ends.
    End,
    /// The run fails with [`ToolCallLimitExceeded`].
    Error,
}

/// Limits tool calls per run and per thread (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallLimit {
    /// The limited tool; `None`: every tool.
    tool: Option<String>,
    limits: Limits,
    exit: ToolLimitExit,
}

/// Builds a [`ToolCallLimit`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct ToolCallLimitBuilder {
    tool: Option<String>,
    limits: Limits,
    exit: ToolLimitExit,
}

impl ToolCallLimit {
    /// A builder for every tool, with no limit set yet (at least one is needed) and the exit
    /// [`ToolLimitExit::Continue`].
    pub fn builder() -> ToolCallLimitBuilder {
        ToolCallLimitBuilder::default()
    }

    /// Whether the limit counts `call`: a call of the limited tool that no other hook has
    /// answered already (such a call does not run).
    fn counts(&self, cx: &Context, call: &ToolCall) -> bool {
        self.tool
            .as_deref()
            .is_none_or(|limited| limited == call.name)
            && !cx.answered.iter().any(|answer| answer.call_id == call.id)
    }

    /// The limit one more call would exceed with these counts, if any (the run limit first).
    fn blocks(&self, run: u32, thread: u32) -> Option<(LimitScope, u32)> {
        self.limits.reached(run, thread)
    }

    /// What the limit is called in messages: "the run limit of 3 calls of `search`".
    fn describe(&self, scope: LimitScope, limit: u32) -> String {
        let of = self.tool.as_deref().map_or_else(
            || "tool calls".to_owned(),
            |tool| format!("calls of `{tool}`"),
        );
        let of = if limit == 1 {
            of.replacen("calls", "call", 1)
        } else {
            of
        };
        format!("the {scope} limit of {limit} {of}")
    }
}

impl ToolCallLimitBuilder {
    /// Limits only the calls of `tool` (by default, the calls of every tool count).
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// At most `limit` calls per run.
    pub fn run_limit(mut self, limit: u32) -> Self {
        self.limits.run = Some(limit);
        self
    }

    /// At most `limit` calls per thread, over all its runs.
    pub fn thread_limit(mut self, limit: u32) -> Self {
        self.limits.thread = Some(limit);
        self
    }

    /// What happens when a call is blocked.
    pub fn exit(mut self, exit: ToolLimitExit) -> Self {
        self.exit = exit;
        self
    }

    /// The middleware; an error names a setting that cannot work: no limit at all, a limit of
    /// 0, or an empty tool name.
    pub fn build(self) -> Result<ToolCallLimit, ConfigError> {
        let limits = self.limits.checked()?;
        if self
            .tool
            .as_deref()
            .is_some_and(|tool| tool.trim().is_empty())
        {
            return Err(ConfigError::new("tool", "the tool's name is empty"));
        }
        Ok(ToolCallLimit {
            tool: self.tool,
            limits,
            exit: self.exit,
        })
    }
}

#[middleware(crate = crate, live_stream, state = RunToolCalls, thread_state = ThreadToolCalls)]
impl ToolCallLimit {
    /// Counts the answer's calls and blocks those over a limit.
    #[hook(after_model, jumps = [end])]
    fn check(
        &self,
        cx: &mut Context,
        run: &mut RunToolCalls,
        thread: &mut ThreadToolCalls,
        response: &mut ModelResponse,
    ) -> Result<Flow, ToolCallLimitExceeded> {
        let calls = &response.message.tool_calls;
        // First, without touching anything: does a call trip a limit? (The common answer,
        // under the limits, costs no allocation.)
        let (mut run_count, mut thread_count) = (run.count, thread.0);
        let mut first_block = None;
        for _ in calls.iter().filter(|call| self.counts(cx, call)) {
            if let Some(blocked) = self.blocks(run_count, thread_count) {
                first_block.get_or_insert(blocked);
                run_count += 1;
            } else {
                run_count += 1;
                thread_count += 1;
            }
        }
        let Some((scope, limit)) = first_block else {
            (run.count, thread.0) = (run_count, thread_count);
            return Ok(Flow::Continue);
        };
        tracing::warn!(
            tool = self.tool.as_deref().unwrap_or("*"),
            %scope,
            limit,
            run_calls = run_count,
            thread_calls = thread_count,
            exit = ?self.exit,
            "tool call limit reached"
        );
        match self.exit {
            ToolLimitExit::Error => {
                run.count = run_count;
                Err(ToolCallLimitExceeded {
                    tool: self.tool.clone(),
                    scope,
                    limit,
                    run_calls: run.count,
                    thread_calls: thread.0,
                })
            }
            ToolLimitExit::Continue => {
                // Which calls count, decided before answering any (an answer is a result
                // supplied by a hook, which `counts` looks at).
                let counted: Vec<bool> = calls.iter().map(|call| self.counts(cx, call)).collect();
                for (call, _) in calls.iter().zip(counted).filter(|(_, counted)| *counted) {
                    if let Some((scope, limit)) = self.blocks(run.count, thread.0) {
                        cx.answer_tool_call(ToolResult::error(
                            &call.id,
                            format!(
                                "Tool call limit exceeded: {} is reached, so this call of `{}` \
                                 did not run. Do not call `{}` again.",
                                self.describe(scope, limit),
                                call.name,
                                call.name,
                            ),
                        ));
                    } else {
                        thread.0 += 1;
                    }
                    run.count += 1;
                }
                Ok(Flow::Continue)
            }
            ToolLimitExit::End => {
                // Every call of the answer counts as blocked: none runs.
                let counted = calls.iter().filter(|call| self.counts(cx, call)).count();
                run.count += u32::try_from(counted).unwrap_or(u32::MAX);
                let limit = self.describe(scope, limit);
                for call in calls {
                    cx.answer_tool_call(ToolResult::error(
                        &call.id,
                        format!(
                            "Tool call limit exceeded: {limit} is reached, so no call of this \
                             answer ran (this one was to `{}`).",
                            call.name
                        ),
                    ));
                }
                run.closing = Some(format!(
                    "Tool call limit reached: {limit} allows no more ({} call{} counted in this \
                     run, {} in this thread), so the run ends here.",
                    run.count,
                    plural(run.count),
                    thread.0,
                ));
                Ok(Flow::end())
            }
        }
    }

    /// After a run ended by the limit: the closing message, after the calls' results.
    #[hook(after_agent)]
    fn close(&self, cx: &mut Context, run: &mut RunToolCalls) {
        let Some(text) = run.closing.take() else {
            return;
        };
        if let Err(error) = cx.edit_history(|messages| messages.push(Message::assistant(text))) {
            tracing::warn!(%error, "tool call limit: the closing message was refused");
        }
    }
}
