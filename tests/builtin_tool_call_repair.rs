//! `ToolCallRepair`: the rules of DESIGN §11, one test each. The history must hold the
//! repaired calls, and their results must answer them.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::{LoopDetection, ToolCallRepair};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{Role, RunOutput, chain};
use serde_json::{Value, json};
use support::{counting_tool, echo_tool, new_log};

/// Runs one answer with `calls`, then "done", through `ToolCallRepair`, with the `echo` tool.
async fn run(calls: Vec<ToolCall>) -> RunOutput {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(ToolCallRepair::new())
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    output
}

/// The results in the history, in order.
fn results(output: &RunOutput) -> Vec<&Message> {
    output
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect()
}

fn echo(id: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, "echo", arguments)
}

#[tokio::test]
async fn arguments_sent_as_a_json_string_are_parsed() {
    let output = run(vec![echo("a", json!("{\"text\": \"hi\"}"))]).await;
    assert_eq!(
        output.messages[1].tool_calls[0].arguments,
        json!({ "text": "hi" })
    );
    let result = results(&output)[0];
    assert!(!result.is_error);
    assert_eq!(result.text(), "hi");
}

#[tokio::test]
async fn arguments_in_a_code_fence_are_parsed() {
    let fenced = "```json\n{\"text\": \"fenced\"}\n```";
    let output = run(vec![echo("a", json!(fenced))]).await;
    assert_eq!(
        output.messages[1].tool_calls[0].arguments,
        json!({ "text": "fenced" })
    );
    assert_eq!(results(&output)[0].text(), "fenced");
}

#[tokio::test]
async fn a_string_that_holds_no_object_is_left_for_the_tool_to_refuse() {
    let output = run(vec![echo("a", json!("not json"))]).await;
    assert_eq!(
        output.messages[1].tool_calls[0].arguments,
        json!("not json")
    );
    assert!(results(&output)[0].is_error);
}

#[tokio::test]
async fn a_call_without_a_name_gets_an_error_result() {
    let output = run(vec![
        ToolCall::new("a", "", json!({})),
        echo("b", json!({ "text": "ok" })),
        ToolCall::new("c", "  ", json!({})),
    ])
    .await;
    // Not dropped: the calls stay in the history, each with its result.
    assert_eq!(output.messages[1].tool_calls.len(), 3);
    let results = results(&output);
    assert_eq!(results.len(), 3);
    for (result, id) in [(results[0], "a"), (results[2], "c")] {
        assert_eq!(result.tool_call_id.as_deref(), Some(id));
        assert!(result.is_error);
        assert!(result.text().contains("names no tool"));
    }
    assert_eq!(results[1].text(), "ok");
}

#[tokio::test]
async fn duplicate_ids_are_made_unique_in_the_history_and_the_results() {
    let output = run(vec![
        echo("same", json!({ "text": "1" })),
        echo("same", json!({ "text": "2" })),
        echo("same", json!({ "text": "3" })),
    ])
    .await;
    let ids: Vec<&str> = output.messages[1]
        .tool_calls
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert_eq!(ids, ["same", "same_1", "same_2"]);
    // Each result answers its own call (validate_history checked the pairing).
    let results = results(&output);
    for (result, (id, text)) in results.iter().zip(ids.iter().zip(["1", "2", "3"])) {
        assert_eq!(result.tool_call_id.as_deref(), Some(*id));
        assert_eq!(result.text(), text);
    }
}

#[tokio::test]
async fn empty_ids_are_made_unique() {
    let output = run(vec![
        echo("", json!({ "text": "1" })),
        echo("", json!({ "text": "2" })),
    ])
    .await;
    let ids: Vec<&str> = output.messages[1]
        .tool_calls
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert_eq!(ids, ["call_0", "call_1"]);
    assert_eq!(results(&output).len(), 2);
}

#[tokio::test]
async fn other_after_model_hooks_see_the_repaired_calls() {
    // Listed first, LoopDetection's `after_model` runs after the repair's (an output
    // middleware, placed last): it sees the string arguments parsed, so the second call is the
    // same as the first, and warned about.
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo("a", json!({ "text": "x" }))]),
        ModelResponse::tool_calls([echo("b", json!("{\"text\": \"x\"}"))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(chain![LoopDetection::default(), ToolCallRepair::new()])
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let last = results(&output)[1].text().into_owned();
    assert!(last.contains("2nd time"), "{last}");
}
