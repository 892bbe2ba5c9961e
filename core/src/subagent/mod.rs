//! Agents that use agents: an [`Agent`](crate::Agent) as a [`Tool`](crate::Tool) of another.
//!
//! [`Agent::into_tool`](crate::Agent::into_tool) makes an agent a tool: the parent's model
//! calls it with a task (or an input of your type, with its schema), the child runs — its own
//! model, tools and chain — inside the parent's tool call, and its answer is the call's result.
//! The parent's `wrap_tool_call` middleware wrap the call as any other: an approval before
//! delegating, a limit on delegations, a timeout.
//!
//! ```
//! use hookchain::prelude::*;
//!
//! # futures::executor::block_on(async {
//! let researcher = Agent::builder(ScriptedModel::new([ModelResponse::text("Paris.")]))
//!     .name("researcher")
//!     .build()?;
//! let lead = Agent::builder(ScriptedModel::new([
//!     ModelResponse::tool_calls([ToolCall::new(
//!         "c1",
//!         "research",
//!         serde_json::json!({"task": "Which city is the capital of France?"}),
//!     )]),
//!     ModelResponse::text("The capital is Paris."),
//! ]))
//! .tool(researcher.into_tool("research", "Looks things up.")?)
//! .build()?;
//! let output = lead.run("Capital of France?").await?;
//! assert_eq!(output.text().as_deref(), Some("The capital is Paris."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Handoffs
//!
//! [`Agent::into_handoff`](crate::Agent::into_handoff) makes a `transfer_to_<agent>` tool
//! that hands the conversation to another agent (the OpenAI Agents SDK's shape): the receiver
//! runs on the conversation so far (filtered by [`Handoff::history`]), and its answer is the
//! run's — it enters the history named after the receiver, so a thread records who answered —
//! without the first agent's model being called again
//! ([`ToolContext::end_run_with`](crate::ToolContext::end_run_with)).
//!
//! # Interrupts cross the boundary
//!
//! A child that pauses (an approval, [`AskUser`](crate::tool::AskUser), an MCP elicitation)
//! pauses its parent: the call raises an interrupt whose payload is a [`SubAgentPause`] — the
//! child's interrupts, and the child's checkpoint, nested in the parent's (so in the parent's
//! store, signed with it, resumed from any process that has it). Answer the child's interrupts
//! with [`SubAgentPause::answer`] and resume the parent: the call runs again, resumes the
//! child with the answers, the child finishes and the parent goes on. Nothing that completed
//! runs again: not the parent's other calls of the step (the parent's checkpoint has their
//! results), not the child's completed calls (the child's checkpoint has theirs). Several
//! children paused in one step of the parent are several interrupts of one checkpoint,
//! answered together.
//!
//! # What a child inherits, and what it does not
//!
//! - **Inherits**: the parent's [`RunContext`](crate::RunContext) values (unless the tool is
//!   made with [`AgentTool::isolated_context`]); cancellation (dropping the parent's run drops
//!   the child's); the parent's `execute_tool` span, under which the child's `invoke_agent`
//!   span opens; a streamed parent's consumer, who gets the child's events as
//!   [`AgentEvent::SubAgent`](crate::agent::AgentEvent::SubAgent).
//! - **Gives back**: its answer (the call's result); its usage, counted in the parent's
//!   (in [`RunOutput::usage`](crate::RunOutput::usage) and the parent's budgets from the next
//!   step); its pause, as above.
//! - **Does not inherit**: the parent's history (the child sees its task only — the task must
//!   say everything it needs), thread, chain, tools or model; each delegation is a fresh run of
//!   the child. The child keeps no runs of its own: an agent with a checkpointer cannot be a
//!   tool (its runs are kept in its parent's).
//! - **Depth**: a child of a child of … is refused past [`DEFAULT_MAX_DEPTH`] levels (the model
//!   reads why), which stops agents that delegate to each other in a loop;
//!   [`AgentTool::max_depth`] sets it.

mod child;
mod depth;
mod handoff;
mod pause;
mod task;
mod tool;

pub use depth::DEFAULT_MAX_DEPTH;
pub use handoff::{Handoff, HistoryFilter, last_user_message};
pub use pause::{SUB_AGENT_PAUSE, SubAgentPause};
pub use task::Task;
pub use tool::{AgentTool, IntoToolError};
