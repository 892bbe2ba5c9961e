//! Resuming a run: from a checkpoint given, signed or stored (its key claimed), checked against
//! the thread it belongs to and the answers it waits for, and restored — its context, the
//! chain's state carried over to the chain as it is now, where in its step it goes on — before
//! the loop takes it from there.

use std::collections::HashMap;
use std::sync::Arc;

use super::carry_over::{Carried, carry_over};
use super::entry::{ChargeOnDrop, finish, keep};
use super::run_loop::{Entry, States};
use super::signing::Admitted;
use super::{Agent, ResumeFrom, RunOutput, Thread, ThreadId};
use crate::__private::Internal;
use crate::context::{Context, LayerAnswer, Raiser, ResumePoint, RunContext};
use crate::error::Error;
use crate::interrupt::{Answer, Checkpoint, InterruptId, Position, ResumeError};
use crate::message::ToolResult;
use crate::middleware::Middleware;
use crate::model::Model;
use crate::pause::Held;
use crate::run::{EventQueue, RunEvents};

/// The answers of a resume, by interrupt id.
type Answers = HashMap<InterruptId, serde_json::Value>;

impl<M: Model, C: Middleware> Agent<M, C> {
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
        mut run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        from: ResumeFrom,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        // A sub-agent's run, kept in its parent's store: it goes on from what the store holds.
        if let Some(parents) = self.parents_store(&mut run_context) {
            let from = self.admit(from)?;
            let answers = answers.into_iter().collect();
            return Box::pin(self.resume_as_child(run_context, events, parents, from, answers))
                .await;
        }
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
    /// is its key). The thread as the application saved it is enough to recover whatever its
    /// worker left: `ResumeFrom::stored` goes on from the run's latest step or pause, even one
    /// the thread never heard of (its worker died after storing it) — and, with no answers, a
    /// run whose worker died after storing its *end* hands that end back (the run's history
    /// and state, kept with its [`Tombstone`](crate::interrupt::Tombstone); nothing runs), as
    /// it hands back the run's pause, one the thread never heard of too (the thread then waits
    /// on it). What there is to hand back: [`unseen_run`](Self::unseen_run).
    /// Answers to a pause of a run that ended are refused ([`ResumeError::Ended`]), as is a
    /// thread that had already counted the run as ended.
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
        let mut answers = answers.into_iter().peekable();
        // A recovery: whatever the store holds of the thread's run, no answer given.
        let recovery = matches!(from, ResumeFrom::Stored(_)) && answers.peek().is_none();
        let (checkpoint, held) = match self.take(from).await {
            Ok(taken) => taken,
            // The run ended, maybe with the thread never told (its worker died after writing
            // the end): its end, kept with its tombstone, is the thread's. An answer to a
            // pause of an ended run is refused, though: a duplicated approval is not heard.
            Err(refused) if recovery => return self.end_told_late(run_context, thread, refused),
            Err(refused) => return Err(refused),
        };
        if recovery && checkpoint.is_pause() {
            // A pause, maybe one the thread never heard of (its worker died after storing it),
            // and no answers: handed back as it stands, for the answers to go to it.
            let refused = waits_on(thread, &checkpoint, held.is_some());
            if let (Some(held), Some(durable)) = (&held, &self.durable) {
                Box::pin(durable.release(&held.key, &held.lease)).await;
            }
            refused?;
            return self.pause_told_late(run_context, thread, checkpoint);
        }
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

    /// The checkpoint a resume continues, once admitted (signed, if the agent signs its
    /// checkpoints): with a store, the one it holds under the run's key (claimed, with the
    /// hold); without one, the checkpoint given.
    pub(super) async fn take(&self, from: ResumeFrom) -> Result<(Checkpoint, Option<Held>), Error> {
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
    pub(super) fn check_answers(
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

/// Whether `thread` waits on `checkpoint`: a pause while the thread waits on it; a step
/// checkpoint (a run whose worker died) while the thread has not moved on since that run
/// started. A checkpoint its store holds (`stored`) is the run's latest, whatever the thread
/// last heard of it — a resume whose client went away before the thread was kept left the
/// thread at the older pause — so it resumes while the thread has not moved on since the run
/// started (a thread that gave its pause up has: it counts the run as ended).
pub(super) fn waits_on<S>(
    thread: &Thread<S>,
    checkpoint: &Checkpoint,
    stored: bool,
) -> Result<(), Error> {
    if checkpoint.thread.as_ref() != Some(&thread.id) {
        return Err(ResumeError::WrongThread {
            checkpoint: checkpoint.thread.clone(),
            thread: thread.id.clone(),
        }
        .into());
    }
    let same_run = thread.runs == checkpoint.counters.runs;
    let waits_on_pause = thread
        .paused
        .as_ref()
        .is_some_and(|pause| pause.checkpoint == checkpoint.id);
    let waits = if stored {
        // The store's checkpoint is the run's latest, whatever the thread last heard of it (a
        // pause whose worker died before the thread was told; a resume whose client went
        // away): it goes on while the thread has not moved on since the run started. A thread
        // that gave its pause up has (`Thread::abandon_pause` counts the run as ended).
        same_run
    } else if checkpoint.is_pause() {
        waits_on_pause
    } else {
        same_run && thread.paused.is_none()
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
pub(super) fn match_answers(
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
pub(super) fn resume_point(
    member: usize,
    interrupts: &[crate::interrupt::Interrupt],
    answers: &mut Answers,
) -> ResumePoint {
    let answer = interrupts
        .first()
        .and_then(|interrupt| answers.remove(&interrupt.id));
    ResumePoint { at: member, answer }
}
