//! What the tests share: the MCP servers they start (`servers`), a loopback server that
//! captures the requests of hookchain's providers (`capture`), and agents on the scripted model.

#![allow(dead_code, unreachable_pub, unused_imports)]

pub mod capture;
pub mod conformance;
pub mod fake;
#[cfg(feature = "server-tests")]
pub mod servers;

use std::future::Future;
use std::time::Duration;

use hookchain::prelude::*;
use hookchain::{Message, RunOutput};
use hookchain_mcp::McpToolset;

/// The longest a test may take: a server that hangs fails the test instead of hanging CI.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `test` within [`TEST_TIMEOUT`].
pub async fn guard<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(TEST_TIMEOUT, test)
        .await
        .expect("the test took longer than its limit")
}

/// The tool messages of a run's history, in order.
pub fn tool_messages(messages: &[Message]) -> Vec<&Message> {
    messages
        .iter()
        .filter(|message| message.tool_call_id.is_some())
        .collect()
}

/// Whether `name` is accepted by OpenAI and Anthropic, checked here without the crate's own
/// function: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn provider_accepts(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Each tool failure of a run: its kind, then its error and the error's sources, joined.
pub fn failures(output: &RunOutput) -> Vec<String> {
    output
        .tool_failures
        .iter()
        .map(|failure| {
            let mut chain = format!("{:?}: {}", failure.kind(), failure.error());
            let mut source = failure.error().source();
            while let Some(error) = source {
                chain.push_str(&format!(": {error}"));
                source = error.source();
            }
            chain
        })
        .collect()
}

/// A run in which the model calls `name` with `arguments` once, then answers; the tool
/// messages of the run: text (and, for a failure, why: its error chain, on the next line) and
/// whether it is an error.
pub async fn call_once(
    toolset: &McpToolset,
    name: &str,
    arguments: serde_json::Value,
) -> Vec<(String, bool)> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", name, arguments)]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tools(toolset.registry())
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    let mut failures = failures(&output).into_iter();
    tool_messages(&output.messages)
        .into_iter()
        .map(|message| {
            let mut text = message.text().into_owned();
            if message.is_error
                && let Some(failure) = failures.next()
            {
                text.push_str(&format!("\n{failure}"));
            }
            (text, message.is_error)
        })
        .collect()
}
