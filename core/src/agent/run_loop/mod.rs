//! The agent loop: `drive` goes from `before_agent` to `after_agent` in the
//! order documented on `Middleware`, and reads top to bottom in one function — the model call
//! is awaited in it; each phase it goes through is a file of its own: the model part of a step
//! (`model_step`), a step's tool calls (`tool_batch`), a step kept or a run paused (`pausing`),
//! and the run settled with its checkpointer at the end (`settle`). The loop owns where the run
//! goes next (`Next`) and the chain's state during the run (`States`).

mod model_step;
mod one_or_many;
mod pausing;
mod settle;
mod tool_batch;

use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use super::innermost::CallModel;
use super::{Agent, AgentEvent};
use crate::agent::Durable;
use crate::chain::ChainChecks;
use crate::context::{Context, Stepping};
use crate::error::Error;
use crate::interrupt::{Checkpoint, Position};
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::{Flow, Hook, Jump, Middleware, ModelNext, ModelWrap, check_jump};
use crate::model::{Model, ModelRequest, ModelResponse};
use crate::telemetry::{self, Ran};

use model_step::skip_calls;
use settle::settle;
pub(super) use tool_batch::{not_executed, take_answer, tool_interrupt};

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
///
/// Small (48 bytes): a step goes through several of these, each moved out of the future that
/// made it and into the loop. The request and the response are boxed, for they travel here only
/// on the rare paths (a resume, a hook's stand-in, calls waiting in the input); the model's own
/// answer goes from the onion straight into `end_step`.
enum Next {
    /// A new step; with a response that stands in for the model call.
    Step(Option<Box<ModelResponse>>),
    /// `before_model` and the model call on this request (a step resumed before the model).
    Request(Box<ModelRequest>),
    /// `after_model` and what follows on this response.
    Response(Box<ModelResponse>),
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
            Position::BeforeModel { request, .. } => Next::Request(Box::new(request)),
            Position::AfterModel { response, .. } => Next::Response(Box::new(response)),
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
        /// `?` for the loop: an error leaves the loop (`$run`), so `after_agent` still runs.
        macro_rules! attempt {
            ($run:lifetime, $result:expr) => {
                match $result {
                    Ok(value) => value,
                    Err(error) => break $run Err(error),
                }
            };
        }
        let mut next = match entry {
            Entry::Start => self.before_agent(cx, state).await,
            Entry::Resume(position) => Ok(Next::from(*position)),
            Entry::Cancel => Ok(Next::End(Ending::Cancelled)),
        };
        let outcome = 'run: loop {
            // The model's answer for the step's end: one place awaits `end_step`, whichever way
            // the answer came (each place that awaits a future keeps room for it in the loop's).
            let answer: ModelResponse = 'answer: {
                // Matched in place (not `attempt!(next)`): moving a `Next` out of its `Result`
                // first copied it.
                let mut request = match next {
                    Err(error) => break 'run Err(error),
                    Ok(Next::End(ending)) => break 'run Ok(ending),
                    Ok(Next::PendingTools) => {
                        // Calls the model did not just make (the input's, a jump's) pass the
                        // same gate as its answers: `after_model` (approval, limits), then the
                        // tools.
                        next = Ok(match take_pending(cx) {
                            Some(answer) => Next::Response(Box::new(answer)),
                            None => Next::Tools {
                                calls: Vec::new(),
                                results: Vec::new(),
                            },
                        });
                        continue 'run;
                    }
                    Ok(Next::Tools { calls, results }) => {
                        next = self.run_tools(cx, state, calls, results).await;
                        continue 'run;
                    }
                    Ok(Next::Response(response)) => break 'answer *response,
                    Ok(Next::Request(request)) => *request,
                    Ok(Next::Step(stand_in)) => {
                        // The model is never called while a tool call waits for its result
                        // (tool calls left unanswered in the input history, say).
                        if cx.has_pending_tool_calls() {
                            next = Ok(Next::PendingTools);
                            continue 'run;
                        }
                        if stand_in.is_none() && self.keeps_steps(cx) {
                            // Boxed: the loop's own future stays as small for runs that keep
                            // none.
                            attempt!('run, Box::pin(self.keep_step(cx, state, Position::Step)).await);
                            if cx.stepping == Stepping::Started {
                                break 'run Ok(Ending::Stepped);
                            }
                        }
                        attempt!('run, self.begin_step(cx));
                        if let Some(response) = stand_in {
                            break 'answer *response;
                        }
                        self.request(cx)
                    }
                };
                match attempt!('run, self.before_model(cx, state, &mut request).await) {
                    Flow::Continue | Flow::Jump(Jump::Model) => {}
                    // A response that stands in for the model used no tokens: its usage, if it
                    // says any, is not counted (usage counts model calls that happened).
                    Flow::Respond(response) => break 'answer *response,
                    Flow::Jump(Jump::Tools) => {
                        next = Ok(Next::PendingTools);
                        continue 'run;
                    }
                    Flow::Jump(Jump::End) => break 'run Ok(Ending::Jumped),
                    Flow::Interrupt(interruption) => {
                        let member = interruption.member;
                        let position = Position::BeforeModel { request, member };
                        let interrupt = self.hook_interrupt(cx, Hook::BeforeModel, *interruption);
                        next = self.pause(cx, state, position, vec![interrupt]);
                        continue 'run;
                    }
                }
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
                // Without wrap hooks the onion is the model call, which catches its own panics:
                // the guard's two moves of the call's future are spared.
                let answered = if C::HOOKS.contains(Hook::WrapModelCall) {
                    AssertUnwindSafe(onion.call(cx, request))
                        .catch_unwind()
                        .await
                } else {
                    Ok(onion.call(cx, request).await)
                };
                wraps_ran::<C>(Hook::WrapModelCall, cx.counters.model_calls != model_calls);
                // Matched in place: the response is moved once, into the step's end.
                match answered {
                    Ok(Ok(response)) => response,
                    Ok(Err(error)) => break 'run Err(error.attribute_hook(Hook::WrapModelCall)),
                    Err(payload) => {
                        break 'run Err(Error::panicked(
                            None,
                            Hook::WrapModelCall,
                            payload.as_ref(),
                        )
                        .attribute_hook(Hook::WrapModelCall));
                    }
                }
            };
            next = self.end_step(cx, state, answer).await;
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
        let ending = match Durable::shared_of_run(cx) {
            Some(durable) => {
                let last = self.last_state(cx, state, &ending);
                Box::pin(settle(&durable, cx, ending, last)).await
            }
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
            Flow::Respond(response) => Next::Step(Some(response)),
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

/// The events of a wrap onion once it returned: [`hooks_ran`], and, when no wrap called
/// `next` (`reached` false: the model or the tool was not called), a `DEBUG` event that the call
/// was short-circuited. No span says so otherwise, and which wrap answered is not recorded
/// (see `telemetry::HooksRan`): the event names the candidates.
#[inline]
fn wraps_ran<C: Middleware>(hook: Hook, reached: bool) {
    let ran = if reached { Ran::All } else { Ran::First };
    hooks_ran::<C>(hook, ran, None);
    if !reached {
        tracing::debug!(
            hookchain.hook = hook.name(),
            hookchain.wraps = %telemetry::Wraps::<C>::of(hook),
            "{} short-circuited",
            if hook == Hook::WrapModelCall { "model call" } else { "tool call" }
        );
    }
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

/// Adds `message` to the history, and tells the consumer of a streamed run.
fn add_message(cx: &mut Context, message: Message) {
    cx.emit(|| AgentEvent::MessageAdded(Box::new(message.clone())));
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
