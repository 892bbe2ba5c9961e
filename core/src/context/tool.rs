//! What a `wrap_tool_call` hook sees: the run, and the one tool call it wraps.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::de::DeserializeOwned;

use super::Context;
use crate::message::final_answer::FinalAnswer;
use crate::pause::{Interruption, Raiser, ToolAnswer};
use crate::run::ToolProgress;

/// The context of one tool call, as a `wrap_tool_call` hook sees it: the run's [`Context`]
/// (through `Deref`), the call's id, and — on a resumed step — the answer to the interrupt
/// *this* hook raised for this call.
///
/// It is `Copy`: pass it on to `next.call(cx, call)` as it is. Each layer of the tool onion
/// gets its own view, so an answer reaches only the hook that asked for it, even when two
/// gating middleware (or two instances of one) wrap the same call.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    run: &'a Context,
    frame: &'a CallFrame,
    /// The position (in the flattened chain) of the member holding this view.
    member: usize,
    /// The answer meant for the holder of this view, if any, with what it was asked.
    answer: Option<&'a LayerAnswer>,
}

/// The answer to an interrupt a layer of a tool call raised, with the payload it was raised
/// with: what the layer reads when the call runs again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LayerAnswer {
    pub(crate) raiser: Raiser,
    pub(crate) answer: serde_json::Value,
    pub(crate) asked: serde_json::Value,
}

/// What the agent keeps for one tool call while it runs through the onion: its id, the answers
/// meant for the layers on its path, and the pause, if one of them raised an interrupt.
///
/// The pause travels out of band, not through the values the layers return: whatever a wrap
/// does with what `next` gave it (turn it into an error result, retry, cache), an interrupt
/// raised inside still pauses the run.
///
/// The agent makes one per tool call; make one yourself only to call a `wrap_tool_call` hook
/// or a tool onion outside an agent (a unit test, a benchmark), with [`ToolContext::new`].
pub struct CallFrame {
    call_id: String,
    tool: String,
    answers: Vec<LayerAnswer>,
    pause: OnceLock<Interruption>,
    finish: OnceLock<FinalAnswer>,
}

impl fmt::Debug for CallFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallFrame")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl CallFrame {
    /// The frame of the call `call_id` of the tool `tool`, with no answers (not a resumed
    /// call).
    pub fn new(call_id: impl Into<String>, tool: impl Into<String>) -> Self {
        Self::with_answers(call_id.into(), tool.into(), Vec::new())
    }

    pub(crate) fn with_answers(call_id: String, tool: String, answers: Vec<LayerAnswer>) -> Self {
        CallFrame {
            call_id,
            tool,
            answers,
            pause: OnceLock::new(),
            finish: OnceLock::new(),
        }
    }

    /// The call's id, its tool, the interrupt raised on its path, if any (the first, if a
    /// retrying wrap made several), and the answer it ends the run with, if any.
    pub(crate) fn into_parts(self) -> (String, String, Option<Interruption>, Option<FinalAnswer>) {
        (
            self.call_id,
            self.tool,
            self.pause.into_inner(),
            self.finish.into_inner(),
        )
    }
}

impl ToolAnswer {
    /// The tool call.
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Who the answer is for.
    #[must_use]
    pub fn raiser(&self) -> Raiser {
        self.raiser
    }

    /// The answer.
    #[must_use]
    pub fn answer(&self) -> &serde_json::Value {
        &self.answer
    }
}

impl<'a> ToolContext<'a> {
    /// The context of the call `frame` in the run `run`. The agent makes it; make one yourself
    /// only to call a `wrap_tool_call` hook outside an agent (a unit test, a benchmark).
    pub fn new(run: &'a Context, frame: &'a CallFrame) -> Self {
        ToolContext {
            run,
            frame,
            member: 0,
            answer: None,
        }
    }

    /// The position of the member holding this view in the flattened chain (where a chain
    /// called as a hook places its members).
    pub(crate) fn member(&self) -> usize {
        self.member
    }

