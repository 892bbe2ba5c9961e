//! The ways into the loop: a new run, a run in a thread, and what every way shares — the key
//! taken, the loop driven in its span and lease, the thread charged and kept, the output made.
//! (Resuming, the other way in, is `resume.rs`.)

use std::future::Future;
use std::sync::Arc;

use tracing::Instrument;
use tracing::instrument::Instrumented;

use super::carry_over::carry_thread_state;
use super::durable::{self, Durable, ReleaseOnDrop};
use super::leased::{Leased, Renewing};
use super::run_loop::{Ending, Entry, States};
use super::{Agent, EndReason, IntoRunInput, PauseMark, RunInput, RunOutput, Thread, ThreadError};
use crate::context::{ChildRunId, Context, Ledger, ParentStore, RunContext, RunStore};
use crate::error::Error;
use crate::interrupt::{CheckpointError, Members, ResumeError};
use crate::message::{HistoryError, Message, check_editable, close_interior};
use crate::middleware::Middleware;
use crate::model::{Model, Usage};
use crate::pause::Held;
use crate::run::{EventQueue, RunEvents};
use crate::shared::Shared;
use crate::telemetry;
use crate::thread::THREAD_FORMAT;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs the agent on `input` until the model answers without calling tools, a hook jumps to
    /// the end, an interrupt pauses the run, or [`max_steps`](super::AgentBuilder::max_steps) is
    /// reached.
    ///
    /// Order of the hooks: see [`Middleware`]. Tool failures become error results the model
    /// reads. An error or a panic in a hook, or an error of the model, ends the loop;
    /// `after_agent` still runs, then the error is returned (see *Panics and cancellation* in
    /// [`middleware`](crate::middleware)). A paused run ends with [`EndReason::Interrupted`] and
    /// a [`Checkpoint`](crate::interrupt::Checkpoint) to [`resume`](Self::resume) from.
    ///
    /// A tool call of the input left without a result by a later message gets an error result
    /// right after it (the history a provider accepts); calls of the input's last message pass
    /// every `after_model` hook as a model's answer would (approval, limits) and run
    /// before the first model call. An input that breaks the tool-call rule otherwise (a
    /// result that answers no call) is refused with [`Error::History`].
    ///
    /// To give the run values its hooks and tools read (a database handle, a tenant id), run
    /// it through [`with_context`](Self::with_context).
    pub async fn run(&self, input: impl IntoRunInput) -> Result<RunOutput, Error> {
        self.run_with(RunContext::new(), None, input.into_run_input())
            .await
    }

    /// [`run`](Self::run), with `run_context` given to the run.
    pub(super) async fn run_with(
        &self,
        mut run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        RunInput(messages): RunInput,
    ) -> Result<RunOutput, Error> {
        // A sub-agent's run: its id is its parent call's idempotency key (the same when the
        // parent's call runs again), and no run it starts inherits it. (Boxed: a run that is
        // not a child's keeps its future as small as it was.)
        if let Some(child) = run_context.take::<ChildRunId>() {
            let run_id = child.0.clone();
            return Box::pin(self.run_as_child(run_context, events, run_id, messages)).await;
        }
        // (Only a child's run, started or resumed, takes its parent's store.)
        run_context.take::<ParentStore>();
        // The run goes here, not in `start_run`: one async fn fewer between `run` and the
        // loop keeps a deep chain's future within the compiler's query depth; and its context
        // is made in place (moved out of a function, it is copied).
        let mut cx = Context::new(messages).with_run_context(run_context);
        cx.events = events.map(RunEvents::boxed);
        prepare_input(&mut cx.messages)?;
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let held = self.begin(&cx).await?;
        let ending = self.go_held(&mut cx, &mut state, Entry::Start, held).await;
        finish(cx, ending)
    }

    /// A new run on `messages`, under `run_id` if given (else a fresh one), holding `held` (its
    /// key, taken already in that store), else taking its key if the agent keeps its runs.
    pub(super) async fn start_run(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        run_id: Option<String>,
        messages: Vec<Message>,
        held: Option<(Arc<Durable>, Held)>,
    ) -> Result<RunOutput, Error> {
        let mut cx = Context::new(messages).with_run_context(run_context);
        if let Some(run_id) = run_id {
            cx.run_id = run_id;
        }
        cx.events = events.map(RunEvents::boxed);
        let prepared = prepare_input(&mut cx.messages);
        if let (Err(_), Some((durable, held))) = (&prepared, &held) {
            Box::pin(durable.release(&held.key, &held.lease)).await;
        }
        prepared?;
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let held = match held {
            Some((durable, held)) => {
                cx.durable = Some(RunStore::new(durable));
                Some(held)
            }
            None => self.begin(&cx).await?,
        };
        let ending = self.go_held(&mut cx, &mut state, Entry::Start, held).await;
        finish(cx, ending)
    }

    /// An empty [`Thread`] for this agent's chain, with a fresh id.
    pub fn thread(&self) -> Thread<C::ThreadState> {
        let mut thread = Thread::new();
        thread.chain = Some(self.members.clone());
        thread
    }

    /// A thread stored by this agent's chain, or by a chain that changed since, read as
    /// `Thread<serde_json::Value>`: each member of this chain takes the thread-scoped state of
    /// the stored chain's member of its name (a new member starts from `Default`, a removed
    /// member's state is dropped with a warning), as a checkpoint's state is carried over. A
    /// thread of this very chain can also be read as `Thread<C::ThreadState>` directly; one
    /// whose members changed only so (not their nesting or state types) is carried over when it
    /// runs.
    ///
    /// Refused only when a member's state no longer deserializes (named in
    /// [`ResumeError::State`]), or when which member continues which would be a guess
    /// ([`ResumeError::AmbiguousMember`]; see [`resume`](Self::resume) on members of one
    /// middleware).
    pub fn adopt_thread(
        &self,
        stored: Thread<serde_json::Value>,
    ) -> Result<Thread<C::ThreadState>, ResumeError> {
        let state = carry_thread_state::<C>(stored.chain.as_deref(), &stored.state, &self.members)?;
        Ok(Thread {
            format: THREAD_FORMAT,
            id: stored.id,
            messages: stored.messages,
            state,
            runs: stored.runs,
            paused: stored.paused,
            chain: Some(self.members.clone()),
            spent: stored.spent,
            owner: stored.owner,
        })
    }

    /// Runs the agent on `input` in `thread`: from the thread's history and thread-scoped state
    /// (the run-scoped state starts afresh), which the run updates when it ends or pauses.
    ///
    /// The thread changes only when the run ends or pauses: a run's future dropped before that
    /// leaves the thread as it was, but for what the run spent ([`Thread::spent`]). A thread whose run is paused is refused
    /// ([`ThreadError::Paused`]): resume it with [`resume_in`](Self::resume_in) or give it up
    /// with [`Thread::abandon_pause`] — a tool call that completed never runs again.
    pub async fn run_in(
        &self,
        thread: &mut Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> Result<RunOutput, Error> {
        self.run_in_with(RunContext::new(), None, thread, input.into_run_input())
            .await
    }

    /// [`run_in`](Self::run_in), with `run_context` given to the run.
    pub(super) async fn run_in_with(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        thread: &mut Thread<C::ThreadState>,
        RunInput(input): RunInput,
    ) -> Result<RunOutput, Error> {
        if thread.paused.is_some() {
            return Err(ThreadError::Paused {
                thread: thread.id.clone(),
            }
            .into());
        }
        let mut messages = thread.messages.clone();
        let run_start = messages.len();
        messages.extend(input);
        prepare_input(&mut messages)?;
        let mut cx = Context::new(messages).with_run_context(run_context);
        cx.events = events.map(RunEvents::boxed);
        cx.counters.runs = thread.runs;
        cx.counters.run_start = run_start;
        cx.thread_id = Some(thread.id.clone());
        let thread_state = match &thread.chain {
            Some(chain) if !Shared::ptr_eq(chain, &self.members) && *chain != self.members => {
                let stored = serde_json::to_value(&thread.state).map_err(CheckpointError::State)?;
                carry_thread_state::<C>(Some(chain), &stored, &self.members)?
            }
            _ => thread.state.clone(),
        };
        let mut state = States::<C>::fresh(thread_state);
        let held = self.begin(&cx).await?;
        let mut charged = ChargeOnDrop::new(&mut thread.spent, cx);
        let ending = self
            .go_held(charged.cx(), &mut state, Entry::Start, held)
            .await;
        let cx = charged.finish();
        keep(&self.members, thread, cx, state, ending)
    }

    /// The loop, in the run's `invoke_agent` span (`drive` records how it ended there), holding
    /// `lease` (see [`Leased`]). A plain `fn`, not an `async fn`: every state machine between
    /// the run and the deepest wrap hook counts against the compiler's query-depth limit (see
    /// `drive`), and this one would cost a wrapping member. The loop's future is built in
    /// place, in one expression: moved once more, it is copied whole, every run.
    fn go<'s>(
        &'s self,
        cx: &'s mut Context,
        state: &'s mut States<C>,
        entry: Entry,
        lease: Option<(Renewing<'s>, ReleaseOnDrop)>,
    ) -> Instrumented<Leased<'s, impl Future<Output = Result<Ending, Error>> + 's>> {
        let thread = cx.thread_id.as_ref().map(|id| id as &dyn std::fmt::Display);
        let span = telemetry::invoke_agent_span(&self.name, &cx.run_id, thread, self.max_steps);
        Leased::new(self.drive(cx, state, entry), lease).instrument(span)
    }

    /// A new run in `cx` takes its key, if the agent keeps its runs.
    async fn begin(&self, cx: &Context) -> Result<Option<Held>, Error> {
        match &self.durable {
            Some(durable) => Box::pin(durable.begin(durable::key(cx), &self.worker))
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// The loop, holding `held` (the run's key, if the agent keeps its runs): renewed while the
    /// run goes on (the run stops if it is lost), released if the run's future is dropped.
    pub(super) fn go_held<'s>(
        &'s self,
        cx: &'s mut Context,
        state: &'s mut States<C>,
        entry: Entry,
        held: Option<Held>,
    ) -> Instrumented<Leased<'s, impl Future<Output = Result<Ending, Error>> + 's>> {
        if held.is_some() && cx.durable.is_none() {
            cx.durable = self.durable.clone().map(RunStore::new);
        }
        let lease = match (Durable::shared_of_run(cx), held) {
            (Some(durable), Some(held)) => {
                let renewing: Renewing<'s> = durable.keep_renewed(&held);
                let release = durable.guard(&held);
                cx.held = Some(Box::new(held));
                Some((renewing, release))
            }
            _ => None,
        };
        self.go(cx, state, entry, lease)
    }
}

impl<C: Middleware> States<C> {
    /// The state of a new run: run-scoped state afresh, with `thread`'s.
    pub(super) fn fresh(thread: C::ThreadState) -> Self {
        States {
            run: C::State::default(),
            thread,
        }
    }
}

/// A thread run's context, charging what the run spent to the thread's ledger if the run's
/// future is dropped before it settles (cancelled, its client gone): the thread is otherwise
/// left as it was, but what it spent is never hidden.
pub(super) struct ChargeOnDrop<'t> {
    spent: &'t mut Usage,
    cx: Context,
    armed: bool,
}

