//! The agent the serving tests serve: a tool that works, one that fails, one a
//! `HumanInTheLoop` gates, one whose result a `wrap_tool_call` hook rewrites, and one that says
//! who called; and the authorizer they serve it with.

#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};

use hookchain::auth::http::{header, request::Parts};
use hookchain::auth::{Authorize, Denied};
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::prelude::*;
use hookchain::{Principal, ToolError, chain, hook, tool};
use hookchain_mcp::McpToolServer;

/// What the tools `greet` and `delete` did, one line each (`greet Ada`, `delete /tmp/x`):
/// proof that a call ran, or did not. Shared by the tests of one binary, which run at once:
/// each looks for arguments of its own.
static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether a tool recorded `line` in [`RAN`].
pub fn ran(line: &str) -> bool {
    RAN.lock().unwrap().iter().any(|ran| ran == line)
}

fn record(line: String) {
    RAN.lock().unwrap().push(line);
}

/// The challenge of a refusal by [`bearer`].
pub const CHALLENGE: &str = r#"Bearer realm="mcp""#;

/// The authorizer of the tests: `Authorization: Bearer <user>` is the user `<user>`; no
/// such header is a `401` with [`CHALLENGE`].
pub fn bearer() -> impl Authorize {
    |parts: &Parts| {
        let user = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::to_owned);
        async move {
            let user = user.ok_or_else(|| {
                Denied::unauthenticated("sign in first").with_challenge(CHALLENGE)
            })?;
            Ok(Principal::new(user))
        }
    }
}

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
    record(format!("delete {path}"));
    format!("deleted {path}")
}

/// Greets someone.
#[tool]
async fn greet(name: String) -> String {
    record(format!("greet {name}"));
    format!("Hello, {name}!")
}

/// Says who called: the id of the call's principal, or `no one`.
#[tool]
async fn whoami(cx: ToolContext<'_>) -> String {
    cx.get::<Principal>()
        .map_or_else(|| "no one".to_owned(), |who| who.id().to_owned())
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

/// The server of the agent with those tools and that chain, not yet told who may call.
pub fn server() -> McpToolServer<ScriptedModel, impl Middleware> {
    let approval = HumanInTheLoop::new().interrupt_on("delete", ToolPolicy::always());
    let agent = Agent::builder(ScriptedModel::new([]))
        .name("served")
        .tool(add)
        .tool(broken)
        .tool(delete)
        .tool(greet)
        .tool(whoami)
        .chain(chain![approval, shout])
        .build()
        .expect("the agent builds");
    McpToolServer::new(Arc::new(agent))
        .version("9.9.9")
        .max_argument_bytes(64 * 1024)
}