    /// The run's context.
    #[must_use]
    pub fn run(&self) -> &'a Context {
        self.run
    }

    /// The id of the tool call.
    #[must_use]
    pub fn call_id(&self) -> &'a str {
        &self.frame.call_id
    }

    /// A key unique to this tool call in this run, the same every time the call runs: the run's
    /// id and the call's id (`<run id>:<call id>`). With durability
    /// [`EveryStep`](crate::Durability::EveryStep), a call that was in flight when its worker
    /// died runs again in the worker that resumes the run (a call that completed never does):
    /// a tool with effects outside the run (a payment, an email) passes this key to the system
    /// it calls, or records it, to tell a repeated call from a new one.
    #[must_use]
    pub fn idempotency_key(&self) -> String {
        format!("{}:{}", self.run.run_id, self.frame.call_id)
    }

    /// The name of the tool called.
    #[must_use]
    pub fn tool(&self) -> &'a str {
        &self.frame.tool
    }

    /// Tells a streamed run's consumer how far the call got: `progress`, out of `total` if
    /// known, doing `message` ([`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress));
    /// outside a streamed run, the run context's [`ProgressSink`](crate::ProgressSink), if it
    /// has one (a call served over MCP: its client). Does nothing (and allocates nothing)
    /// when there is neither.
    ///
    /// The event reaches the consumer while the call goes on (when the tool next waits); a
    /// consumer that is slower than the reports holds the run back, as with every event.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let report = || {
            let report = ToolProgress::new(self.call_id(), self.tool(), progress, total);
            match message {
                Some(message) => report.with_message(message),
                None => report,
            }
        };
        if self.run.events.is_some() {
            self.run
                .emit(|| crate::run::AgentEvent::ToolProgress(report()));
        } else if let Some(sink) = self.run.get::<crate::run::ProgressSink>() {
            sink.report(report());
        }
    }

    /// Logs `message` at `level` for whoever called: to `tracing` (target `hookchain::tool`,
    /// with the tool and the call), and to the run context's
    /// [`LogSink`](crate::LogSink) if it has one (a call served over MCP: its client, at
    /// the level it asked for). Costs nothing but the `tracing` check when neither listens.
    pub fn log(&self, level: crate::run::LogLevel, message: impl Into<String>) {
        use crate::run::LogLevel;
        let sink = self.run.get::<crate::run::LogSink>();
        let traced = match level {
            LogLevel::Debug => tracing::enabled!(target: "hookchain::tool", tracing::Level::DEBUG),
            LogLevel::Info | LogLevel::Notice => {
                tracing::enabled!(target: "hookchain::tool", tracing::Level::INFO)
            }
            LogLevel::Warning => tracing::enabled!(target: "hookchain::tool", tracing::Level::WARN),
            _ => tracing::enabled!(target: "hookchain::tool", tracing::Level::ERROR),
        };
        if sink.is_none() && !traced {
            return;
        }
        let message = message.into();
        let (tool, call) = (self.tool(), self.call_id());
        match level {
            LogLevel::Debug => tracing::debug!(target: "hookchain::tool", tool, call, "{message}"),
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: "hookchain::tool", tool, call, "{message}");
            }
            LogLevel::Warning => tracing::warn!(target: "hookchain::tool", tool, call, "{message}"),
            _ => tracing::error!(target: "hookchain::tool", tool, call, "{message}"),
        }
        if let Some(sink) = sink {
            sink.log(crate::run::ToolLog::new(call, tool, level, message));
        }
    }

    /// Ends the run with `answer` once the step's tool calls are done: it enters the history as
    /// the assistant's answer (after the calls' results), and the model is not called again.
    /// The first answer given in a step wins (calls run concurrently: in call order when
    /// several calls give one). The call's own result still goes to the history and to the
    /// wraps around it.
    pub fn end_run_with(&self, answer: FinalAnswer) {
        let _ = self.frame.finish.set(answer);
    }

    /// Counts `usage` — tokens this call spent on a model of its own (a sub-agent's run, a
    /// tool that asks a model) — in the run's usage, with the model calls of the run's own:
    /// in [`RunOutput::usage`](crate::RunOutput::usage), the thread's ledger, and the budgets
    /// of the steps after this one.
    pub fn add_usage(&self, usage: crate::model::Usage) {
        self.run.tool_usage.add(usage);
    }

    /// When the run resumes from an interrupt this hook raised for this call, the answer to
    /// it; `None` everywhere else.
    ///
    /// The answer stays this hook's for the rest of the step: when an inner layer interrupts
    /// later, this hook reads its own answer again on the next resume.
    #[must_use]
    pub fn resume_value(&self) -> Option<&'a serde_json::Value> {
        self.answer.map(|answered| &answered.answer)
    }

    /// [`resume_value`](Self::resume_value), deserialized.
    pub fn resume_as<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        self.resume_value().map(T::deserialize)
    }

    /// When the run resumes from an interrupt this hook (or tool) raised for this call, the
    /// payload it raised it with, as the checkpoint kept it; `None` everywhere else.
    ///
    /// What a layer needs to go on that is not the answer's to give: a tool that paused on
    /// behalf of something else (a sub-agent's own checkpoint, say) finds it here. The
    /// payload is as trusted as the checkpoint (a checkpoint that passed through a client is
    /// signed: see [`Checkpoint`](crate::Checkpoint)); the answer is whatever the client sent.
    #[must_use]
    pub fn interrupt_payload(&self) -> Option<&'a serde_json::Value> {
        self.answer.map(|answered| &answered.asked)
    }

    /// The view of the layer `raiser`: its own answer, none of the others'.
    #[inline]
    pub(crate) fn view(self, raiser: Raiser) -> Self {
        let answer = if self.frame.answers.is_empty() {
            None
        } else {
            self.frame
                .answers
                .iter()
                // The latest, should a layer have been answered twice.
                .rfind(|answered| answered.raiser == raiser)
        };
        let member = match raiser {
            Raiser::Member(at) => at,
            Raiser::Tool => self.member,
        };
        ToolContext {
            answer,
            member,
            ..self
        }
    }

    /// Records an interrupt raised on the call's path; the first one wins.
    pub(crate) fn pause(&self, interruption: Interruption) {
        // A second interrupt on one call (a wrap that retried after the first) is dropped:
        // the run pauses for the first, and the retried layers ask again on resume.
        let _ = self.frame.pause.set(interruption);
    }
}

impl Deref for ToolContext<'_> {
    type Target = Context;

    fn deref(&self) -> &Context {
        self.run
    }
}

impl fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.frame.call_id)
            .field("resume_value", &self.resume_value())
            .finish_non_exhaustive()
    }
}
