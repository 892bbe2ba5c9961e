//! Runs that go one step at a time, driven from outside: by a durable-execution engine, a job
//! queue, a scheduler. Each call runs one step of the run stored under a key and says where it
//! stands; between calls the run lives only in the agent's store, so the next step may run in
//! another process.

use std::sync::Arc;

use super::carry_over::{Carried, carry_over};
use super::entry::{finish, prepare_input};
use super::resume::reopen;
use super::run_loop::{Entry, States};
use super::{Agent, AgentStream, EndReason, Held, IntoRunInput, RunEvents, RunInput, RunOutput};
use crate::context::{Context, RunContext, Stepping};
use crate::error::Error;
use crate::interrupt::{Checkpoint, InterruptId, Position, ResumeError};
use crate::middleware::Middleware;
use crate::model::Model;
use crate::run::EventQueue;

/// The answers to the interrupts a stepped run paused for, collected (so that the caller's
/// iterator need not be `Send`).
type Answers = Vec<(InterruptId, serde_json::Value)>;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Starts a run under `key` on `input` and runs its first step (`before_agent`, then one
    /// model call and the tool calls it asks for): the run is then in the agent's store, and
    /// [`step`](Self::step) runs the next one, in this process or any other.
    ///
    /// The output says where the run stands: [`EndReason::Stepped`] (more steps to run),
    /// [`EndReason::Interrupted`] (paused: the next `step` carries the answers), or how it
    /// ended. Between steps the key is free; a step holds its lease while it runs (see
    /// [`lease`](super::AgentBuilder::lease)), records each completed tool call, and a step
    /// whose worker died is taken over once the lease expired: its completed calls are not run
    /// again.
    ///
    /// Retried after a failure (its worker died, its answer was lost), it does not start the run
    /// over: a key that already holds a step goes on from it, a key whose run paused returns
    /// the pause, a key whose run ended hands its end back (see [`step`](Self::step)). Needs a
    /// [`checkpointer`](super::AgentBuilder::checkpointer) (else [`ResumeError::NoCheckpointer`]);
    /// every step is kept whatever its [`Durability`](super::Durability).
    ///
    /// ```
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::{Durability, EndReason};
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "missing", serde_json::json!({}))]),
    ///     ModelResponse::text("Done."),
    /// ]);
    /// let agent = Agent::builder(model)
    ///     .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
    ///     .build()?;
    /// let mut output = agent.start_step("order-42", "Go").await?;
    /// while output.end == EndReason::Stepped {
    ///     // An engine would schedule each step as a task of its own.
    ///     output = agent.step("order-42", []).await?;
    /// }
    /// assert_eq!(output.text().as_deref(), Some("Done."));
    /// assert_eq!(output.steps, 2);
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn start_step(
        &self,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> Result<RunOutput, Error> {
        self.start_step_with(RunContext::new(), None, key.into(), input.into_run_input())
            .await
    }

    /// Runs the next step of the run stored under `key` (see [`start_step`](Self::start_step)):
    /// from the step its store holds, with no answers, or from its pause, with an answer for
    /// each pending interrupt (as [`resume`](Self::resume) takes them). A step whose worker died
    /// mid-way goes on from the last tool call it recorded.
    ///
    /// Answers to a pause the run is already past are dropped, and the step goes on without
    /// them — whatever the store holds, a step or a later pause (then the pause is reported as
    /// it stands): the retry of a step that carried them, whose first attempt took them and got
    /// further before its outcome was lost (its worker died), or an answer delivered twice.
    /// Nothing runs twice, and a retried answer never ends the run.
    ///
    /// A run that ended hands its end back, nothing run — the retry of a step whose first
    /// attempt ended the run, its outcome lost with its worker — when its tombstone keeps it
    /// (a run that keeps its steps does).
    ///
    /// Refused before anything runs while another worker holds the key
    /// ([`CheckpointError::Claimed`](crate::interrupt::CheckpointError::Claimed)), when the run
    /// ended and its tombstone does not keep its end ([`ResumeError::Ended`]), when nothing is
    /// stored ([`ResumeError::NotStored`]), or when the answers do not fit the pause.
    pub async fn step(
        &self,
        key: &str,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let answers = answers.into_iter().collect();
        self.step_with(RunContext::new(), None, key, answers).await
    }

    /// Cancels the run stored under `key`: it ends where its last step left it — its waiting
    /// tool calls answered as not executed (completed ones keep their results), `after_agent`
    /// run once — with [`EndReason::Cancelled`], and its key holds its tombstone (a step asked
    /// after it is refused with [`ResumeError::Ended`]). A paused run is cancelled as well,
    /// without answers.
    ///
    /// Refused while a step runs (the key's lease is held: cancel the step first, or wait for
    /// its lease to expire), when the run ended, or when nothing is stored.
    pub async fn cancel_step(&self, key: &str) -> Result<RunOutput, Error> {
        self.cancel_step_with(RunContext::new(), key).await
    }

    /// [`cancel_step`](Self::cancel_step), with `run_context` given to the `after_agent` hooks.
    pub(super) async fn cancel_step_with(
        &self,
        run_context: RunContext,
        key: &str,
    ) -> Result<RunOutput, Error> {
        let durable = self.durable.as_ref().ok_or(ResumeError::NoCheckpointer)?;
        let (held, mut checkpoint) = Box::pin(durable.claim(key, &self.worker, None)).await?;
        let carried = carry_over::<C>(&mut checkpoint, &self.members).map_err(Error::from);
        let Carried { states, .. } = self.refused_lets_go(carried, Some(&held)).await?;
        let mut state = states;
        let (mut cx, position, _) = reopen(checkpoint, run_context);
        // The results the step had: kept, in the place of their calls.
        cx.answered = match position {
            Position::Tools { results, .. } => results.into_iter().flatten().collect(),
            Position::AfterModel { answered, .. } => answered,
            Position::BeforeModel { .. } | Position::Step => Vec::new(),
        };
        let ending = self
            .go_held(&mut cx, &mut state, Entry::Cancel, Some(held))
            .await;
        finish(cx, ending)
    }

    /// [`start_step`](Self::start_step), streamed: the step's events as they happen (the
    /// model's tokens, each tool call as it starts and finishes), then its output. The events
    /// are the caller's side channel (to a browser, say), never the engine's: an engine's
    /// history keeps only where the run stands.
    pub fn stream_start_step(
        &self,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> AgentStream<'_> {
        self.stream_start_step_with(RunContext::new(), key.into(), input.into_run_input())
    }

    /// [`step`](Self::step), streamed (see [`stream_start_step`](Self::stream_start_step)).
    pub fn stream_step<'a>(
        &'a self,
        key: &'a str,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        let answers = answers.into_iter().collect();
        self.stream_step_with(RunContext::new(), key, answers)
    }

    pub(super) fn stream_start_step_with(
        &self,
        run_context: RunContext,
        key: String,
        input: RunInput,
    ) -> AgentStream<'_> {
        AgentStream::new(|queue| self.start_step_with(run_context, Some(queue), key, input))
    }

    pub(super) fn stream_step_with<'a>(
        &'a self,
        run_context: RunContext,
        key: &'a str,
        answers: Answers,
    ) -> AgentStream<'a> {
        AgentStream::new(|queue| self.step_with(run_context, Some(queue), key, answers))
    }

    /// [`start_step`](Self::start_step), with `run_context` given to the step.
    pub(super) async fn start_step_with(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        key: String,
        RunInput(messages): RunInput,
    ) -> Result<RunOutput, Error> {
        let durable = self.durable.as_ref().ok_or(ResumeError::NoCheckpointer)?;
        let (held, stored) = match Box::pin(durable.claim_for_step(&key, &self.worker)).await {
            Ok(claimed) => claimed,
            // A retried start whose first attempt ended the run: its end, handed back.
            Err(refused) => return self.end_of_run(run_context, &key, refused),
        };
        if let Some(checkpoint) = stored {
            // A retried start: the run is already under way.
            return self
                .step_from(run_context, events, checkpoint, held, Vec::new())
                .await;
        }
        let mut cx = Context::new(messages).with_run_context(run_context);
        cx.run_id = key;
        cx.events = events.map(RunEvents::boxed);
        cx.stepping = Stepping::NotStarted;
        let prepared = prepare_input(&mut cx.messages);
        self.refused_lets_go(prepared, Some(&held)).await?;
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let ending = self
            .go_held(&mut cx, &mut state, Entry::Start, Some(held))
            .await;
        finish(cx, ending)
    }

    /// [`step`](Self::step), with `run_context` given to the step.
    pub(super) async fn step_with(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        key: &str,
        answers: Answers,
    ) -> Result<RunOutput, Error> {
        let durable = self.durable.as_ref().ok_or(ResumeError::NoCheckpointer)?;
        let (held, checkpoint) = match Box::pin(durable.claim(key, &self.worker, None)).await {
            Ok(claimed) => claimed,
            // A retried step whose first attempt ended the run (its outcome lost with its
            // worker): the end, kept with the tombstone, is handed back.
            Err(refused) => return self.end_of_run(run_context, key, refused),
        };
        self.step_from(run_context, events, checkpoint, held, answers)
            .await
    }

    /// One step from `checkpoint`, its key `held`; a pause without answers is reported as it
    /// stands (a retried start, or a step asked of a paused run by mistake), and answers to a
    /// pause the run is past are dropped (a retried step whose first attempt took them).
    async fn step_from(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        checkpoint: Checkpoint,
        held: Held,
        mut answers: Answers,
    ) -> Result<RunOutput, Error> {
        if drop_answers_to_earlier_pauses(&checkpoint, &mut answers) {
            tracing::debug!(
                key = held.key,
                "answers to a pause the run is past (a retried step) dropped"
            );
        }
        if checkpoint.is_pause() && answers.is_empty() {
            if let Some(durable) = &self.durable {
                Box::pin(durable.release(&held.key, &held.lease)).await;
            }
            return Ok(RunOutput::paused(checkpoint));
        }
        let restored = match &checkpoint.thread {
            Some(thread) => Err(ResumeError::ThreadCheckpoint {
                thread: thread.clone(),
            }
            .into()),
            None => self.restore(run_context, checkpoint, answers),
        };
        let (mut cx, mut state, position) = self.refused_lets_go(restored, Some(&held)).await?;
        cx.events = events.map(RunEvents::boxed);
        // A step resumed mid-way (its worker died, or it paused) ends where that step ends.
        cx.stepping = match position {
            Position::Step => Stepping::NotStarted,
            _ => Stepping::Started,
        };
        let entry = Entry::Resume(Box::new(position));
        let ending = self.go_held(&mut cx, &mut state, entry, Some(held)).await;
        finish(cx, ending)
    }
}

