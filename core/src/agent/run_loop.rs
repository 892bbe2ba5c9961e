//! The agent loop (the order documented on `Middleware`), kept in one place so its order can be
//! read top to bottom.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{FutureExt, StreamExt};
use tracing::Instrument;

use super::durable::Durable;
use super::innermost::{CallModel, CallTool};
use super::{Agent, AgentEvent, CleanupError};
use crate::__private::Internal;
use crate::chain::ChainChecks;
use crate::context::{CallFrame, Context, Counters, Raiser, Stepping, ToolAnswer, ToolContext};
use crate::error::Error;
use crate::interrupt::{
    Checkpoint, CheckpointError, Interrupt, InterruptId, Interruption, Members, Position,
    named_spec,
};
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::{
    Flow, Hook, Jump, Middleware, ModelNext, ModelWrap, ToolNext, ToolWrap, check_jump,
};
use crate::model::{Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ToolChoice};
use crate::shared::Shared;
use crate::telemetry::{self, Ran};
use crate::tool::{ToolFailure, panic_message};

/// The chain's state during a run: its run-scoped and its thread-scoped part.
pub(super) struct States<C: Middleware> {
    pub(super) run: C::State,
    pub(super) thread: C::ThreadState,
}

/// Where the loop starts.
pub(super) enum Entry {
    /// A new run: `before_agent` first.
    Start,
    /// A resumed run, at the position of its checkpoint (boxed: a position holds a request).
    Resume(Box<Position>),
    /// A stored run cancelled from outside: it ends at once (`after_agent` runs).
    Cancel,
}

/// How the loop ended (errors aside).
pub(super) enum Ending {
    /// The model answered without calling tools.
    Finished,
    /// A hook jumped to the end.
    Jumped,
    /// An interrupt paused the run.
    Paused(Box<Checkpoint>),
    /// A run going one step at a time finished its step; the store holds where it goes on.
    Stepped,
    /// A stored run was cancelled.
    Cancelled,
}

/// Where the loop goes next.
enum Next {
    /// A new step; with a response that stands in for the model call.
    Step(Option<ModelResponse>),
    /// `before_model` and the model call on this request (a step resumed before the model).
    Request(ModelRequest),
    /// `after_model` and what follows on this response.
    Response(ModelResponse),
    /// These tool calls; the results some of them already have.
    Tools {
        calls: Vec<ToolCall>,
        results: Vec<Option<ToolResult>>,
    },
    /// The tool calls waiting in the history, then a step.
    PendingTools,
    /// Leave the loop.
    End(Ending),
}

impl From<Position> for Next {
    /// Where a resumed run goes on.
    fn from(position: Position) -> Self {
        match position {
            Position::BeforeModel { request, .. } => Next::Request(request),
            Position::AfterModel { response, .. } => Next::Response(response),
            Position::Tools { calls, results, .. } => Next::Tools { calls, results },
            Position::Step => Next::Step(None),
        }
    }
}

