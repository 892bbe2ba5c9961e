//! What a hook sees of the run besides its request or response.

mod principal;
mod run_context;
mod run_start;
mod run_store;
mod tool;

use std::collections::HashMap;

use serde::de::DeserializeOwned;

use crate::ids::ThreadId;
use crate::message::tool_failure::ToolFailure;
use crate::message::{
    HistoryError, Message, Role, ToolCall, ToolResult, check_editable, validate_history,
};
use crate::model::Usage;
use crate::shared::Shared;

pub use principal::{MAX_PRINCIPAL_LEN, Principal, PrincipalError};
pub(crate) use run_context::{ChildRunId, ParentStore};
pub use run_context::{RunContext, SavedValueError};
pub(crate) use run_store::RunStore;
pub use tool::CallFrame;
pub(crate) use tool::LayerAnswer;
pub use tool::ToolContext;

pub(crate) use crate::pause::{Counters, Raiser, ToolAnswer};

/// What every hook sees of the run: the conversation history, the run's counters, and the
/// values the caller gave to the run ([`RunContext`], read with [`get`](Self::get)).
///
/// Hooks on the model path get `&mut Context` and may edit the history; those edits persist for
/// the rest of the run, while edits to a [`ModelRequest`](crate::ModelRequest) affect one model
/// call only. `wrap_tool_call` hooks get `&Context`, because the tool calls of one step run
/// concurrently.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub(crate) messages: Shared<Vec<Message>>,
    pub(crate) counters: Counters,
    /// Identifies the run (kept across its pauses and resumes).
    pub(crate) run_id: String,
    /// The thread the run belongs to, if any.
    pub(crate) thread_id: Option<ThreadId>,
    /// The values the caller gave to the run (shared, never copied per step).
    pub(crate) run_context: RunContext,
    /// On a resumed step: where the interrupted sequential hook is (relative to the chain level
    /// being run) and its answer.
    pub(crate) resume: Option<ResumePoint>,
    /// On a resumed tool phase: the answers by tool call id, each with the layer it is for.
    pub(crate) tool_answers: HashMap<String, Vec<LayerAnswer>>,
    /// Results hooks supplied for tool calls, which then do not run.
    pub(crate) answered: Vec<ToolResult>,
    /// The tool calls of this run (in this process) that failed, in history order.
    pub(crate) failures: Vec<ToolFailure>,
    /// The member whose sequential hook was called last: the one a panic is blamed on.
    pub(crate) running: Option<&'static str>,
    /// Where a streamed run's events go; `None` when the run is not streamed (boxed: an
    /// unstreamed run's context stays small).
    pub(crate) events: Option<Box<crate::run::RunEvents>>,
    /// The run's hold on its key in the agent's checkpointer, if the agent keeps its runs.
    pub(crate) held: Option<Box<crate::pause::Held>>,
    /// The store the run is kept in while it holds its key: its agent's, or, for a sub-agent
    /// without one, its parent's.
    pub(crate) durable: Option<RunStore>,
    /// The store's error after the run ended, for its output.
    pub(crate) cleanup_error: Option<crate::run::CleanupError>,
    /// How the last answer this run kept ended (for its output).
    pub(crate) stop_reason: Option<crate::model::StopReason>,
    /// Whether the run goes one step at a time ([`Agent::step`](crate::Agent::step)), and how
    /// far this call of it got.
    pub(crate) stepping: Stepping,
    /// For a run in a thread: what the thread had spent when the run started, and the run's
    /// own usage then (a resumed run's, charged at its pause already). Boxed: a context is
    /// moved about, and most runs have none.
    pub(crate) ledger: Option<Box<Ledger>>,
    /// The answer `after_model` reads is calls taken from the history (the input's, a jump's),
    /// not the model's: a streamed run's consumer has it already.
    pub(crate) replaying_pending: bool,
    /// What the tool calls of the step in progress spent on models of their own (a
    /// sub-agent's), told with [`ToolContext::add_usage`]: added to the run's usage when the
    /// step's calls are done. (A spawned call's context has its own, handed back when the call
    /// ends.)
    pub(crate) tool_usage: SpentByTools,
}

/// Usage the tool calls of a step report while they run (through `&Context`: calls run
/// concurrently). A lock on a value in place — no allocation per run.
#[derive(Debug, Default)]
pub(crate) struct SpentByTools(std::sync::Mutex<Usage>);

