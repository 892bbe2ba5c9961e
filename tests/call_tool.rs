//! `Agent::call_tool`: one tool call through the agent's chain outside a run — the gate
//! (`after_model`), the `wrap_tool_call` onion and the tool, as in a run; an interrupt is an
//! error, since there is no run to pause.

use hookchain::builtin::ToolRetry;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::prelude::*;
use hookchain::{RunContext, ToolError, chain, hook, tool};
use serde_json::json;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Deletes a file.
#[tool]
async fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Fails, as a tool does.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::for_model("broken", "the disk is full"))
}

/// The greeting of the call's run context.
#[tool]
async fn greet(cx: ToolContext<'_>, name: String) -> String {
    let greeting = cx.get::<&'static str>().copied().unwrap_or("Hello");
    format!("{greeting}, {name}!")
}

/// Rewrites every successful result, proving the call went through the chain.
#[hook(wrap_tool_call)]
async fn shout(cx: ToolContext<'_>, call: ToolCall, mut next: impl ToolNext) -> ToolResult {
    let mut result = next.call(cx, call).await;
    if !result.is_error {
        result.content = result.text().to_uppercase().into();
    }
    result
}

/// Asks before any call of `add` runs.
#[hook(wrap_tool_call)]
async fn ask(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    if call.name == "add" && cx.resume_value().is_none() {
        return Err(Error::interrupt(json!({ "allow": call.name })));
    }
    Ok(next.call(cx, call).await)
}

fn model() -> ScriptedModel {
    ScriptedModel::new([])
}

#[tokio::test]
async fn a_call_runs_the_tool_and_returns_its_result() {
    let agent = Agent::builder(model()).tool(add).build().unwrap();
    let result = agent
        .call_tool(ToolCall::new("c1", "add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result.call_id, "c1");
    assert_eq!(result.content, "5");
    assert!(!result.is_error);
}

#[tokio::test]
async fn a_wrap_tool_call_hook_changes_the_result_as_in_a_run() {
    let agent = Agent::builder(model())
        .tool(greet)
        .chain(chain![shout, ToolRetry::new()])
        .build()
        .unwrap();
    let result = agent
        .call_tool(ToolCall::new("c1", "greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(result.content, "HELLO, ADA!");
}

#[tokio::test]
async fn failures_are_error_results_as_in_a_run() {
    let agent = Agent::builder(model())
        .tool(add)
        .tool(broken)
        .build()
        .unwrap();
    let unknown = agent
        .call_tool(ToolCall::new("c1", "nope", json!({})))
        .await
        .unwrap();
    assert!(unknown.is_error, "{unknown:?}");
    assert!(unknown.text().contains("nope"), "{unknown:?}");
    let failed = agent
        .call_tool(ToolCall::new("c2", "broken", json!({})))
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.content, "the disk is full");
    let bad_arguments = agent
        .call_tool(ToolCall::new("c3", "add", json!({"a": "two"})))
        .await
        .unwrap();
    assert!(bad_arguments.is_error, "{bad_arguments:?}");
}

#[tokio::test]
async fn a_call_human_in_the_loop_gates_is_an_interrupt_error_and_does_not_run() {
    let approval = HumanInTheLoop::new().interrupt_on("delete", ToolPolicy::always());
    let agent = Agent::builder(model())
        .tool(add)
        .tool(delete)
        .chain(chain![approval, shout])
        .build()
        .unwrap();
    let gated = agent
        .call_tool(ToolCall::new(
            "c1",
            "delete",
            json!({"path": "/etc/passwd"}),
        ))
        .await;
    let Err(Error::ToolCallInterrupted(interrupt)) = gated else {
        panic!("the gated call was not refused: {gated:?}");
    };
    assert_eq!(interrupt.source, "HumanInTheLoop");
    assert_eq!(interrupt.hook, Some(Hook::AfterModel));
    assert_eq!(interrupt.payload["actions"][0]["name"], "delete");
    let message = Error::ToolCallInterrupted(interrupt).to_string();
    assert!(message.contains("asked by `HumanInTheLoop`"), "{message}");
    // A tool it does not gate runs, through the rest of the chain.
    let free = agent
        .call_tool(ToolCall::new("c2", "add", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    assert_eq!(free.content, "2");
}

#[tokio::test]
async fn an_interrupt_from_a_wrap_hook_is_an_error_naming_the_call() {
    let agent = Agent::builder(model())
        .tool(add)
        .chain(chain![ask])
        .build()
        .unwrap();
    let Err(Error::ToolCallInterrupted(interrupt)) = agent
        .call_tool(ToolCall::new("c7", "add", json!({"a": 1, "b": 2})))
        .await
    else {
        panic!("the interrupt was not an error");
    };
    assert_eq!(interrupt.source, "ask");
    assert_eq!(interrupt.hook, Some(Hook::WrapToolCall));
    assert_eq!(interrupt.tool_call_id.as_deref(), Some("c7"));
    assert_eq!(interrupt.payload, json!({ "allow": "add" }));
}

#[tokio::test]
async fn a_run_context_reaches_the_tool() {
    let agent = Agent::builder(model()).tool(greet).build().unwrap();
    let result = agent
        .with_context(RunContext::new().with("Grüezi"))
        .call_tool(ToolCall::new("c1", "greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(result.content, "Grüezi, Ada!");
}