impl<M: Model, C: Middleware> Agent<M, C> {
    /// The loop itself. The model-call onion is awaited directly in it, not in a helper `async
    /// fn`: every state machine between the run and the deepest wrap hook counts against the
    /// compiler's query-depth limit.
    pub(super) async fn drive(
        &self,
        cx: &mut Context,
        state: &mut States<C>,
        entry: Entry,
    ) -> Result<Ending, Error> {
        let () = ChainChecks::<C>::OK;
        /// `?` for the loop: an error leaves the loop, so `after_agent` still runs.
        macro_rules! attempt {
            ($result:expr) => {
                match $result {
                    Ok(value) => value,
                    Err(error) => break Err(error),
                }
            };
        }
        let mut next = match entry {
            Entry::Start => self.before_agent(cx, state).await,
            Entry::Resume(position) => Ok(Next::from(*position)),
            Entry::Cancel => Ok(Next::End(Ending::Cancelled)),
        };
        let outcome = loop {
            let mut request = match attempt!(next) {
                Next::End(ending) => break Ok(ending),
                Next::PendingTools => {
                    // Calls the model did not just make (the input's, a jump's) pass the same
                    // gate as its answers: `after_model` (approval, limits), then the tools.
                    next = Ok(match take_pending(cx) {
                        Some(answer) => Next::Response(answer),
                        None => Next::Tools {
                            calls: Vec::new(),
                            results: Vec::new(),
                        },
                    });
                    continue;
                }
                Next::Tools { calls, results } => {
                    next = self.run_tools(cx, state, calls, results).await;
                    continue;
                }
                Next::Response(response) => {
                    next = self.end_step(cx, state, response).await;
                    continue;
                }
                Next::Request(request) => request,
                Next::Step(stand_in) => {
                    // The model is never called while a tool call waits for its result (tool
                    // calls left unanswered in the input history, say).
                    if cx.has_pending_tool_calls() {
                        next = Ok(Next::PendingTools);
                        continue;
                    }
                    if stand_in.is_none() && self.keeps_steps(cx) {
                        // Boxed: the loop's own future stays as small for runs that keep none.
                        attempt!(Box::pin(self.keep_step(cx, state, Position::Step)).await);
                        if cx.stepping == Stepping::Started {
                            break Ok(Ending::Stepped);
                        }
                    }
                    attempt!(self.begin_step(cx));
                    if let Some(response) = stand_in {
                        next = Ok(Next::Response(response));
                        continue;
                    }
                    self.request(cx)
                }
            };
            next = match attempt!(self.before_model(cx, state, &mut request).await) {
                Flow::Continue | Flow::Jump(Jump::Model) => {
                    let model_calls = cx.counters.model_calls;
                    let model = CallModel {
                        model: &self.model,
                        chain: &self.chain,
                    };
                    let mut onion = <C::WrapsModel as ModelWrap<C>>::layer(
                        &self.chain,
                        &mut state.run,
                        &mut state.thread,
                        model,
                    );
                    // A wrap hook that panics ends the run with an error, as one that fails.
                    let response = match AssertUnwindSafe(onion.call(cx, request))
                        .catch_unwind()
                        .await
                    {
                        Ok(response) => response,
                        Err(payload) => {
                            Err(Error::panicked(None, Hook::WrapModelCall, payload.as_ref()))
                        }
                    };
                    let reached = cx.counters.model_calls != model_calls;
                    let ran = if reached { Ran::All } else { Ran::First };
                    hooks_ran::<C>(Hook::WrapModelCall, ran, None);
                    if !reached {
                        // A wrap answered without calling `next`: no `chat` span says so. Which
                        // one is not recorded (see `telemetry::HooksRan`): the event names the
                        // candidates.
                        tracing::debug!(
                            hookchain.hook = Hook::WrapModelCall.name(),
                            hookchain.wraps = %telemetry::Wraps::<C>::of(Hook::WrapModelCall),
                            "model call short-circuited"
                        );
                    }
                    let response = attempt!(model_response(response));
                    Ok(Next::Response(response))
                }
                // A response that stands in for the model used no tokens: its usage, if it
                // says any, is not counted (usage counts model calls that happened).
                Flow::Respond(response) => Ok(Next::Response(*response)),
                Flow::Jump(Jump::Tools) => Ok(Next::PendingTools),
                Flow::Jump(Jump::End) => Ok(Next::End(Ending::Jumped)),
                Flow::Interrupt(interruption) => {
                    let member = interruption.member;
                    let position = Position::BeforeModel { request, member };
                    let interrupt = self.hook_interrupt(cx, Hook::BeforeModel, *interruption);
                    self.pause(cx, state, position, vec![interrupt])
                }
            };
        };
        let ending = if let Ok(Ending::Paused(_) | Ending::Stepped) = outcome {
            // The run is not over: `after_agent` runs when it ends, after the resume.
            outcome
        } else {
            close_dangling(cx, "the run ended before this tool call was executed");
            let after_agent = self.after_agent(cx, state).await;
            match (outcome, after_agent) {
                (Ok(end), Ok(())) => Ok(end),
                (Err(error), Ok(())) | (Ok(_), Err(error)) => Err(error),
                (Err(error), Err(also)) => {
                    tracing::warn!(error = %also, "after_agent failed after the run had failed");
                    Err(error)
                }
            }
        };
        let ending = match &self.durable {
            Some(durable) => Box::pin(settle(durable, cx, ending)).await,
            None => ending,
        };
        // The run's span is the current one (`go` instruments this future with it).
        telemetry::record_run_end(
            &tracing::Span::current(),
            cx.counters.usage,
            ending.as_ref().err(),
        );
        ending
    }

