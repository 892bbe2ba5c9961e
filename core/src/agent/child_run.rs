//! A sub-agent's run inside its parent's tool call, under a run id that is the parent call's
//! idempotency key: when the parent's call runs again (its worker died), a child with a store
//! goes on from what its first attempt stored rather than starting over — started or resumed.

use std::sync::Arc;

use super::Durable;
use super::entry::finish;
use super::run_loop::Entry;
use super::signing::Admitted;
use super::step::drop_answers_to_earlier_pauses;
use super::{Agent, RunEvents, RunOutput};
use crate::context::{ParentStore, RunContext, RunStore};
use crate::error::Error;
use crate::interrupt::{Checkpoint, InterruptId, ResumeError};
use crate::message::Message;
use crate::middleware::Middleware;
use crate::model::Model;
use crate::pause::Held;
use crate::run::EventQueue;

type Answers = Vec<(InterruptId, serde_json::Value)>;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// The child's run `run_id` on `messages`. Kept in a store — its parent's (a sub-agent
    /// has none of its own) — every step of it is kept (the parent's call may run again), and
    /// a run again finds under its key what the first attempt stored: its last step (it goes
    /// on from there, its completed calls never run again), its pause (returned as it stands),
    /// or its end (handed back from its tombstone; nothing runs).
    pub(super) async fn run_as_child(
        &self,
        mut run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        run_id: String,
        messages: Vec<Message>,
    ) -> Result<RunOutput, Error> {
        let Some(durable) = self.parents_store(&mut run_context) else {
            return self
                .start_run(run_context, events, Some(run_id), messages, None)
                .await;
        };
        let run_context = run_context.with_steps_kept();
        let (held, stored) = match Box::pin(durable.claim_for_step(&run_id, &self.worker)).await {
            Ok(claimed) => claimed,
            Err(refused) => return self.end_of_run(run_context, &run_id, refused),
        };
        match stored {
            Some(checkpoint) => {
                self.go_on_as_child(run_context, events, durable, held, checkpoint, Vec::new())
                    .await
            }
            None => {
                let held = Some((durable, held));
                self.start_run(run_context, events, Some(run_id), messages, held)
                    .await
            }
        }
    }

    /// The child's run resumed from `from` (its pause, as its parent's checkpoint holds it)
    /// with `answers`, kept in its parent's store `durable`. The store holds the run's latest:
    /// the pause itself, or — when the parent's call runs again after its worker died — what
    /// the first resume got to, a step (it goes on from there; the answers, taken already,
    /// are dropped), a later pause (returned as it stands) or the run's end (handed back).
    pub(super) async fn resume_as_child(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        durable: Arc<Durable>,
        from: Admitted,
        answers: Answers,
    ) -> Result<RunOutput, Error> {
        let run_context = run_context.with_steps_kept();
        let key = match &from {
            Admitted::Checkpoint(checkpoint) => checkpoint.key().to_owned(),
            Admitted::Stored(key) => key.clone(),
        };
        let (held, stored) = match Box::pin(durable.claim_for_step(&key, &self.worker)).await {
            Ok(claimed) => claimed,
            Err(refused) => return self.end_of_run(run_context, &key, refused),
        };
        let checkpoint = match (stored, from) {
            (Some(stored), _) => stored,
            // Not kept (a pause from before the child's runs were): the one given.
            (None, Admitted::Checkpoint(given)) => *given,
            (None, Admitted::Stored(key)) => {
                Box::pin(durable.release(&held.key, &held.lease)).await;
                return Err(ResumeError::NotStored { key }.into());
            }
        };
        self.go_on_as_child(run_context, events, durable, held, checkpoint, answers)
            .await
    }

    /// The child's run goes on from `checkpoint`, its key `held` in `durable`: a pause left
    /// unanswered (the answers were to an earlier one) is returned as it stands.
    async fn go_on_as_child(
        &self,
        run_context: RunContext,
        events: Option<Arc<EventQueue>>,
        durable: Arc<Durable>,
        held: Held,
        checkpoint: Checkpoint,
        mut answers: Answers,
    ) -> Result<RunOutput, Error> {
        drop_answers_to_earlier_pauses(&checkpoint, &mut answers);
        if checkpoint.is_pause() && answers.is_empty() {
            Box::pin(durable.release(&held.key, &held.lease)).await;
            return Ok(RunOutput::paused(checkpoint));
        }
        let restored = self.restore(run_context, checkpoint, answers);
        if restored.is_err() {
            Box::pin(durable.release(&held.key, &held.lease)).await;
        }
        let (mut cx, mut state, position) = restored?;
        cx.events = events.map(RunEvents::boxed);
        cx.durable = Some(RunStore::new(durable));
        let entry = Entry::Resume(Box::new(position));
        let ending = self.go_held(&mut cx, &mut state, entry, Some(held)).await;
        finish(cx, ending)
    }

    /// The parent's store a sub-agent without one of its own keeps its runs in, if it was
    /// given one (taken out of the context either way).
    pub(super) fn parents_store(&self, run_context: &mut RunContext) -> Option<Arc<Durable>> {
        let parents = run_context.take::<ParentStore>()?;
        self.durable.is_none().then(|| parents.0.shared())?
    }
}
