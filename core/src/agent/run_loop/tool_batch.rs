//! A step's tool calls: run through the chain's tool onion — one awaited directly, several
//! concurrently and bounded, each kept as it completes when the run keeps its steps — their
//! results appended in call order, or the run paused when a call interrupted it.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{FutureExt, StreamExt};
use tracing::Instrument;

use super::one_or_many::OneOrMany;
use super::pausing::tools_position;
use super::{Ending, Next, States, add_message, wraps_ran};
use crate::agent::innermost::CallTool;
use crate::agent::{Agent, AgentEvent, Durable};
use crate::context::{CallFrame, Context, Raiser, ToolContext};
use crate::error::Error;
use crate::interrupt::{CheckpointError, Interrupt, InterruptId, Interruption};
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::{Hook, Middleware, ToolNext, ToolWrap};
use crate::model::Model;
use crate::telemetry;
use crate::tool::{ToolFailure, panic_message};

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs the tool calls of a step through the tool onion, concurrently (bounded), and, when
    /// none interrupted, appends one result message per call, in call order. `results[i]` holds
    /// what is already known of `calls[i]`: completed before a pause, or supplied by a hook.
    /// Goes on to the next step, or pauses when a call interrupted the run.
    pub(super) async fn run_tools(
        &self,
        cx: &mut Context,
        state: &States<C>,
        calls: Vec<ToolCall>,
        mut results: Vec<Option<ToolResult>>,
    ) -> Result<Next, Error> {
        for (call, result) in calls.iter().zip(&mut results) {
            if result.is_none() {
                *result = take_answer(cx, &call.id);
            }
        }
        cx.answered.clear();
        let waiting = OneOrMany::collect((0..calls.len()).filter(|&i| results[i].is_none()));
        let keeps_steps = self.keeps_steps(cx);
        if keeps_steps && !waiting.as_slice().is_empty() {
            // The model's answer is kept: a worker that resumes does not call the model again.
            let position = tools_position(cx, calls.clone(), results.clone());
            Box::pin(self.keep_step(cx, state, position)).await?;
        }
        if cx.events.is_some() {
            // The consumer hears of every call of the step before any runs.
            for &i in waiting.as_slice() {
                cx.emit(|| AgentEvent::ToolCallStarted(calls[i].clone()));
            }
            cx.delivered().await;
        }
        let outcomes: OneOrMany<Result<ToolResult, Interruption>> = {
            let cx = &*cx;
            match &waiting {
                // The usual step calls one tool: awaited directly, without the concurrent
                // stream's tasks and allocations.
                OneOrMany::One(i) => {
                    OneOrMany::One(self.call_through(cx, state, calls[*i].clone()).await)
                }
                OneOrMany::Many(waiting) if keeps_steps => OneOrMany::Many(
                    Box::pin(self.run_tools_kept(cx, state, &calls, &results, waiting)).await?,
                ),
                OneOrMany::Many(waiting) => {
                    // `buffered` keeps the calls' order: the outcomes line up with `waiting`.
                    let calls = waiting
                        .iter()
                        .copied()
                        .map(|i| self.call_through(cx, state, calls[i].clone()));
                    OneOrMany::Many(
                        futures::stream::iter(calls)
                            .buffered(self.tool_concurrency)
                            .collect()
                            .await,
                    )
                }
            }
        };
        lease_held(cx)?;
        let mut interrupts = Vec::new();
        for (i, outcome) in waiting.into_iter().zip(outcomes) {
            match outcome {
                Ok(result) => results[i] = Some(result),
                Err(interruption) => interrupts.push(tool_interrupt(cx, &calls[i], interruption)),
            }
        }
        cx.take_tool_usage();
        if !interrupts.is_empty() {
            // A layer that asked again has its new question: its earlier answer is spent.
            for interrupt in &interrupts {
                let Some(call_id) = &interrupt.tool_call_id else {
                    continue;
                };
                let raiser = interrupt.member.map_or(Raiser::Tool, Raiser::Member);
                if let Some(answers) = cx.tool_answers.get_mut(call_id) {
                    answers.retain(|answered| answered.raiser != raiser);
                }
            }
            let position = tools_position(cx, calls, results);
            cx.tool_answers.clear();
            return self.pause(cx, state, position, interrupts);
        }
        cx.tool_answers.clear();
        cx.counters.tool_calls = cx.counters.tool_calls.saturating_add(results.len());
        // A call that answers for the whole run ends it (the first, in call order).
        let final_answer = results
            .iter()
            .flatten()
            .find_map(|result| result.ends_run.clone());
        for (call, result) in calls.iter().zip(results) {
            let Some(result) = result else { continue };
            if let Some(failure) = &result.failure {
                cx.failures.push(ToolFailure::clone(failure));
            }
            add_message(cx, Message::tool(result).with_name(&call.name));
        }
        if let Some(answer) = final_answer {
            add_message(cx, answer.into_message());
            cx.delivered().await;
            return Ok(Next::End(Ending::Finished));
        }
        cx.delivered().await;
        Ok(Next::Step(None))
    }

    /// The waiting calls of a step whose run keeps every step: run concurrently as in
    /// [`run_tools`](Self::run_tools), with a checkpoint as each completes (so a worker that
    /// resumes runs only the calls that had not). Their outcomes, in the order of `waiting`.
    pub(super) async fn run_tools_kept(
        &self,
        cx: &Context,
        state: &States<C>,
        calls: &[ToolCall],
        results: &[Option<ToolResult>],
        waiting: &[usize],
    ) -> Result<Vec<Result<ToolResult, Interruption>>, Error> {
        let mut progress = results.to_vec();
        let mut outcomes: Vec<Option<Result<ToolResult, Interruption>>> = vec![None; calls.len()];
        let calls_running: Vec<_> = waiting
            .iter()
            .copied()
            .map(|i| {
                self.call_through(cx, state, calls[i].clone())
                    .map(move |outcome| (i, outcome))
            })
            .collect();
        let mut running =
            futures::stream::iter(calls_running).buffer_unordered(self.tool_concurrency);
        while let Some((i, outcome)) = running.next().await {
            // A call kept from starting for want of lease is not kept as its result.
            lease_held(cx)?;
            if let Ok(result) = &outcome {
                progress[i] = Some(result.clone());
                let position = tools_position(cx, calls.to_vec(), progress.clone());
                self.keep_step(cx, state, position).await?;
            }
            outcomes[i] = Some(outcome);
        }
        Ok(waiting.iter().filter_map(|&i| outcomes[i].take()).collect())
    }

    /// One tool call through the chain's onion; every failure becomes an error result, an
    /// interrupt raised anywhere on the call's path comes back as such (whatever the wraps made
    /// of the call's result).
    pub(in crate::agent) async fn call_through(
        &self,
        cx: &Context,
        state: &States<C>,
        call: ToolCall,
    ) -> Result<ToolResult, Interruption> {
        let span = telemetry::execute_tool_span(&call.name, &call.id);
        let answers = cx.tool_answers.get(&call.id).cloned().unwrap_or_default();
        let frame = CallFrame::with_answers(call.id.clone(), call.name.clone(), answers);
        let executed = AtomicBool::new(false);
        let onion = async {
            let tool = CallTool {
                tools: &self.tools,
                durable: Durable::of_run(cx),
                execution: self.tool_execution,
                executed: &executed,
            };
            let mut onion = <C::WrapsTool as ToolWrap<C>>::layer(
                &self.chain,
                &state.run,
                &state.thread,
                0,
                tool,
            );
            onion.call(ToolContext::new(cx, &frame), call).await
        };
        // A panic in a wrap hook must not take the run down either. The call runs in its own
        // span: the calls of a step run concurrently, each polled in turn in the run's span.
        let result = AssertUnwindSafe(onion)
            .catch_unwind()
            .instrument(span.clone())
            .await;
        let _in_call = span.enter();
        // Not executed: a wrap answered without calling `next` (or paused the call first).
        wraps_ran::<C>(Hook::WrapToolCall, executed.load(Ordering::Relaxed));
        let (id, tool, pause, finish) = frame.into_parts();
        if let Some(interruption) = pause {
            return Err(interruption);
        }
        let mut result = match result {
            Ok(result) => ToolResult {
                call_id: id,
                ends_run: finish.map(Box::new),
                ..result
            },
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                ToolResult::failed(id, ToolFailure::from_middleware_panic(&tool, message))
            }
        };
        telemetry::record_tool_result(&span, &result);
        if let Some(failure) = result.failure() {
            // The error, every cause once, for the operator — of bad arguments only their kind
            // and field names, never the values (`ToolFailure::for_log`); the model reads the
            // safe message (or what the agent's policy makes of the failure).
            tracing::warn!(
                tool = %failure.tool(),
                call_id = %result.call_id,
                kind = ?failure.kind(),
                error = %failure.for_log(),
                "tool call failed"
            );
            if let Some(policy) = &self.tool_error_message {
                result.content = policy.message(failure).into();
            }
        }
        cx.emit(|| AgentEvent::ToolCallFinished(result.clone()));
        Ok(result)
    }
}