    async fn before_agent(&self, cx: &mut Context, state: &mut States<C>) -> Result<Next, Error> {
        if !C::HOOKS.contains(Hook::BeforeAgent) {
            return Ok(Next::Step(None));
        }
        cx.running = None;
        let flow = AssertUnwindSafe(
            self.chain
                .before_agent(cx, &mut state.run, &mut state.thread),
        )
        .catch_unwind()
        .await;
        hooks_ran::<C>(Hook::BeforeAgent, Ran::UpTo(cx.running), None);
        let flow = flow
            .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::BeforeAgent, payload)))
            .map_err(|error| error.attribute(C::NAME, Hook::BeforeAgent))?;
        check_jump::<C>(&flow, Hook::BeforeAgent)?;
        Ok(match flow {
            Flow::Continue | Flow::Jump(Jump::Model) => Next::Step(None),
            Flow::Respond(response) => Next::Step(Some(*response)),
            Flow::Jump(Jump::Tools) => Next::PendingTools,
            Flow::Jump(Jump::End) => Next::End(Ending::Jumped),
            // The run cannot pause before it has started.
            Flow::Interrupt(mut interruption) => {
                interruption.raised_by(C::NAME);
                interruption.left(Hook::BeforeAgent);
                return Err(Error::Interrupted(interruption));
            }
        })
    }

    /// Runs every `after_agent` hook: once the run has started, whatever ended it.
    async fn after_agent(&self, cx: &mut Context, state: &mut States<C>) -> Result<(), Error> {
        if !C::HOOKS.contains(Hook::AfterAgent) {
            return Ok(());
        }
        cx.running = None;
        let outcome = AssertUnwindSafe(self.chain.after_agent(
            cx,
            &mut state.run,
            &mut state.thread,
        ))
        .catch_unwind()
        .await;
        // Every member's `after_agent` runs, whatever an earlier one did.
        hooks_ran::<C>(Hook::AfterAgent, Ran::All, None);
        outcome
            .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::AfterAgent, payload)))
            .map_err(|error| error.attribute(C::NAME, Hook::AfterAgent))
    }

    /// Opens a step: enforces `max_steps`, counts the step.
    fn begin_step(&self, cx: &mut Context) -> Result<(), Error> {
        if cx.counters.step >= self.max_steps {
            return Err(Error::MaxStepsExceeded {
                max_steps: self.max_steps,
            });
        }
        cx.counters.step = cx.counters.step.saturating_add(1);
        if cx.stepping == Stepping::NotStarted {
            cx.stepping = Stepping::Started;
        }
        tracing::debug!(step = cx.counters.step, "step");
        Ok(())
    }

    /// Closes a step: `after_model`, the response into the history. Returns where to go next
    /// (its tool calls, most often).
    async fn end_step(
        &self,
        cx: &mut Context,
        state: &mut States<C>,
        mut response: ModelResponse,
    ) -> Result<Next, Error> {
        // Every call of a run has its own id, and so its own idempotency key.
        let calls = &mut response.message.tool_calls;
        if !calls.is_empty() {
            for (old, new) in crate::message::rename_repeated_ids(&cx.messages, calls) {
                tracing::debug!(
                    old,
                    new,
                    "a tool call's id repeated an earlier one's: renamed"
                );
                for answer in cx
                    .answered
                    .iter_mut()
                    .filter(|answer| answer.call_id == old)
                {
                    answer.call_id.clone_from(&new);
                }
            }
        }
        let flow = self.after_model(cx, state, &mut response).await?;
        if let Flow::Interrupt(interruption) = flow {
            let member = interruption.member;
            let interrupt = self.hook_interrupt(cx, Hook::AfterModel, *interruption);
            // Results hooks supplied before the pause travel with the checkpoint.
            let answered = std::mem::take(&mut cx.answered);
            let position = Position::AfterModel {
                response,
                member,
                answered,
            };
            return self.pause(cx, state, position, vec![interrupt]);
        }
        if let Some(call) = crate::message::repeated_call_id(&response.message.tool_calls) {
            return Err(repeated_id(call));
        }
        let replayed = std::mem::take(&mut cx.replaying_pending);
        if let Some(events) = cx.events.as_mut().filter(|_| !replayed) {
            events.answer_kept(&response);
        }
        cx.delivered().await;
        let calls = response.message.tool_calls.clone();
        cx.stop_reason = Some(response.stop_reason);
        cx.messages.push(response.message);
        Ok(match flow {
            Flow::Jump(Jump::Model) => {
                skip_calls(cx, &calls, "a middleware sent the run back to the model");
                Next::Step(None)
            }
            Flow::Jump(Jump::End) => {
                skip_calls(cx, &calls, "a middleware ended the run");
                Next::End(Ending::Jumped)
            }
            _ if calls.is_empty() => Next::End(Ending::Finished),
            _ => {
                let results = vec![None; calls.len()];
                Next::Tools { calls, results }
            }
        })
    }

    /// The request of the next model call, built from the history.
    fn request(&self, cx: &Context) -> ModelRequest {
        ModelRequest {
            model: None,
            // Shared, not copied: a step costs the same whatever the history's length.
            messages: cx.messages.clone(),
            system_prompt: self.system_prompt.clone(),
            tools: self.tools.shared_specs(),
            response_format: self.response_format.clone(),
            tool_choice: ToolChoice::Auto,
            settings: self.settings.clone(),
            prompt_cache: None,
        }
    }

    async fn before_model(
        &self,
        cx: &mut Context,
        state: &mut States<C>,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        let States { run, thread } = state;
        // A chain whose `before_model` hooks are all plain `fn`s is called without a future.
        cx.running = None;
        let resumed_at = cx.resume.as_ref().map(|point| point.at);
        let flow = if !C::HOOKS.contains(Hook::BeforeModel) {
            Ok(Flow::Continue)
        } else if C::SYNC_HOOKS.contains(Hook::BeforeModel) {
            catch_unwind(AssertUnwindSafe(|| {
                self.chain
                    .before_model_sync(cx, run, thread, request, Internal::new())
            }))
            .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::BeforeModel, payload)))
        } else {
            AssertUnwindSafe(self.chain.before_model(cx, run, thread, request))
                .catch_unwind()
                .await
                .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::BeforeModel, payload)))
        };
        hooks_ran::<C>(Hook::BeforeModel, Ran::UpTo(cx.running), resumed_at);
        // A resume point is for the hooks of the step it interrupted: spent once they ran, even
        // if one failed.
        cx.resume = None;
        let flow = flow.map_err(|error| error.attribute(C::NAME, Hook::BeforeModel))?;
        check_jump::<C>(&flow, Hook::BeforeModel)?;
        Ok(flow)
    }

    pub(super) async fn after_model(
        &self,
        cx: &mut Context,
        state: &mut States<C>,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        let States { run, thread } = state;
        cx.running = None;
        let resumed_at = cx.resume.as_ref().map(|point| point.at);
        let flow = if !C::HOOKS.contains(Hook::AfterModel) {
            Ok(Flow::Continue)
        } else if C::SYNC_HOOKS.contains(Hook::AfterModel) {
            catch_unwind(AssertUnwindSafe(|| {
                self.chain
                    .after_model_sync(cx, run, thread, response, Internal::new())
            }))
            .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::AfterModel, payload)))
        } else {
            AssertUnwindSafe(self.chain.after_model(cx, run, thread, response))
                .catch_unwind()
                .await
                .unwrap_or_else(|payload| Err(panicked::<C>(cx, Hook::AfterModel, payload)))
        };
        hooks_ran::<C>(Hook::AfterModel, Ran::UpTo(cx.running), resumed_at);
        cx.resume = None;
        let flow = flow.map_err(|error| error.attribute(C::NAME, Hook::AfterModel))?;
        check_jump::<C>(&flow, Hook::AfterModel)?;
        match flow {
            Flow::Respond(replacement) => {
                *response = *replacement;
                Ok(Flow::Continue)
            }
            flow => Ok(flow),
        }
    }

    /// Runs the tool calls of a step through the tool onion, concurrently (bounded), and, when
    /// none interrupted, appends one result message per call, in call order. `results[i]` holds
    /// what is already known of `calls[i]`: completed before a pause, or supplied by a hook.
    /// Goes on to the next step, or pauses when a call interrupted the run.
    async fn run_tools(
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
        let waiting: Vec<usize> = (0..calls.len()).filter(|&i| results[i].is_none()).collect();
        let keeps_steps = self.keeps_steps(cx);
        if keeps_steps && !waiting.is_empty() {
            // The model's answer is kept: a worker that resumes does not call the model again.
            let position = tools_position(cx, calls.clone(), results.clone());
            Box::pin(self.keep_step(cx, state, position)).await?;
        }
        if cx.events.is_some() {
            // The consumer hears of every call of the step before any runs.
            for &i in &waiting {
                cx.emit(|| AgentEvent::ToolCallStarted(calls[i].clone()));
            }
            cx.delivered().await;
        }
        let outcomes: Vec<Result<ToolResult, Interruption>> = {
            let cx = &*cx;
            if let [i] = waiting[..] {
                // The usual step calls one tool: awaited directly, without the concurrent
                // stream's tasks and allocations.
                vec![self.call_through(cx, state, calls[i].clone()).await]
            } else if keeps_steps {
                Box::pin(self.run_tools_kept(cx, state, &calls, &results, &waiting)).await?
            } else {
                // `buffered` keeps the calls' order: the outcomes line up with `waiting`.
                let calls = waiting
                    .iter()
                    .copied()
                    .map(|i| self.call_through(cx, state, calls[i].clone()));
                futures::stream::iter(calls)
                    .buffered(self.tool_concurrency)
                    .collect()
                    .await
            }
        };
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
    async fn run_tools_kept(
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
            if let Ok(result) = &outcome {
                progress[i] = Some(result.clone());
                let position = tools_position(cx, calls.to_vec(), progress.clone());
                self.keep_step(cx, state, position).await?;
            }
            outcomes[i] = Some(outcome);
        }
        Ok(waiting.iter().filter_map(|&i| outcomes[i].take()).collect())
    }

    /// Whether the run in `cx` keeps a checkpoint after every step.
    fn keeps_steps(&self, cx: &Context) -> bool {
        self.durable
            .as_ref()
            .is_some_and(|durable| durable.keeps_steps(cx))
    }

    /// Writes the checkpoint of the run in progress at `position` to the agent's store.
    async fn keep_step(
        &self,
        cx: &Context,
        state: &States<C>,
        position: Position,
    ) -> Result<(), Error> {
        let (Some(durable), Some(held)) = (&self.durable, cx.held.as_deref()) else {
            return Ok(());
        };
        let id = format!("{}:step{}", cx.run_id, cx.counters.step);
        let checkpoint = checkpoint(
            cx,
            state,
            &self.members,
            id,
            cx.counters,
            position,
            Vec::new(),
        )?;
        durable.put(held, &checkpoint).await?;
        Ok(())
    }

    /// One tool call through the chain's onion; every failure becomes an error result, an
    /// interrupt raised anywhere on the call's path comes back as such (whatever the wraps made
    /// of the call's result).
    pub(super) async fn call_through(
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
        let executed = executed.load(Ordering::Relaxed);
        let ran = if executed { Ran::All } else { Ran::First };
        hooks_ran::<C>(Hook::WrapToolCall, ran, None);
        if !executed {
            // A wrap answered without calling `next` (or paused the call first).
            tracing::debug!(
                hookchain.hook = Hook::WrapToolCall.name(),
                hookchain.wraps = %telemetry::Wraps::<C>::of(Hook::WrapToolCall),
                "tool call short-circuited"
            );
        }
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

    /// The interrupt a sequential hook raised, with its id.
    pub(super) fn hook_interrupt(
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
    fn pause(
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
            cx.emit(|| AgentEvent::Interrupted(interrupt.clone()));
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
fn tools_position(
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

/// Writes how the run ended to the agent's store: a pause's checkpoint (its key freed for the
/// answers), or the run's end (a tombstone, if it stored anything). A failed run's key is
/// released (its last checkpoint kept for a worker to resume), unless it was lost already. A
/// run that ended keeps its output when the store fails after it: the error goes beside it.
async fn settle(
    durable: &Durable,
    cx: &mut Context,
    ending: Result<Ending, Error>,
) -> Result<Ending, Error> {
    let Some(held) = cx.held.as_deref() else {
        return ending;
    };
    match ending {
        Ok(Ending::Paused(checkpoint)) => {
            durable.put(held, &checkpoint).await?;
            Ok(Ending::Paused(checkpoint))
        }
        Ok(Ending::Stepped) => {
            // The step's checkpoint is stored: the key is free for the next step, anywhere.
            durable.release(&held.key, &held.lease).await;
            Ok(Ending::Stepped)
        }
        Ok(ending) => {
            let how = match ending {
                Ending::Jumped => "jumped",
                Ending::Cancelled => "cancelled",
                _ => "finished",
            };
            let stored = durable.keeps_steps(cx);
            if let Err(error) = durable.ended(held, cx, how, stored).await {
                tracing::warn!(
                    key = held.key,
                    error = %crate::error::Report(&error),
                    "the run ended, but its store could not be cleaned up"
                );
                cx.cleanup_error = Some(CleanupError(std::sync::Arc::new(error)));
            }
            Ok(ending)
        }
        Err(error) => {
            let lost = matches!(&error, Error::Checkpoint(error)
                if matches!(**error, CheckpointError::Claimed { .. } | CheckpointError::LeaseLost { .. }));
            if !lost {
                durable.release(&held.key, &held.lease).await;
            }
            Err(error)
        }
    }
}

/// The checkpoint of the run at `position`: a pause (with its `interrupts`) or a step.
fn checkpoint<C: Middleware>(
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

/// Two calls of one answer with one id cannot both be answered (a provider refuses such a
/// history): the answer is refused before any tool runs, the fix named. Out of line: no run
/// that goes well pays for building the message.
#[cold]
fn repeated_id(call: &ToolCall) -> Error {
    ModelError::new(
        ModelErrorKind::MalformedResponse,
        format!(
            "the model's answer makes two tool calls with the id `{}`, and none ran \
             (`ToolCallRepair` makes such ids unique)",
            call.id
        ),
    )
    .into()
}

/// The interrupt raised on the path of `call`, with its id.
pub(super) fn tool_interrupt(
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

/// The error of a panic in `hook`, naming the member that ran last (the chain itself, if it is
/// one middleware).
fn panicked<C: Middleware>(
    cx: &mut Context,
    hook: Hook,
    payload: Box<dyn std::any::Any + Send>,
) -> Error {
    let member = cx.running.take().unwrap_or(C::NAME);
    Error::panicked(Some(member), hook, payload.as_ref())
}

/// The `TRACE` events of the members of `C` that ran `hook`, once it returned (see
/// [`telemetry::HooksRan`]).
#[inline]
fn hooks_ran<C: Middleware>(hook: Hook, ran: Ran, resumed_at: Option<usize>) {
    if C::HOOKS.contains(hook) && telemetry::hooks_traced() {
        telemetry::HooksRan {
            hook,
            ran,
            resumed_at,
        }
        .emit::<C>();
    }
}

/// The onion's answer; an unnamed error from a wrap hook is given the hook at least.
fn model_response(response: Result<ModelResponse, Error>) -> Result<ModelResponse, Error> {
    response.map_err(|error| error.attribute_hook(Hook::WrapModelCall))
}

/// The result a hook supplied for `call_id`, if any.
pub(super) fn take_answer(cx: &mut Context, call_id: &str) -> Option<ToolResult> {
    let at = cx
        .answered
        .iter()
        .position(|answer| answer.call_id == call_id)?;
    Some(cx.answered.swap_remove(at))
}

/// Takes the calls waiting in the history (the input's last answer, or the one a jump runs)
/// out of it, as the answer `after_model` reads — its results already in the history become
/// results supplied for their calls — so that they pass the gate a model's answer passes before
/// they run. `None` when nothing waits.
fn take_pending(cx: &mut Context) -> Option<ModelResponse> {
    if !cx.has_pending_tool_calls() {
        return None;
    }
    let at = cx.messages.iter().rposition(Message::has_tool_calls)?;
    let mut taken = cx.messages.split_off(at).into_iter();
    let message = taken.next()?;
    for result in taken {
        let call_id = result.tool_call_id.clone().unwrap_or_default();
        // The whole content: an image or JSON a tool returned is part of its result.
        cx.answered.push(if result.is_error {
            ToolResult::error(call_id, result.content)
        } else {
            ToolResult::ok(call_id, result.content)
        });
    }
    cx.replaying_pending = true;
    Some(ModelResponse::new(
        message,
        crate::model::StopReason::ToolUse,
    ))
}

/// Gives each of `calls` its result: the one a hook supplied, or an error saying it was not
/// executed, and why.
fn skip_calls(cx: &mut Context, calls: &[ToolCall], why: &str) {
    for call in calls {
        let result =
            take_answer(cx, &call.id).unwrap_or_else(|| not_executed(&call.id, &call.name, why));
        add_message(cx, Message::tool(result).with_name(&call.name));
    }
    cx.counters.tool_calls = cx.counters.tool_calls.saturating_add(calls.len());
    cx.answered.clear();
}

/// The error result of the call `call_id` of `tool`, which did not run, and why.
pub(super) fn not_executed(call_id: &str, tool: &str, why: &str) -> ToolResult {
    ToolResult::error(
        call_id,
        format!("tool call `{tool}` was not executed: {why}"),
    )
}

/// Adds `message` to the history, and tells the consumer of a streamed run.
fn add_message(cx: &mut Context, message: Message) {
    cx.emit(|| AgentEvent::MessageAdded(message.clone()));
    cx.messages.push(message);
}

/// Answers every tool call still waiting in the history, so none is left dangling.
fn close_dangling(cx: &mut Context, why: &str) {
    if !cx.has_pending_tool_calls() {
        return;
    }
    let pending = cx.pending_tool_calls();
    skip_calls(cx, &pending, why);
}