impl SpentByTools {
    fn lock(&self) -> std::sync::MutexGuard<'_, Usage> {
        // Adding counts cannot panic midway: a poisoned value is still whole.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds `usage`.
    pub(crate) fn add(&self, usage: Usage) {
        *self.lock() += usage;
    }

    /// What was reported, reset to nothing.
    pub(crate) fn take(&self) -> Usage {
        std::mem::take(&mut *self.lock())
    }
}

impl Clone for SpentByTools {
    fn clone(&self) -> Self {
        Self(std::sync::Mutex::new(*self.lock()))
    }
}

/// A thread's spending when a run of it started, and the run's usage then: the thread's now is
/// the first plus what the run spent since.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ledger {
    pub(crate) thread_before: Usage,
    pub(crate) run_before: Usage,
}

impl Ledger {
    /// The thread's spending once the run's usage is `run`.
    pub(crate) fn now(&self, run: Usage) -> Usage {
        self.thread_before + run.since(self.run_before)
    }
}

/// Whether a run goes one step at a time, and where this call of it stands: it stops at the
/// first step boundary after it has run (part of) a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Stepping {
    /// The whole run, to its end or pause.
    #[default]
    Off,
    /// One step; none begun yet in this call.
    NotStarted,
    /// One step, begun in this call (or continued: a step resumed mid-way).
    Started,
}

/// The order in which a chain runs its members' hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// `before_*` hooks: first listed first.
    Listed,
    /// `after_*` hooks: last listed first.
    Reversed,
}

/// What [`Context::enter`] decides for a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enter {
    /// Run its hook (the normal case).
    Run,
    /// It holds the interrupted hook: run it, then [`Context::leave`].
    Resumed,
    /// It ran before the interrupt: skip it.
    Skip,
}

/// The interrupted sequential hook of a resumed step, and its answer.
#[derive(Debug, Clone)]
pub(crate) struct ResumePoint {
    /// The member's position in the flattened chain, relative to the chain level being run;
    /// [`ResumePoint::ALL_RAN`] when every hook of the step ran before the pause.
    pub(crate) at: usize,
    /// `None` when the member that asked is no longer in the chain: the member at `at` (the
    /// next one) runs its hook afresh.
    pub(crate) answer: Option<serde_json::Value>,
}

impl ResumePoint {
    /// Every hook of the interrupted step ran before the pause (the member that asked, the
    /// last to run, is no longer in the chain).
    pub(crate) const ALL_RAN: usize = usize::MAX;
}

impl Context {
    /// Sends the event `make` makes to the consumer of a streamed run; makes nothing when the
    /// run is not streamed.
    pub(crate) fn emit(&self, make: impl FnOnce() -> crate::run::AgentEvent) {
        if let Some(events) = &self.events {
            events.queue.push(make());
        }
    }

