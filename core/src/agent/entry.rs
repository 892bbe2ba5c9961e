//! The ways into the loop: a new run, a run in a thread, a resume from a checkpoint.

use std::collections::HashMap;
use std::future::Future;

use tracing::Instrument;
use tracing::instrument::Instrumented;

use super::run_loop::{Ending, Entry, fingerprint};
use super::{Agent, EndReason, Input, RunOutput, Thread};
use crate::context::{Context, ResumePoint};
use crate::error::Error;
use crate::interrupt::{Checkpoint, InterruptId, Position, ResumeError};
use crate::middleware::Middleware;
use crate::model::Model;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs the agent on `input` until the model answers without calling tools, a hook jumps to
    /// the end, an interrupt pauses the run, or [`max_steps`](super::AgentBuilder::max_steps) is
    /// reached.
    ///
    /// Order of the hooks: see [`Middleware`]. Tool failures become error results the model
    /// reads. An error from a hook or the model ends the loop; `after_agent` still runs (it
    /// always does once the run has started), then the error is returned. A paused run ends
    /// with [`EndReason::Interrupted`] and a [`Checkpoint`] to [`resume`](Self::resume) from.
    pub async fn run(&self, input: impl Into<Input>) -> Result<RunOutput, Error> {
        let Input(messages) = input.into();
        let mut cx = Context::new(messages);
        let mut state = C::State::default();
        let ending = self.go(&mut cx, &mut state, Entry::Start).await;
        finish(cx, ending)
    }

    /// An empty [`Thread`] for this agent's chain.
    pub fn thread(&self) -> Thread<C::State> {
        Thread::new()
    }

    /// Runs the agent on `input` in `thread`: from the thread's history and chain state, which
    /// the run then updates (also when it pauses).
    pub async fn run_in(
        &self,
        thread: &mut Thread<C::State>,
        input: impl Into<Input>,
    ) -> Result<RunOutput, Error> {
        let Input(input) = input.into();
        let mut cx = Context::new(std::mem::take(&mut thread.messages));
        cx.messages.extend(input);
        cx.counters.runs = thread.runs;
        let mut state = std::mem::take(&mut thread.state);
        let ending = self.go(&mut cx, &mut state, Entry::Start).await;
        self.keep(thread, cx, state, ending)
    }

    /// Resumes a paused run from `checkpoint`, with an answer for each of its pending
    /// interrupts (by [`InterruptId`]). Works in any process, with an agent built like the one
    /// that paused (same chain; a checkpoint from another chain is refused).
    ///
    /// The interrupted hook runs again and reads its answer; hooks that ran before it in the
    /// interrupted step do not run again, and tool calls that completed are never run again.
    pub async fn resume(
        &self,
        checkpoint: Checkpoint,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let (mut cx, mut state, position) = self.restore(checkpoint, answers)?;
        let ending = self.go(&mut cx, &mut state, Entry::Resume(position)).await;
        finish(cx, ending)
    }

    /// [`resume`](Self::resume) a run of `thread`, updating the thread as the run goes on.
    pub async fn resume_in(
        &self,
        thread: &mut Thread<C::State>,
        checkpoint: Checkpoint,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let (mut cx, mut state, position) = self.restore(checkpoint, answers)?;
        let ending = self.go(&mut cx, &mut state, Entry::Resume(position)).await;
        self.keep(thread, cx, state, ending)
    }

    /// The loop, in the run's tracing span. A plain `fn`, not an `async fn`: every state
    /// machine between the run and the deepest wrap hook counts against the compiler's
    /// query-depth limit (see `drive`), and this one would cost a wrapping member.
    fn go<'s>(
        &'s self,
        cx: &'s mut Context,
        state: &'s mut C::State,
        entry: Entry,
    ) -> Instrumented<impl Future<Output = Result<Ending, Error>> + 's> {
        let span = tracing::info_span!("hookchain.run", max_steps = self.max_steps);
        self.drive(cx, state, entry).instrument(span)
    }

    /// Puts a run's history and state back into its thread, and makes its output (the history
    /// is then copied once, for the output).
    fn keep(
        &self,
        thread: &mut Thread<C::State>,
        cx: Context,
        state: C::State,
        ending: Result<Ending, Error>,
    ) -> Result<RunOutput, Error> {
        let output = ending.map(|ending| output(&cx, cx.messages.clone(), ending));
        let paused = matches!(&output, Ok(output) if output.end == EndReason::Interrupted);
        thread.runs = cx.counters.runs + usize::from(!paused);
        thread.messages = cx.messages;
        thread.state = state;
        output
    }

    /// Checks `checkpoint` and `answers` against this agent, and rebuilds the paused run.
    fn restore(
        &self,
        mut checkpoint: Checkpoint,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<(Context, C::State, Position), Error> {
        let agent = fingerprint::<C>();
        if checkpoint.chain != agent {
            return Err(ResumeError::ChainMismatch {
                checkpoint: checkpoint.chain,
                agent,
            }
            .into());
        }
        if checkpoint.interrupts.is_empty() {
            return Err(ResumeError::NothingPending.into());
        }
        let pending: Vec<InterruptId> = checkpoint.pending().cloned().collect();
        let mut answers_by_id: HashMap<InterruptId, serde_json::Value> = HashMap::new();
        for (id, answer) in answers {
            if answers_by_id.insert(id.clone(), answer).is_some() {
                return Err(ResumeError::DuplicateAnswer { id }.into());
            }
        }
        let mut answers = answers_by_id;
        if let Some(id) = answers.keys().find(|id| !pending.contains(id)) {
            let id = id.clone();
            return Err(ResumeError::UnknownInterrupt { id, pending }.into());
        }
        if let Some(id) = pending.iter().find(|id| !answers.contains_key(id)) {
            return Err(ResumeError::MissingAnswer { id: id.clone() }.into());
        }
        let state: C::State =
            serde_json::from_value(checkpoint.state).map_err(ResumeError::State)?;
        let mut cx = Context::new(checkpoint.messages);
        cx.counters = checkpoint.counters;
        if let Position::AfterModel { answered, .. } = &mut checkpoint.position {
            cx.answered = std::mem::take(answered);
        }
        match &checkpoint.position {
            Position::BeforeModel { member, .. } | Position::AfterModel { member, .. } => {
                let interrupt = &checkpoint.interrupts[0];
                let answer = answers.remove(&interrupt.id).unwrap_or_default();
                cx.resume = Some(ResumePoint {
                    at: *member,
                    answer,
                });
            }
            Position::Tools { .. } => {
                for interrupt in &checkpoint.interrupts {
                    let (Some(call_id), Some(answer)) =
                        (&interrupt.tool_call_id, answers.remove(&interrupt.id))
                    else {
                        continue;
                    };
                    let raised_by_tool = interrupt.hook.is_none();
                    cx.tool_answers
                        .insert(call_id.clone(), (answer, raised_by_tool));
                }
            }
        }
        Ok((cx, state, checkpoint.position))
    }
}

/// The output of a run outside a thread: the history moves into it.
fn finish(mut cx: Context, ending: Result<Ending, Error>) -> Result<RunOutput, Error> {
    let ending = ending?;
    let messages = std::mem::take(&mut cx.messages);
    Ok(output(&cx, messages, ending))
}

/// The output of a run that ended as `ending`, with `messages` as its history.
fn output(cx: &Context, messages: Vec<crate::message::Message>, ending: Ending) -> RunOutput {
    let (end, checkpoint) = match ending {
        Ending::Finished => (EndReason::Finished, None),
        Ending::Jumped => (EndReason::Jumped, None),
        Ending::Paused(checkpoint) => (EndReason::Interrupted, Some(*checkpoint)),
    };
    RunOutput {
        messages,
        usage: cx.counters.usage,
        steps: cx.counters.step,
        model_calls: cx.counters.model_calls,
        tool_calls: cx.counters.tool_calls,
        end,
        checkpoint,
    }
}
