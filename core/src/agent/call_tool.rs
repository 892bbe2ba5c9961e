//! One tool call through the agent's chain, outside a run: for whoever calls an agent's tools
//! without its model (an MCP server serving them, a test, an admin command).

use super::paused_call::{CallOutcome, PausedCall};
use super::run_loop::{States, not_executed, take_answer, tool_interrupt};
use super::{Agent, AgentWith};
use crate::context::{Context, RunContext};
use crate::error::Error;
use crate::interrupt::ToolAnswer;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{Flow, Hook, Jump, Middleware};
use crate::model::{Model, ModelResponse};

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs `call` through the agent's chain as its model's call would run, outside a run:
    /// the gate every call passes, then the call's `wrap_tool_call` onion and the tool.
    ///
    /// - The call passes the `after_model` hooks first, as a response made of this one call
    ///   (the way a run gates the calls of its input): approval, limits and repairs see it
    ///   as they see a model's. A hook may edit its arguments, answer it (a rejected call's
    ///   error result) or stop it (a jump: an error result saying so).
    /// - Then the `wrap_tool_call` hooks (retry, cache, timeouts, `Pii`, …) and the tool,
    ///   in an `execute_tool` span, as in a run (see [the agent's tracing](super)).
    /// - Every failure is an error result, as in a run: an unknown tool, arguments that do
    ///   not match its schema, a tool's error or panic, a wrap hook's error.
    ///
    /// The call is not a run: no model is called, no `before_agent`, `before_model` or
    /// `after_agent` hook runs, and the context is fresh (no history; [`RunContext`] values
    /// only through [`with_context`](Self::with_context)). The chain's run- and thread-scoped
    /// state start from `Default` for each call, so a limit per run or per thread
    /// ([`ToolCallLimit`]) bounds one call, not a series of them.
    ///
    /// A call that should wait for an answer rather than end when it is interrupted is
    /// [`call_tool_or_pause`](Self::call_tool_or_pause).
    ///
    /// # Errors
    ///
    /// - [`Error::ToolCallInterrupted`] when a hook or the tool raises an interrupt (a
    ///   [`HumanInTheLoop`] that gates the tool, a tool that asks the user): the call ends
    ///   there, the tool not run (or its result not kept); the error holds the
    ///   [`Interrupt`](crate::Interrupt), with who asked and what.
    /// - An error of an `after_model` hook (or its panic), as a run would end with it.
    ///
    /// [`ToolCallLimit`]: crate::builtin::ToolCallLimit
    /// [`HumanInTheLoop`]: crate::builtin::HumanInTheLoop
    ///
    /// ```
    /// use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
    /// use hookchain::prelude::*;
    /// use hookchain::{chain, tool};
    ///
    /// /// Adds two numbers.
    /// #[tool]
    /// async fn add(a: i64, b: i64) -> String {
    ///     (a + b).to_string()
    /// }
    ///
    /// /// Deletes a file.
    /// #[tool]
    /// async fn delete(path: String) -> String {
    ///     format!("deleted {path}")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let approval = HumanInTheLoop::new().interrupt_on("delete", ToolPolicy::always());
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .tool(add)
    ///     .tool(delete)
    ///     .chain(chain![approval])
    ///     .build()?;
    /// let sum = agent
    ///     .call_tool(ToolCall::new("c1", "add", serde_json::json!({"a": 2, "b": 3})))
    ///     .await?;
    /// assert_eq!(sum.content, "5");
    /// // A call that needs an approval nobody can give here does not run.
    /// let gated = agent
    ///     .call_tool(ToolCall::new("c2", "delete", serde_json::json!({"path": "/tmp/x"})))
    ///     .await;
    /// assert!(matches!(gated, Err(Error::ToolCallInterrupted(_))));
    /// # Ok::<(), Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn call_tool(&self, call: ToolCall) -> Result<ToolResult, Error> {
        self.call_tool_or_pause_with(RunContext::new(), call)
            .await?
            .into_result()
    }

    /// [`call_tool_or_pause`](Self::call_tool_or_pause), with `run_context` given to the
    /// call's hooks and tool.
    pub(super) async fn call_tool_or_pause_with(
        &self,
        run_context: RunContext,
        call: ToolCall,
    ) -> Result<CallOutcome, Error> {
        let cx = call_context(run_context);
        let run_id = cx.run_id().to_owned();
        self.gate_then_call(cx, call, run_id).await
    }

    /// The call through the `after_model` gate (resuming its interrupted hook, if `cx` says
    /// so), then through its onion and the tool.
    pub(super) async fn gate_then_call(
        &self,
        mut cx: Context,
        call: ToolCall,
        run_id: String,
    ) -> Result<CallOutcome, Error> {
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let (id, tool) = (call.id.clone(), call.name.clone());
        let mut response = ModelResponse::tool_calls([call]);
        let flow = self.after_model(&mut cx, &mut state, &mut response).await?;
        match flow {
            Flow::Interrupt(interruption) => {
                let interrupt = self.hook_interrupt(&cx, Hook::AfterModel, *interruption);
                // The call as the hooks before the one that asked left it (an edit kept).
                let call = response.message.tool_calls.into_iter().find(|c| c.id == id);
                let call = call.unwrap_or_else(|| ToolCall::new(&id, &tool, Default::default()));
                return Ok(CallOutcome::Paused(Box::new(PausedCall::new(
                    call,
                    interrupt,
                    run_id,
                    Vec::new(),
                ))));
            }
            Flow::Jump(Jump::Model | Jump::End) => {
                return Ok(CallOutcome::Done(not_executed(
                    &id,
                    &tool,
                    "a middleware stopped it before it ran",
                )));
            }
            _ => {}
        }
        // A hook may have edited the call (its arguments), or answered it.
        if let Some(result) = take_answer(&mut cx, &id) {
            return Ok(CallOutcome::Done(result));
        }
        let calls = response.message.tool_calls;
        let Some(call) = calls.into_iter().find(|call| call.id == id) else {
            return Ok(CallOutcome::Done(not_executed(
                &id,
                &tool,
                "a middleware removed it before it ran",
            )));
        };
        Ok(self.past_gate(&cx, &state, call, run_id).await)
    }

    /// The call through its `wrap_tool_call` onion and the tool, the gate passed.
    pub(super) async fn past_gate(
        &self,
        cx: &Context,
        state: &States<C>,
        call: ToolCall,
        run_id: String,
    ) -> CallOutcome {
        if let Some(told) = cx.run_context.get::<super::GatePassed>() {
            told.tell();
        }
        match self.call_through(cx, state, call.clone()).await {
            Ok(result) => CallOutcome::Done(result),
            Err(interruption) => {
                let interrupt = tool_interrupt(cx, &call, interruption);
                // Every answer its layers were given so far: each stays its layer's until the
                // call completes, as in a run's checkpoint.
                let answers = cx
                    .tool_answers
                    .get(&call.id)
                    .map_or_else(Vec::new, |answers| {
                        answers
                            .iter()
                            .map(|answered| ToolAnswer {
                                call_id: call.id.clone(),
                                raiser: answered.raiser,
                                answer: answered.answer.clone(),
                                asked: answered.asked.clone(),
                            })
                            .collect()
                    });
                CallOutcome::Paused(Box::new(PausedCall::new(call, interrupt, run_id, answers)))
            }
        }
    }
}

