//! The agent the serving tests serve: a tool that works, one that fails, one a
//! `HumanInTheLoop` gates, and one whose result a `wrap_tool_call` hook rewrites.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::prelude::*;
use hookchain::{ToolError, chain, hook, tool};
use hookchain_mcp::McpToolServer;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Fails, as a tool does.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::for_model("broken", "the disk is full"))
}

/// Deletes a file (gated: a person must approve).
#[tool]
async fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Greets someone.
#[tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Shouts the results of `greet`: proof that a served call goes through the chain.
#[hook(wrap_tool_call)]
async fn shout(cx: ToolContext<'_>, call: ToolCall, mut next: impl ToolNext) -> ToolResult {
    let greeting = call.name == "greet";
    let mut result = next.call(cx, call).await;
    if greeting && !result.is_error {
        result.content = result.text().to_uppercase().into();
    }
    result
}

/// The server of the agent with those tools and that chain.
pub fn server() -> McpToolServer<ScriptedModel, impl Middleware> {
    let approval = HumanInTheLoop::new().interrupt_on("delete", ToolPolicy::always());
    let agent = Agent::builder(ScriptedModel::new([]))
        .name("served")
        .tool(add)
        .tool(broken)
        .tool(delete)
        .tool(greet)
        .chain(chain![approval, shout])
        .build()
        .expect("the agent builds");
    McpToolServer::new(Arc::new(agent))
        .version("9.9.9")
        .max_argument_bytes(64 * 1024)
}