impl<'t> ChargeOnDrop<'t> {
    /// `cx` of a run of the thread whose ledger is `spent`.
    pub(super) fn new(spent: &'t mut Usage, mut cx: Context) -> Self {
        cx.ledger = Some(Box::new(Ledger {
            thread_before: *spent,
            run_before: cx.counters.usage,
        }));
        ChargeOnDrop {
            spent,
            cx,
            armed: true,
        }
    }

    pub(super) fn cx(&mut self) -> &mut Context {
        &mut self.cx
    }

    /// The run settled: its context, for the thread (which `keep` charges).
    pub(super) fn finish(mut self) -> Context {
        self.armed = false;
        std::mem::take(&mut self.cx)
    }
}

impl Drop for ChargeOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(spent) = self.cx.thread_usage().filter(|_| self.armed) {
            *self.spent = spent;
        }
    }
}

/// Makes an input history one a provider accepts: a call that a later message left without a
/// result gets an error result right after it; anything else that breaks the rule is refused.
pub(super) fn prepare_input(messages: &mut Vec<Message>) -> Result<(), Error> {
    // The last calls may still wait: the run executes them before the first model call. Most
    // inputs are valid as they are, and one pass says so; only one with a call left without a
    // result mid-way is repaired, then checked again. (Repairing first, as this did, read the
    // whole input twice every run; the repair fixes no other error, nor moves one found before
    // the first call it answers, so the errors are the same.)
    match check_editable(messages) {
        Err(HistoryError::UnansweredCall { .. }) => {}
        checked => return checked.map_err(Error::from),
    }
    close_interior(messages, |call| {
        format!(
            "tool call `{}` was not executed: the conversation went on without its result",
            call.name
        )
    });
    check_editable(messages).map_err(Error::from)
}

