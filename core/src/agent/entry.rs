//! The ways into the loop: a new run, a run in a thread, a resume from a checkpoint.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use tracing::Instrument;
use tracing::instrument::Instrumented;

use super::carry_over::{Carried, carry_over, carry_thread_state};
use super::durable::{self, Held, ReleaseOnDrop};
use super::events::{EventQueue, RunEvents};
use super::leased::{Leased, Renewing};
use super::run_loop::{Ending, Entry, States};
use super::signing::Admitted;
use super::thread::THREAD_FORMAT;
use super::{
    Agent, EndReason, IntoRunInput, PauseMark, ResumeFrom, RunInput, RunOutput, Thread,
    ThreadError, ThreadId,
};
use crate::__private::Internal;
use crate::context::{Context, LayerAnswer, Ledger, Raiser, ResumePoint, RunContext};
use crate::error::Error;
use crate::interrupt::{
    Answer, Checkpoint, CheckpointError, InterruptId, Members, Position, ResumeError,
};
use crate::message::{HistoryError, Message, ToolResult, check_editable, close_interior};
use crate::middleware::Middleware;
use crate::model::{Model, Usage};
use crate::shared::Shared;
use crate::telemetry;

/// The answers of a resume, by interrupt id.
type Answers = HashMap<InterruptId, serde_json::Value>;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs the agent on `input` until the model answers without calling tools, a hook jumps to
    /// the end, an interrupt pauses the run, or [`max_steps`](super::AgentBuilder::max_steps) is
    /// reached.
    ///
    /// Order of the hooks: see [`Middleware`]. Tool failures become error results the model
    /// reads. An error or a panic in a hook, or an error of the model, ends the loop;
    /// `after_agent` still runs, then the error is returned (see *Panics and cancellation* in
    /// [`middleware`](crate::middleware)). A paused run ends with [`EndReason::Interrupted`] and
    /// a [`Checkpoint`] to [`resume`](Self::resume) from.
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
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        RunInput(messages): RunInput,
    ) -> Result<RunOutput, Error> {
        let mut cx = Context::new(messages).with_run_context(run_context);
        cx.events = events.map(RunEvents::boxed);
        prepare_input(&mut cx.messages)?;
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let held = self.begin(&cx).await?;
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

    /// Resumes a paused run from `checkpoint`, with an answer for each of its pending
    /// interrupts (by [`InterruptId`]) — or a run in progress from a step checkpoint
    /// ([`Durability::EveryStep`](super::Durability::EveryStep)), with no answers. Works in any
    /// process, with an agent whose chain may have changed since the checkpoint was made: its
    /// members take the state of the checkpoint's members of their names, a new member starts
    /// from `Default`, a removed member's state is dropped (with a warning), an interrupt whose
    /// member is gone no longer waits (a tool call it paused gets an error result the model
    /// reads; a paused step goes on with the next member). Only a member's state that no
    /// longer deserializes is refused ([`ResumeError::State`] names the member), and a
    /// matching that would be a guess.
    ///
    /// # Members of one middleware
    ///
    /// A chain that lists a middleware more than once should name each instance
    /// ([`Middleware::named`]): a named instance takes the state of the checkpoint's instance
    /// of its name, wherever either sits. Unnamed members of one middleware take the states of
    /// the checkpoint's unnamed ones in order, when there are as many of them; when there are
    /// not (two unnamed `ToolCallLimit`s then, one now), which one continues would be a guess,
    /// and the resume is refused ([`ResumeError::AmbiguousMember`] names them) before anything
    /// runs — unless they carry nothing (each held its default state, and none of them paused
    /// the run), when any match is the same. The same holds for a stored thread ([`adopt_thread`](Self::adopt_thread),
    /// [`run_in`](Self::run_in)).
    ///
    /// ```
    /// use hookchain::builtin::ToolCallLimit;
    /// use hookchain::prelude::*;
    /// use hookchain::chain;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let limit = |tool: &str| ToolCallLimit::builder().tool(tool).thread_limit(5).build();
    /// // Checkpoints of this chain resume on a chain that keeps either limit, by its name.
    /// let chain = chain![limit("search")?.named("search"), limit("fetch")?.named("fetch")];
    /// let agent = Agent::builder(ScriptedModel::new([])).chain(chain).build()?;
    /// # let _ = agent;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Each answer is first checked by whoever raised its interrupt (a
    /// [`Middleware::check_answer`], a [`Tool::check_answer`](crate::Tool::check_answer)): an
    /// answer refused there stops the resume before anything runs. The interrupted hook then
    /// runs again and reads its answer; hooks that ran before it in the interrupted step do not
    /// run again, and tool calls that completed are never run again.
    ///
    /// A checkpoint is single-use (see [`Checkpoint`]); one of a run in a thread resumes only
    /// with [`resume_in`](Self::resume_in) on that thread.
    ///
    /// # From the store
    ///
    /// An agent with a [`checkpointer`](super::AgentBuilder::checkpointer) resumes only what
    /// its store holds: `from` is a checkpoint (a request to resume that very version) or
    /// [`ResumeFrom::stored`] (whatever the key holds). The resume claims the run's key (refused
    /// with [`CheckpointError::Claimed`] while another run holds it), reads the checkpoint stored
    /// there and resumes it; a checkpoint given that is not the stored one is refused
    /// ([`ResumeError::Superseded`]), as is one whose run ended ([`ResumeError::Ended`], while
    /// its tombstone is kept) or a key that holds nothing ([`ResumeError::NotStored`]) — and
    /// nothing runs. So a duplicated, replayed or late approval never runs a call twice, and a
    /// resume retried after its client went away goes on from what the first attempt stored.
    ///
    /// The typed values of the paused run's [`RunContext`] are not in the checkpoint: give them
    /// again with [`with_context`](Self::with_context); its saved values come back.
    ///
    /// [`CheckpointError::Claimed`]: crate::interrupt::CheckpointError::Claimed
    pub async fn resume(
        &self,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        self.resume_with(RunContext::new(), None, from.into(), answers)
            .await
    }

    /// [`resume`](Self::resume), with `run_context` given to the resumed run.
    pub(super) async fn resume_with(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        from: ResumeFrom,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let (checkpoint, held) = self.take(from).await?;
        let restored = match &checkpoint.thread {
            Some(thread) => Err(ResumeError::ThreadCheckpoint {
                thread: thread.clone(),
            }
            .into()),
            None => self.restore(run_context, checkpoint, answers),
        };
        let (mut cx, mut state, position) = self.refused_lets_go(restored, held.as_ref()).await?;
        cx.events = events.map(RunEvents::boxed);
        let entry = Entry::Resume(Box::new(position));
        let ending = self.go_held(&mut cx, &mut state, entry, held).await;
        finish(cx, ending)
    }

    /// [`resume`](Self::resume) a paused run of `thread`, updating the thread as the run goes
    /// on. The checkpoint must be the one the thread waits on: one of another thread, or one
    /// already resumed, is refused before anything runs.
    ///
    /// With a checkpointer, `from` is resumed as [`resume`](Self::resume) says (the thread's id
    /// is its key).
    pub async fn resume_in(
        &self,
        thread: &mut Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        self.resume_in_with(RunContext::new(), None, thread, from.into(), answers)
            .await
    }

    /// [`resume_in`](Self::resume_in), with `run_context` given to the resumed run.
    pub(super) async fn resume_in_with(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        thread: &mut Thread<C::ThreadState>,
        from: ResumeFrom,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        if let ResumeFrom::Stored(key) = &from
            && key != thread.id.as_str()
        {
            return Err(ResumeError::WrongThread {
                checkpoint: Some(ThreadId::new(key.clone())),
                thread: thread.id.clone(),
            }
            .into());
        }
        let (checkpoint, held) = self.take(from).await?;
        let restored = waits_on(thread, &checkpoint, held.is_some())
            .and_then(|()| self.restore(run_context, checkpoint, answers));
        let (mut cx, mut state, position) = self.refused_lets_go(restored, held.as_ref()).await?;
        cx.events = events.map(RunEvents::boxed);
        let entry = Entry::Resume(Box::new(position));
        let mut charged = ChargeOnDrop::new(&mut thread.spent, cx);
        let ending = self.go_held(charged.cx(), &mut state, entry, held).await;
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

    /// The checkpoint a resume continues, once admitted (signed, if the agent signs its
    /// checkpoints): with a store, the one it holds under the run's key (claimed, with the
    /// hold); without one, the checkpoint given.
    async fn take(&self, from: ResumeFrom) -> Result<(Checkpoint, Option<Held>), Error> {
        let from = self.admit(from)?;
        let Some(durable) = &self.durable else {
            return match from {
                Admitted::Checkpoint(checkpoint) => Ok((*checkpoint, None)),
                Admitted::Stored(key) => Err(ResumeError::NotStored { key }.into()),
            };
        };
        let (key, given) = match &from {
            Admitted::Checkpoint(checkpoint) => (checkpoint.key(), Some(checkpoint.id.as_str())),
            Admitted::Stored(key) => (key.as_str(), None),
        };
        let (held, checkpoint) = Box::pin(durable.claim(key, &self.worker, given)).await?;
        Ok((checkpoint, Some(held)))
    }

    /// `restored`, or its error once the key claimed for it is let go again.
    pub(super) async fn refused_lets_go<T>(
        &self,
        restored: Result<T, Error>,
        held: Option<&Held>,
    ) -> Result<T, Error> {
        if let (Err(_), Some(held), Some(durable)) = (&restored, held, &self.durable) {
            Box::pin(durable.release(&held.key, &held.lease)).await;
        }
        restored
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
        let lease = match (&self.durable, held) {
            (Some(durable), Some(held)) => {
                let renewing: Renewing<'s> = Box::pin(durable.keep_renewed(held.clone()));
                let release = durable.guard(&held);
                cx.held = Some(Box::new(held));
                Some((renewing, release))
            }
            _ => None,
        };
        self.go(cx, state, entry, lease)
    }

    /// Checks `checkpoint` and `answers` against this agent, and rebuilds the paused run, with
    /// `run_context` and the values the paused run saved (the given ones win).
    pub(super) fn restore(
        &self,
        run_context: RunContext,
        mut checkpoint: Checkpoint,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<(Context, States<C>, Position), Error> {
        let Carried {
            states: state,
            gone,
            resume_instead,
        } = carry_over::<C>(&mut checkpoint, &self.members)?;
        let mut answers = match_answers(&checkpoint, answers)?;
        self.check_answers(&checkpoint, &answers, &gone)?;
        let (mut cx, mut position, interrupts) = reopen(checkpoint, run_context);
        let resume = |member: usize, answers: &mut Answers| match resume_instead {
            Some(at) => ResumePoint { at, answer: None },
            None => resume_point(member, &interrupts, answers),
        };
        match &mut position {
            Position::BeforeModel { member, request } => {
                self.tools.fill_specs(request);
                cx.resume = Some(resume(*member, &mut answers));
            }
            Position::AfterModel {
                member, answered, ..
            } => {
                cx.answered = std::mem::take(answered);
                cx.resume = Some(resume(*member, &mut answers));
            }
            Position::Tools {
                calls,
                results,
                answers: earlier,
            } => {
                for answer in std::mem::take(earlier) {
                    cx.tool_answers
                        .entry(answer.call_id)
                        .or_default()
                        .push(LayerAnswer {
                            raiser: answer.raiser,
                            answer: answer.answer,
                            asked: answer.asked,
                        });
                }
                for (i, interrupt) in interrupts.iter().enumerate() {
                    let Some(call_id) = &interrupt.tool_call_id else {
                        continue;
                    };
                    if gone.contains(&i) {
                        // The layer that paused the call is gone: the model reads why the call
                        // did not run, and the call does not run behind its back.
                        let at = calls.iter().position(|call| &call.id == call_id);
                        if let Some(result) = at.and_then(|at| results.get_mut(at)) {
                            *result = Some(ToolResult::error(
                                call_id.clone(),
                                format!(
                                    "the call was not executed: it waited for `{}`, which is no \
                                     longer in the agent",
                                    interrupt.source
                                ),
                            ));
                        }
                        continue;
                    }
                    let Some(answer) = answers.remove(&interrupt.id) else {
                        continue;
                    };
                    let raiser = interrupt.member.map_or(Raiser::Tool, Raiser::Member);
                    cx.tool_answers
                        .entry(call_id.clone())
                        .or_default()
                        .push(LayerAnswer {
                            raiser,
                            answer,
                            asked: interrupt.payload.clone(),
                        });
                }
            }
            Position::Step => {}
        }
        Ok((cx, state, position))
    }

    /// Asks whoever raised each interrupt whether its answer will do, before anything runs.
    /// The interrupts in `gone` (by index) are not checked: their members are no longer in
    /// the chain.
    fn check_answers(
        &self,
        checkpoint: &Checkpoint,
        answers: &Answers,
        gone: &[usize],
    ) -> Result<(), Error> {
        for (i, interrupt) in checkpoint.interrupts.iter().enumerate() {
            let Some(value) = answers.get(&interrupt.id).filter(|_| !gone.contains(&i)) else {
                continue;
            };
            let answer = Answer::new(interrupt, value, &self.tools);
            let checked = match (interrupt.member, &checkpoint.position) {
                (Some(member), _) => self.chain.check_answer_at(member, &answer, Internal::new()),
                (None, Position::Tools { calls, .. }) => calls
                    .iter()
                    .find(|call| Some(&call.id) == interrupt.tool_call_id.as_ref())
                    .map_or(Ok(()), |call| {
                        self.tools.check_answer(call, &answer).map_err(Into::into)
                    }),
                (None, _) => Ok(()),
            };
            checked.map_err(|source| ResumeError::InvalidAnswer {
                id: interrupt.id.clone(),
                source,
            })?;
        }
        Ok(())
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
struct ChargeOnDrop<'t> {
    spent: &'t mut Usage,
    cx: Context,
    armed: bool,
}

impl<'t> ChargeOnDrop<'t> {
    /// `cx` of a run of the thread whose ledger is `spent`.
    fn new(spent: &'t mut Usage, mut cx: Context) -> Self {
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

    fn cx(&mut self) -> &mut Context {
        &mut self.cx
    }

    /// The run settled: its context, for the thread (which `keep` charges).
    fn finish(mut self) -> Context {
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

/// Whether `thread` waits on `checkpoint`: a pause while the thread waits on it; a step
/// checkpoint (a run whose worker died) while the thread has not moved on since that run
/// started. A checkpoint its store holds (`stored`) is the run's latest, whatever the thread
/// last heard of it — a resume whose client went away before the thread was kept left the
/// thread at the older pause — so it resumes while the thread has not moved on since the run
/// started.
fn waits_on<S>(thread: &Thread<S>, checkpoint: &Checkpoint, stored: bool) -> Result<(), Error> {
    if checkpoint.thread.as_ref() != Some(&thread.id) {
        return Err(ResumeError::WrongThread {
            checkpoint: checkpoint.thread.clone(),
            thread: thread.id.clone(),
        }
        .into());
    }
    let same_run = thread.runs == checkpoint.counters.runs;
    let waits = match &thread.paused {
        _ if stored => same_run,
        Some(pause) => pause.checkpoint == checkpoint.id,
        None => !checkpoint.is_pause() && same_run,
    };
    if waits {
        Ok(())
    } else {
        Err(ResumeError::Spent {
            checkpoint: checkpoint.id.clone(),
        }
        .into())
    }
}

/// The context of the run `checkpoint` holds, with `run_context` and the values the run saved
/// (the given ones win); where it stands, and the interrupts it waits on.
pub(super) fn reopen(
    checkpoint: Checkpoint,
    mut run_context: RunContext,
) -> (Context, Position, Vec<crate::interrupt::Interrupt>) {
    let Checkpoint {
        run_id,
        thread,
        messages,
        counters,
        position,
        interrupts,
        run_context: saved,
        ..
    } = checkpoint;
    run_context.restore_saved(saved);
    let mut cx = Context::new(messages).with_run_context(run_context);
    cx.counters = counters;
    cx.run_id = run_id;
    cx.thread_id = thread;
    (cx, position, interrupts)
}

/// The answers, by id: one per pending interrupt, no other.
fn match_answers(
    checkpoint: &Checkpoint,
    answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
) -> Result<Answers, Error> {
    let pending: Vec<InterruptId> = checkpoint.pending().cloned().collect();
    let mut by_id = Answers::new();
    for (id, answer) in answers {
        if by_id.insert(id.clone(), answer).is_some() {
            return Err(ResumeError::DuplicateAnswer { id }.into());
        }
    }
    if let Some(id) = by_id.keys().find(|id| !pending.contains(id)) {
        let id = id.clone();
        return Err(ResumeError::UnknownInterrupt { id, pending }.into());
    }
    if let Some(id) = pending.iter().find(|id| !by_id.contains_key(id)) {
        return Err(ResumeError::MissingAnswer { id: id.clone() }.into());
    }
    Ok(by_id)
}

/// Where a step paused in a sequential hook resumes, with the hook's answer.
fn resume_point(
    member: usize,
    interrupts: &[crate::interrupt::Interrupt],
    answers: &mut Answers,
) -> ResumePoint {
    let answer = interrupts
        .first()
        .and_then(|interrupt| answers.remove(&interrupt.id));
    ResumePoint { at: member, answer }
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
fn keep<C: Middleware>(
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
