//! A step's model part: the step begun (its number, its limit), the request built from the
//! history, `before_model`, and the step closed — `after_model`, the answer into the history,
//! where the run goes next (its tool calls, most often). The model call itself, between the two,
//! is in the loop (`drive`), so that the onion is awaited in it directly.

use std::panic::{AssertUnwindSafe, catch_unwind};

use futures::FutureExt;

use super::tool_batch::{not_executed, take_answer};
use super::{Ending, Next, States, add_message, hooks_ran, panicked};
use crate::__private::Internal;
use crate::agent::Agent;
use crate::context::{Context, Stepping};
use crate::error::Error;
use crate::interrupt::Position;
use crate::message::{Message, ToolCall};
use crate::middleware::{Flow, Hook, Jump, Middleware, check_jump};
use crate::model::{Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ToolChoice};
use crate::telemetry::Ran;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Opens a step: enforces `max_steps`, counts the step.
    pub(super) fn begin_step(&self, cx: &mut Context) -> Result<(), Error> {
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
    pub(super) async fn end_step(
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
    pub(super) fn request(&self, cx: &Context) -> ModelRequest {
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
            padding: crate::model::Padding::default(),
        }
    }

    pub(super) async fn before_model(
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

    pub(in crate::agent) async fn after_model(
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
}

/// Two calls of one answer with one id cannot both be answered (a provider refuses such a
/// history): the answer is refused before any tool runs, the fix named. Out of line: no run
/// that goes well pays for building the message.
#[cold]
pub(super) fn repeated_id(call: &ToolCall) -> Error {
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

/// Gives each of `calls` its result: the one a hook supplied, or an error saying it was not
/// executed, and why.
pub(super) fn skip_calls(cx: &mut Context, calls: &[ToolCall], why: &str) {
    for call in calls {
        let result =
            take_answer(cx, &call.id).unwrap_or_else(|| not_executed(&call.id, &call.name, why));
        add_message(cx, Message::tool(result).with_name(&call.name));
    }
    cx.counters.tool_calls = cx.counters.tool_calls.saturating_add(calls.len());
    cx.answered.clear();
}