/// Puts a run's history and state back into its thread, and makes its output (which shares
/// the history with the thread).
pub(super) fn keep<C: Middleware>(
    members: &Shared<Members>,
    thread: &mut Thread<C::ThreadState>,
    cx: Context,
    state: States<C>,
    ending: Result<Ending, Error>,
) -> Result<RunOutput, Error> {
    let output = ending.map(|ending| output(&cx, cx.messages.clone(), ending));
    thread.paused = match &output {
        Ok(RunOutput {
            checkpoint: Some(checkpoint),
            ..
        }) => Some(PauseMark {
            checkpoint: checkpoint.id.clone(),
            completed: checkpoint.completed_results(),
        }),
        _ => None,
    };
    thread.runs = cx
        .counters
        .runs
        .saturating_add(usize::from(thread.paused.is_none()));
    thread.spent = cx.thread_usage().unwrap_or(thread.spent);
    thread.messages = cx.messages;
    thread.state = state.thread;
    thread.chain = Some(members.clone());
    thread.format = THREAD_FORMAT;
    output
}

/// The output of a run outside a thread: the history moves into it.
pub(super) fn finish(cx: Context, ending: Result<Ending, Error>) -> Result<RunOutput, Error> {
    let ending = ending?;
    // The history shared (a reference count), not taken: a `take` leaves a new, allocated,
    // empty history in the context, which is dropped right after.
    Ok(output(&cx, cx.messages.clone(), ending))
}

/// The output of a run that ended as `ending`, with `messages` as its history.
fn output(cx: &Context, messages: Shared<Vec<Message>>, ending: Ending) -> RunOutput {
    let (end, checkpoint) = match ending {
        Ending::Finished => (EndReason::finished(cx.stop_reason), None),
        Ending::Jumped => (EndReason::Jumped, None),
        Ending::Paused(checkpoint) => (EndReason::Interrupted, Some(checkpoint)),
        Ending::Stepped => (EndReason::Stepped, None),
        Ending::Cancelled => (EndReason::Cancelled, None),
    };
    RunOutput {
        messages,
        usage: cx.counters.usage,
        steps: cx.counters.step,
        model_calls: cx.counters.model_calls,
        tool_calls: cx.counters.tool_calls,
        end,
        stop_reason: cx.stop_reason,
        checkpoint,
        tool_failures: cx.failures.clone(),
        cleanup_error: cx.cleanup_error.clone(),
        run_start: cx.counters.run_start,
        stored: cx.held.is_some(),
    }
}
