//! One tool call through the agent's chain, outside a run: for whoever calls an agent's tools
//! without its model (an MCP server serving them, a test, an admin command).

use super::run_loop::{States, not_executed, take_answer, tool_interrupt};
use super::{Agent, AgentWith};
use crate::context::{Context, RunContext};
use crate::error::Error;
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
    /// # Errors
    ///
    /// - [`Error::ToolCallInterrupted`] when a hook or the tool raises an interrupt (a
    ///   [`HumanInTheLoop`] that gates the tool, a tool that asks the user): a run would
    ///   pause for the answer, but a call outside a run has nothing to pause and resume, so
    ///   it ends there, the tool not run (or its result not kept); the error holds the
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
        self.call_tool_with(RunContext::new(), call).await
    }

    /// [`call_tool`](Self::call_tool), with `run_context` given to the call's hooks and tool.
    pub(super) async fn call_tool_with(
        &self,
        run_context: RunContext,
        call: ToolCall,
    ) -> Result<ToolResult, Error> {
        let mut cx = Context::new(Vec::new()).with_run_context(run_context);
        // The call is the first step of a run of its own: hooks that read the step, and the
        // ids of interrupts, see what they would in a run's first step.
        cx.counters.step = 1;
        let mut state = States::<C>::fresh(C::ThreadState::default());
        let (id, tool) = (call.id.clone(), call.name.clone());
        let mut response = ModelResponse::tool_calls([call]);
        let flow = self.after_model(&mut cx, &mut state, &mut response).await?;
        match flow {
            Flow::Interrupt(interruption) => {
                let interrupt = self.hook_interrupt(&cx, Hook::AfterModel, *interruption);
                return Err(Error::ToolCallInterrupted(Box::new(interrupt)));
            }
            Flow::Jump(Jump::Model | Jump::End) => {
                return Ok(not_executed(
                    &id,
                    &tool,
                    "a middleware stopped it before it ran",
                ));
            }
            _ => {}
        }
        // A hook may have edited the call (its arguments), or answered it.
        if let Some(result) = take_answer(&mut cx, &id) {
            return Ok(result);
        }
        let calls = response.message.tool_calls;
        let Some(call) = calls.into_iter().find(|call| call.id == id) else {
            return Ok(not_executed(
                &id,
                &tool,
                "a middleware removed it before it ran",
            ));
        };
        match self.call_through(&cx, &state, call.clone()).await {
            Ok(result) => Ok(result),
            Err(interruption) => Err(Error::ToolCallInterrupted(Box::new(tool_interrupt(
                &cx,
                &call,
                interruption,
            )))),
        }
    }
}

impl<M: Model, C: Middleware> AgentWith<'_, M, C> {
    /// [`Agent::call_tool`], with the run context given to the call's hooks and tool.
    pub async fn call_tool(&self, call: ToolCall) -> Result<ToolResult, Error> {
        self.agent
            .call_tool_with(self.run_context.clone(), call)
            .await
    }
}