/// Drops from `answers` those to a pause `checkpoint`'s run is past: the run cannot have got
/// past it without them, so they were taken already (by an earlier attempt of this step, whose
/// outcome was lost; a duplicated answer). Whatever the store holds — a step, or a later pause,
/// whose own interrupts are numbered as the pause before its count — they are never an error
/// (a retried answer must not end the run). Whether any was dropped.
pub(super) fn drop_answers_to_earlier_pauses(
    checkpoint: &Checkpoint,
    answers: &mut Answers,
) -> bool {
    let passed = checkpoint.counters.pauses;
    // The interrupts of a stored pause are numbered with the count before it.
    let current = if checkpoint.is_pause() {
        passed.saturating_sub(1)
    } else {
        passed
    };
    let before = answers.len();
    answers.retain(|(id, _)| id.pause().is_none_or(|pause| pause >= current));
    answers.len() < before
}

impl RunOutput {
    /// The output of a paused run, read from its checkpoint (nothing ran).
    pub(super) fn paused(checkpoint: Checkpoint) -> Self {
        let counters = checkpoint.counters;
        RunOutput {
            messages: checkpoint.messages.clone(),
            usage: counters.usage,
            steps: counters.step,
            model_calls: counters.model_calls,
            tool_calls: counters.tool_calls,
            end: EndReason::Interrupted,
            stop_reason: None,
            checkpoint: Some(Box::new(checkpoint)),
            tool_failures: Vec::new(),
            cleanup_error: None,
            run_start: counters.run_start,
            // Read from the store.
            stored: true,
        }
    }
}
