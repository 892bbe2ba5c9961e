//! Where a run stands, written down: the checkpoint of a step kept as the run goes
//! (`Durability::EveryStep`, or a resumed run), and of a pause — an interrupt raised by a hook or
//! a tool call, the position it resumes from, the output that carries it.

use super::{Ending, Next, States};
use crate::agent::{Agent, AgentEvent, Durable};
use crate::context::{Context, Counters, ToolAnswer};
use crate::error::Error;
use crate::interrupt::{
    Checkpoint, CheckpointError, Interrupt, InterruptId, Interruption, Members, Position,
    named_spec,
};
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{Hook, Middleware};
use crate::model::Model;
use crate::shared::Shared;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Whether the run in `cx` keeps a checkpoint after every step.
    pub(super) fn keeps_steps(&self, cx: &Context) -> bool {
        Durable::of_run(cx).is_some_and(|durable| durable.keeps_steps(cx))
    }

    /// The run's history and state at its end, for its tombstone: kept for a run that stores
    /// its steps, whose worker could die after writing the end and before its caller heard of
    /// it (see [`Tombstone`](crate::interrupt::Tombstone)). `None` for any other run — and
    /// when the state does not encode: the tombstone goes without it.
    pub(super) fn last_state(
        &self,
        cx: &Context,
        state: &States<C>,
        ending: &Result<Ending, Error>,
    ) -> Option<Checkpoint> {
        let ended = matches!(
            ending,
            Ok(Ending::Finished | Ending::Jumped | Ending::Cancelled)
        );
        if !ended || cx.held.is_none() || !self.keeps_steps(cx) {
            return None;
        }
        let id = format!("{}:end", cx.run_id);
        self.in_progress(cx, state, id, Position::Step)
            .inspect_err(|error| {
                tracing::warn!(
                    error = %crate::error::Report(error),
                    "the run's last state is not kept with its tombstone"
                );
            })
            .ok()
    }

    /// Writes the checkpoint of the run in progress at `position` to the agent's store.
    pub(super) async fn keep_step(
        &self,
        cx: &Context,
        state: &States<C>,
        position: Position,
    ) -> Result<(), Error> {
        let (Some(durable), Some(held)) = (Durable::of_run(cx), cx.held.as_deref()) else {
            return Ok(());
        };
        let id = format!("{}:step{}", cx.run_id, cx.counters.step);
        let checkpoint = self.in_progress(cx, state, id, position)?;
        durable.put(held, &checkpoint).await?;
        Ok(())
    }

    /// The checkpoint `id` of the run in progress at `position` (no interrupt waits).
    fn in_progress(
        &self,
        cx: &Context,
        state: &States<C>,
        id: String,
        position: Position,
    ) -> Result<Checkpoint, CheckpointError> {
        checkpoint(
            cx,
            state,
            &self.members,
            id,
            cx.counters,
            position,
            Vec::new(),
        )
    }

    /// The interrupt a sequential hook raised, with its id.
    pub(in crate::agent) fn hook_interrupt(
        &self,
        cx: &Context,
        hook: Hook,
        mut interruption: Interruption,
    ) -> Interrupt {
        interruption.raised_by(C::NAME);
        let source = interruption.source.unwrap_or_default();
        Interrupt {
            id: InterruptId::hook(
                cx.counters.pauses,
                cx.counters.step,
                hook,
                interruption.member,
                &source,
            ),
            source,
            hook: Some(hook),
            member: Some(interruption.member),
            step: cx.counters.step,
            tool_call_id: None,
            payload: interruption.payload,
        }
    }

    /// Pauses the run at `position`: the loop ends with its checkpoint.
    pub(super) fn pause(
        &self,
        cx: &Context,
        state: &States<C>,
        position: Position,
        interrupts: Vec<Interrupt>,
    ) -> Result<Next, Error> {
        tracing::debug!(
            step = cx.counters.step,
            interrupts = interrupts.len(),
            "run paused"
        );
        for interrupt in &interrupts {
            cx.emit(|| AgentEvent::Interrupted(Box::new(interrupt.clone())));
        }
        let pauses = cx.counters.pauses.saturating_add(1);
        let id = format!("{}:{pauses}", cx.run_id);
        let counters = Counters {
            pauses,
            ..cx.counters
        };
        let checkpoint = checkpoint(cx, state, &self.members, id, counters, position, interrupts)?;
        Ok(Next::End(Ending::Paused(Box::new(checkpoint))))
    }
}

/// The position of a step's tool `calls` with their `results` so far, and the answers already
/// given to layers of calls that still wait (each stays its layer's until the call completes).
pub(super) fn tools_position(
    cx: &Context,
    calls: Vec<ToolCall>,
    results: Vec<Option<ToolResult>>,
) -> Position {
    let answers = calls
        .iter()
        .zip(&results)
        .filter(|(_, result)| result.is_none())
        .filter_map(|(call, _)| Some((call, cx.tool_answers.get(&call.id)?)))
        .flat_map(|(call, answers)| {
            answers.iter().map(|answered| ToolAnswer {
                call_id: call.id.clone(),
                raiser: answered.raiser,
                answer: answered.answer.clone(),
                asked: answered.asked.clone(),
            })
        })
        .collect();
    Position::Tools {
        calls,
        results,
        answers,
    }
}

/// The checkpoint of the run at `position`: a pause (with its `interrupts`) or a step.
pub(super) fn checkpoint<C: Middleware>(
    cx: &Context,
    state: &States<C>,
    members: &Members,
    id: String,
    counters: Counters,
    mut position: Position,
    interrupts: Vec<Interrupt>,
) -> Result<Checkpoint, CheckpointError> {
    if let Position::BeforeModel { request, .. } = &mut position {
        // A checkpoint keeps no tool schema: the agent that resumes has the specs.
        request.tools = Shared::new(
            request
                .tools
                .iter()
                .map(|spec| named_spec(spec.name.as_str()))
                .collect(),
        );
    }
    Ok(Checkpoint {
        id,
        run_id: cx.run_id.clone(),
        thread: cx.thread_id.clone(),
        chain: members.clone(),
        flat_chain: false,
        messages: cx.messages.clone(),
        state: serde_json::to_value(&state.run).map_err(CheckpointError::State)?,
        thread_state: serde_json::to_value(&state.thread).map_err(CheckpointError::State)?,
        counters,
        position,
        interrupts,
        run_context: cx.run_context.saved_values().clone(),
    })
}