/// The context of a call outside a run: fresh, in the first step of a run of its own (hooks
/// that read the step, and the ids of interrupts, see what they would in a run's first step).
pub(super) fn call_context(run_context: RunContext) -> Context {
    let mut cx = Context::new(Vec::new()).with_run_context(run_context);
    cx.counters.step = 1;
    cx
}

impl<M: Model, C: Middleware> AgentWith<'_, M, C> {
    /// [`Agent::call_tool`], with the run context given to the call's hooks and tool.
    pub async fn call_tool(&self, call: ToolCall) -> Result<ToolResult, Error> {
        self.call_tool_or_pause(call).await?.into_result()
    }

    /// [`Agent::call_tool_or_pause`], with the run context given to the call's hooks and
    /// tool.
    pub async fn call_tool_or_pause(&self, call: ToolCall) -> Result<CallOutcome, Error> {
        self.agent
            .call_tool_or_pause_with(self.run_context.clone(), call)
            .await
    }

    /// [`Agent::resume_tool_call`], with the run context given to the call's hooks and tool.
    pub async fn resume_tool_call(
        &self,
        paused: PausedCall,
        answer: serde_json::Value,
    ) -> Result<CallOutcome, Error> {
        self.agent
            .resume_tool_call_with(self.run_context.clone(), paused, answer)
            .await
    }
}