    /// Resolves once the consumer of a streamed run has taken every event sent (at once when
    /// the run is not streamed).
    pub(crate) fn delivered(&self) -> crate::run::Delivered<'_> {
        crate::run::Delivered {
            queue: self.events.as_ref().map(|events| &*events.queue),
        }
    }

    /// The context of a run whose history starts with `messages`.
    ///
    /// The agent creates the context of each run; this constructor lets hooks be unit-tested.
    #[must_use]
    pub fn new(messages: impl Into<Shared<Vec<Message>>>) -> Self {
        Self {
            messages: messages.into(),
            run_id: crate::ids::fresh(),
            ..Self::default()
        }
    }

    /// The conversation history, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Edits the conversation history (summarize, trim, annotate) for the rest of the run.
    ///
    /// The edit must leave a history a provider accepts (see
    /// [`validate_history`](crate::message::validate_history)): every assistant tool call
    /// keeps exactly one result right after it (the calls of the last model answer may still
    /// wait for theirs). An edit that breaks the rule is undone and reported; `edit`'s own
    /// value is returned otherwise. Older messages may be removed or merged: the run's own
    /// messages are found again after the edit, so its answer
    /// ([`RunOutput::text`](crate::RunOutput::text)) is not lost.
    ///
    /// The request of a step is built from the history when the step begins, so an edit made
    /// in `before_model` shows from the next step on. To change the current call too, edit the
    /// request as well (a summarizer replaces old messages in both). The request is never
    /// rebuilt behind a hook's back: that would undo an earlier hook's request-only edit, such
    /// as input redaction.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::message::HistoryError;
    ///
    /// let mut cx = Context::new(vec![Message::user("Hi")]);
    /// cx.edit_history(|messages| messages.push(Message::assistant("Hello")))?;
    /// assert_eq!(cx.messages().len(), 2);
    ///
    /// // A tool result that answers no call is refused, and the history is left as it was.
    /// let orphan = cx.edit_history(|messages| {
    ///     messages.push(Message::tool(ToolResult::ok("nobody", "?")))
    /// });
    /// assert!(matches!(orphan, Err(HistoryError::OrphanResult { .. })));
    /// assert_eq!(cx.messages().len(), 2);
    /// # Ok::<(), HistoryError>(())
    /// ```
    pub fn edit_history<R>(
        &mut self,
        edit: impl FnOnce(&mut Vec<Message>) -> R,
    ) -> Result<R, HistoryError> {
        let before = self.messages.clone();
        // A history whose last calls still wait may stay so; a complete one must stay complete
        // (removing the last result would leave its call to run again).
        let complete = validate_history(&before).is_ok();
        let value = edit(&mut self.messages);
        let checked = if complete {
            validate_history(&self.messages)
        } else {
            check_editable(&self.messages)
        };
        match checked {
            Ok(()) => {
                self.counters.run_start =
                    run_start::carried(&before, &self.messages, self.counters.run_start);
                Ok(value)
            }
            Err(error) => {
                self.messages = before;
                Err(error)
            }
        }
    }

    /// Identifies this run; a resumed run keeps the id of the run that paused.
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The [`Thread`](crate::Thread) this run belongs to, if it runs in one.
    #[must_use]
    pub fn thread_id(&self) -> Option<&ThreadId> {
        self.thread_id.as_ref()
    }

    /// The values the caller gave to this run with
    /// [`Agent::with_context`](crate::Agent::with_context) (empty for a plain
    /// [`run`](crate::Agent::run)); see [`RunContext`].
    #[must_use]
    pub fn run_context(&self) -> &RunContext {
        &self.run_context
    }

    /// The run context's value of type `T`, if the caller gave one: a shortcut for
    /// `cx.run_context().get::<T>()`.
    ///
    /// ```
    /// use hookchain::{Context, RunContext};
    ///
    /// struct Tenant(&'static str);
    ///
    /// let cx = Context::new(Vec::new()).with_run_context(RunContext::new().with(Tenant("acme")));
    /// assert_eq!(cx.get::<Tenant>().map(|tenant| tenant.0), Some("acme"));
    /// assert!(cx.get::<u32>().is_none());
    /// ```
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.run_context.get::<T>()
    }

    /// This context with `run_context` as the values given to the run. The agent sets them;
    /// this lets hooks be unit-tested with a run context.
    #[must_use]
    pub fn with_run_context(mut self, run_context: RunContext) -> Self {
        self.run_context = run_context;
        self
    }

    /// The 1-based number of the current step (one model call per step); 0 in `before_agent`.
    #[must_use]
    pub fn step(&self) -> usize {
        self.counters.step
    }

    /// How many times the model has been invoked in this run (retries included).
    #[must_use]
    pub fn model_calls(&self) -> usize {
        self.counters.model_calls
    }

    /// How many tool calls have been answered in this run.
    #[must_use]
    pub fn tool_calls(&self) -> usize {
        self.counters.tool_calls
    }

    /// Tokens used by this run's model calls so far.
    #[must_use]
    pub fn usage(&self) -> Usage {
        self.counters.usage
    }

    /// The tokens the run's [`Thread`](crate::Thread) has spent so far, this run's included:
    /// every run's model calls, charged as they answer, also of runs that were given up paused
    /// or cancelled ([`Thread::spent`](crate::Thread::spent)). `None` for a run outside a
    /// thread.
    #[must_use]
    pub fn thread_usage(&self) -> Option<Usage> {
        self.ledger
            .as_ref()
            .map(|ledger| ledger.now(self.counters.usage))
    }

    /// How many runs of the same [`Thread`](crate::Thread) came before this one (0 for a run
    /// outside a thread).
    #[must_use]
    pub fn run_index(&self) -> usize {
        self.counters.runs
    }

    /// When the run resumes from an interrupt this hook raised, the answer to it.
    ///
    /// Only the hook that raised the interrupt sees it, once, on the resumed step; everywhere
    /// else this is `None`. See [`interrupt`](crate::interrupt).
    #[must_use]
    pub fn resume_value(&self) -> Option<&serde_json::Value> {
        self.resume
            .as_ref()
            .filter(|point| point.at == 0)
            .and_then(|point| point.answer.as_ref())
    }

    /// [`resume_value`](Self::resume_value), deserialized.
    #[must_use]
    pub fn resume_as<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        self.resume_value().map(|answer| T::deserialize(answer))
    }

    /// What a tool running in a task of its own reads of the run, owned: the history and the
    /// run context shared (no copy), the ids and counters; none of the loop's bookkeeping.
    #[cfg(feature = "tokio")]
    pub(crate) fn for_spawned_tool(&self) -> Context {
        Context {
            messages: self.messages.clone(),
            counters: self.counters,
            run_id: self.run_id.clone(),
            thread_id: self.thread_id.clone(),
            run_context: self.run_context.clone(),
            resume: None,
            tool_answers: HashMap::new(),
            answered: Vec::new(),
            failures: Vec::new(),
            running: None,
            events: None,
            held: None,
            durable: None,
            cleanup_error: None,
            stop_reason: None,
            stepping: Stepping::Off,
            replaying_pending: false,
            ledger: self.ledger.clone(),
            tool_usage: SpentByTools::default(),
        }
    }

    /// Adds what the step's tool calls spent on models of their own to the run's usage.
    pub(crate) fn take_tool_usage(&mut self) {
        let spent = self.tool_usage.take();
        if spent != Usage::default() {
            self.counters.usage += spent;
        }
    }

    /// Whether the member at `start..start + len` of the chain level being run runs its hook.
    ///
    /// On a resumed step, the members that ran before the interrupt do not run again
    /// ([`Enter::Skip`]); the member holding the interrupted hook runs, with the resume point
    /// made relative to it ([`Enter::Resumed`]: call [`leave`](Self::leave) after its hook).
    #[inline]
    pub(crate) fn enter(&mut self, start: usize, len: usize, order: Order) -> Enter {
        let Some(point) = &mut self.resume else {
            return Enter::Run;
        };
        if point.at == ResumePoint::ALL_RAN {
            return Enter::Skip;
        }
        let already_ran = match order {
            Order::Listed => point.at >= start + len,
            Order::Reversed => point.at < start,
        };
        if already_ran {
            return Enter::Skip;
        }
        point.at -= start;
        Enter::Resumed
    }

    /// After the resumed member's hook: everything after it runs normally.
    #[inline]
    pub(crate) fn leave(&mut self) {
        self.resume = None;
    }

    /// Supplies the result of one of the current response's tool calls (from `after_model`):
    /// the call then does not run, and the model reads `result` instead. Used to reject a call,
    /// or to answer it on the tool's behalf.
    pub fn answer_tool_call(&mut self, result: ToolResult) {
        self.answered
            .retain(|answered| answered.call_id != result.call_id);
        self.answered.push(result);
    }

    /// The tool calls of the last assistant message that have no result in the history yet.
    #[must_use]
    pub fn pending_tool_calls(&self) -> Vec<ToolCall> {
        self.pending().cloned().collect()
    }

    /// Whether [`pending_tool_calls`](Self::pending_tool_calls) has any, without copying them
    /// (the loop asks before every step).
    pub(crate) fn has_pending_tool_calls(&self) -> bool {
        self.pending().next().is_some()
    }

    fn pending(&self) -> impl Iterator<Item = &ToolCall> {
        // Only the last message before the trailing results can wait for results: a history
        // keeps every other call answered (see `edit_history`). Read from the end, this costs
        // the last group, not the whole history, every step.
        let results = self
            .messages
            .iter()
            .rev()
            .take_while(|message| message.role == Role::Tool)
            .count();
        let at = self.messages.len() - results;
        let (calls, later) = match at.checked_sub(1) {
            Some(last) => (&self.messages[last].tool_calls[..], &self.messages[at..]),
            None => (&[][..], &[][..]),
        };
        calls.iter().filter(move |call| {
            !later
                .iter()
                .any(|m| m.tool_call_id.as_deref() == Some(call.id.as_str()))
        })
    }
}
