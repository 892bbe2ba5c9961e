//! The agent loop (DESIGN §3), kept in one place so its order can be read top to bottom.

use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt};
use tracing::Instrument;

use super::innermost::{CallModel, CallTool};
use super::{Agent, EndReason, Input, RunOutput};
use crate::chain::ChainChecks;
use crate::context::Context;
use crate::error::Error;
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::{
    Flow, Hook, Jump, Middleware, ModelNext, ModelWrap, ToolNext, ToolWrap, check_jump,
};
use crate::model::{Model, ModelRequest, ModelResponse, ToolChoice};
use crate::tool::panic_message;

/// Where the loop goes next.
enum Next {
    /// A step; with a response that stands in for the model call.
    Step(Option<ModelResponse>),
    /// Run the tool calls waiting in the history, then a step.
    Tools,
    /// Leave the loop.
    End,
}

impl From<Flow> for Next {
    /// Where a flow returned before the model call leads.
    fn from(flow: Flow) -> Next {
        match flow {
            Flow::Continue | Flow::Jump(Jump::Model) => Next::Step(None),
            Flow::Respond(response) => Next::Step(Some(response)),
            Flow::Jump(Jump::Tools) => Next::Tools,
            Flow::Jump(Jump::End) => Next::End,
        }
    }
}

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs the agent on `input` until the model answers without calling tools, a hook jumps to
    /// the end, or [`max_steps`](super::AgentBuilder::max_steps) is reached.
    ///
    /// Order of the hooks: see [`Middleware`]. Tool failures become error results the model
    /// reads. An error from a hook or the model ends the loop; `after_agent` still runs (it
    /// always does once the run has started), then the error is returned.
    pub async fn run(&self, input: impl Into<Input>) -> Result<RunOutput, Error> {
        let Input(messages) = input.into();
        let mut cx = Context::new(messages);
        let mut state = C::State::default();
        let span = tracing::info_span!("hookchain.run", max_steps = self.max_steps);
        let end = self.drive(&mut cx, &mut state).instrument(span).await?;
        Ok(RunOutput {
            messages: cx.messages,
            usage: cx.usage,
            steps: cx.step,
            model_calls: cx.model_calls,
            tool_calls: cx.tool_calls,
            end,
        })
    }

    /// The loop itself. The model-call onion is awaited directly in it, not in a helper `async
    /// fn`: every state machine between the run and the deepest wrap hook counts against the
    /// compiler's query-depth limit.
    async fn drive(&self, cx: &mut Context, state: &mut C::State) -> Result<EndReason, Error> {
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
        let mut next = self.before_agent(cx, state).await.map(Next::from);
        let outcome = loop {
            let stand_in = match attempt!(next) {
                Next::End => break Ok(EndReason::Jumped),
                Next::Tools => {
                    let pending = cx.pending_tool_calls();
                    self.run_tools(cx, state, pending).await;
                    next = Ok(Next::Step(None));
                    continue;
                }
                Next::Step(stand_in) => stand_in,
            };
            attempt!(self.begin_step(cx, state).await);
            let response = match stand_in {
                Some(response) => response,
                None => {
                    let mut request = self.request(cx);
                    match attempt!(self.before_model(cx, state, &mut request).await) {
                        Flow::Continue | Flow::Jump(Jump::Model) => {
                            let model = CallModel { model: &self.model };
                            let mut onion =
                                <C::WrapsModel as ModelWrap<C>>::layer(&self.chain, state, model);
                            let response = onion.call(cx, request).await;
                            attempt!(response.map_err(|e| e.attribute_hook(Hook::WrapModelCall)))
                        }
                        Flow::Respond(response) => response,
                        Flow::Jump(Jump::Tools) => {
                            next = Ok(Next::Tools);
                            continue;
                        }
                        Flow::Jump(Jump::End) => {
                            next = Ok(Next::End);
                            continue;
                        }
                    }
                }
            };
            next = match attempt!(self.end_step(cx, state, response).await) {
                Some(next) => Ok(next),
                None => break Ok(EndReason::Finished),
            };
        };
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
    }

    /// Runs every `after_agent` hook: once the run has started, whatever ended it.
    async fn after_agent(&self, cx: &mut Context, state: &mut C::State) -> Result<(), Error> {
        if !C::HOOKS.contains(Hook::AfterAgent) {
            return Ok(());
        }
        self.chain
            .after_agent(cx, state)
            .await
            .map_err(|error| error.attribute(C::NAME, Hook::AfterAgent))
    }

    async fn before_agent(&self, cx: &mut Context, state: &mut C::State) -> Result<Flow, Error> {
        if !C::HOOKS.contains(Hook::BeforeAgent) {
            return Ok(Flow::Continue);
        }
        let flow = self
            .chain
            .before_agent(cx, state)
            .await
            .map_err(|error| error.attribute(C::NAME, Hook::BeforeAgent))?;
        check_jump::<C>(flow, Hook::BeforeAgent)
    }

    /// Opens a step: answers tool calls left unanswered in the input history (the model must
    /// not be called with a dangling call), enforces `max_steps`, counts the step.
    async fn begin_step(&self, cx: &mut Context, state: &C::State) -> Result<(), Error> {
        let pending = cx.pending_tool_calls();
        if !pending.is_empty() {
            self.run_tools(cx, state, pending).await;
        }
        if cx.step >= self.max_steps {
            return Err(Error::MaxStepsExceeded {
                max_steps: self.max_steps,
            });
        }
        cx.step += 1;
        tracing::debug!(step = cx.step, "step");
        Ok(())
    }

    /// Closes a step: `after_model`, the response into the history, then the tools. Returns
    /// where to go next, or `None` when the model answered without calling tools.
    async fn end_step(
        &self,
        cx: &mut Context,
        state: &mut C::State,
        mut response: ModelResponse,
    ) -> Result<Option<Next>, Error> {
        cx.usage += response.usage;
        let flow = self.after_model(cx, state, &mut response).await?;
        let calls = response.message.tool_calls.clone();
        cx.messages.push(response.message);
        match flow {
            Flow::Jump(Jump::Model) => {
                skip_calls(cx, &calls, "a middleware sent the run back to the model");
                Ok(Some(Next::Step(None)))
            }
            Flow::Jump(Jump::End) => {
                skip_calls(cx, &calls, "a middleware ended the run");
                Ok(Some(Next::End))
            }
            _ if calls.is_empty() => Ok(None),
            _ => {
                self.run_tools(cx, state, calls).await;
                Ok(Some(Next::Step(None)))
            }
        }
    }

    /// The request of the next model call, built from the history.
    fn request(&self, cx: &Context) -> ModelRequest {
        ModelRequest {
            messages: cx.messages.clone(),
            system_prompt: self.system_prompt.clone(),
            tools: self.tools.specs().to_vec(),
            tool_choice: ToolChoice::Auto,
            settings: self.settings.clone(),
        }
    }

    async fn before_model(
        &self,
        cx: &mut Context,
        state: &mut C::State,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        if !C::HOOKS.contains(Hook::BeforeModel) {
            return Ok(Flow::Continue);
        }
        let flow = self
            .chain
            .before_model(cx, state, request)
            .await
            .map_err(|error| error.attribute(C::NAME, Hook::BeforeModel))?;
        check_jump::<C>(flow, Hook::BeforeModel)
    }

    async fn after_model(
        &self,
        cx: &mut Context,
        state: &mut C::State,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        if !C::HOOKS.contains(Hook::AfterModel) {
            return Ok(Flow::Continue);
        }
        let flow = self
            .chain
            .after_model(cx, state, response)
            .await
            .map_err(|error| error.attribute(C::NAME, Hook::AfterModel))?;
        match check_jump::<C>(flow, Hook::AfterModel)? {
            Flow::Respond(replacement) => {
                *response = replacement;
                Ok(Flow::Continue)
            }
            flow => Ok(flow),
        }
    }

    /// Runs `calls` through the tool onion, concurrently (bounded), and appends one result
    /// message per call, in call order.
    async fn run_tools(&self, cx: &mut Context, state: &C::State, calls: Vec<ToolCall>) {
        let results: Vec<ToolResult> = {
            let cx = &*cx;
            futures::stream::iter(
                calls
                    .into_iter()
                    .map(|call| self.call_tool(cx, state, call)),
            )
            .buffered(self.tool_concurrency)
            .collect()
            .await
        };
        cx.tool_calls += results.len();
        cx.messages.extend(results.into_iter().map(Message::tool));
    }

    /// One tool call through the chain's onion; every failure becomes an error result.
    async fn call_tool(&self, cx: &Context, state: &C::State, call: ToolCall) -> ToolResult {
        let id = call.id.clone();
        let onion = async {
            let tool = CallTool { tools: &self.tools };
            let mut onion = <C::WrapsTool as ToolWrap<C>>::layer(&self.chain, state, tool);
            onion.call(cx, call).await
        };
        // A panic in a wrap hook must not take the run down either.
        match AssertUnwindSafe(onion).catch_unwind().await {
            Ok(Ok(result)) => ToolResult {
                call_id: id,
                ..result
            },
            Ok(Err(error)) => {
                let error = error.attribute_hook(Hook::WrapToolCall);
                ToolResult::error(id, format!("tool call failed: {error}"))
            }
            Err(payload) => ToolResult::error(
                id,
                format!(
                    "tool call failed: a middleware panicked: {}",
                    panic_message(payload.as_ref())
                ),
            ),
        }
    }
}

/// Gives each of `calls` an error result saying it was not executed, and why.
fn skip_calls(cx: &mut Context, calls: &[ToolCall], why: &str) {
    cx.tool_calls += calls.len();
    cx.messages.extend(calls.iter().map(|call| {
        Message::tool(ToolResult::error(
            &call.id,
            format!("tool call `{}` was not executed: {why}", call.name),
        ))
    }));
}

/// Answers every tool call still waiting in the history, so none is left dangling.
fn close_dangling(cx: &mut Context, why: &str) {
    let pending = cx.pending_tool_calls();
    skip_calls(cx, &pending, why);
}