/// The interrupt raised on the path of `call`, with its id.
pub(in crate::agent) fn tool_interrupt(
    cx: &Context,
    call: &ToolCall,
    interruption: Interruption,
) -> Interrupt {
    let source = interruption.source.unwrap_or_default();
    let member = (!interruption.by_tool).then_some(interruption.member);
    Interrupt {
        id: InterruptId::tool(
            cx.counters.pauses,
            cx.counters.step,
            &call.id,
            member.map(|member| (member, source.as_str())),
        ),
        hook: member.map(|_| Hook::WrapToolCall),
        member,
        source,
        step: cx.counters.step,
        tool_call_id: Some(call.id.clone()),
        payload: interruption.payload,
    }
}

/// The result a hook supplied for `call_id`, if any.
pub(in crate::agent) fn take_answer(cx: &mut Context, call_id: &str) -> Option<ToolResult> {
    let at = cx
        .answered
        .iter()
        .position(|answer| answer.call_id == call_id)?;
    Some(cx.answered.swap_remove(at))
}

/// The error result of the call `call_id` of `tool`, which did not run, and why.
/// `Ok` unless a call of the step was kept from starting because the run's lease was running
/// out: then the run stops here, its step's results not kept (the calls that did not start run
/// when the run is resumed).
fn lease_held(cx: &Context) -> Result<(), Error> {
    match cx.held.as_deref() {
        Some(held) if held.watch.ran_short() => Err(CheckpointError::LeaseRunningOut {
            key: held.key.clone(),
        }
        .into()),
        _ => Ok(()),
    }
}

pub(in crate::agent) fn not_executed(call_id: &str, tool: &str, why: &str) -> ToolResult {
    ToolResult::error(
        call_id,
        format!("tool call `{tool}` was not executed: {why}"),
    )
}
