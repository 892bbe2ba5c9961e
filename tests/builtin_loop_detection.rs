//! `LoopDetection`: the rules of DESIGN §11, one test each.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::LoopDetection;
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{Role, RunOutput};
use serde_json::{Value, json};
use support::counting_tool;

fn call(id: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, "echo", arguments)
}

/// The result message of the call `id`.
#[track_caller]
fn result_of<'a>(output: &'a RunOutput, id: &str) -> &'a Message {
    output
        .messages
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no result for `{id}`"))
}

/// Runs one answer per entry of `answers`, then "done", through `detection`; with the runs
/// of the `echo` tool.
async fn run(detection: LoopDetection, answers: Vec<Vec<ToolCall>>) -> (RunOutput, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut responses: Vec<ModelResponse> =
        answers.into_iter().map(ModelResponse::tool_calls).collect();
    responses.push(ModelResponse::text("done"));
    let agent = Agent::builder(ScriptedModel::new(responses))
        .tool(counting_tool("echo", &runs))
        .chain(detection)
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    (output, runs.load(Ordering::SeqCst))
}

const WARNING: &str = "Do not repeat it";
const BLOCK: &str = "Stop repeating it";

#[tokio::test]
async fn the_second_same_call_runs_and_its_result_carries_a_warning() {
    let same = json!({ "text": "x" });
    let (output, runs) = run(
        LoopDetection::default(),
        vec![vec![call("a", same.clone())], vec![call("b", same)]],
    )
    .await;
    assert_eq!(runs, 2);
    assert!(!result_of(&output, "a").text().contains(WARNING));
    let warned = result_of(&output, "b");
    assert!(!warned.is_error);
    assert!(warned.text().starts_with("ran"));
    assert!(warned.text().contains("2nd time"));
    assert!(warned.text().contains(WARNING));
}

#[tokio::test]
async fn the_third_same_call_is_blocked_with_an_error_result() {
    let same = json!({ "text": "x" });
    let answers = (0..4)
        .map(|i| vec![call(&format!("c{i}"), same.clone())])
        .collect();
    let (output, runs) = run(LoopDetection::default(), answers).await;
    // The 1st and 2nd ran; the 3rd and 4th did not.
    assert_eq!(runs, 2);
    for id in ["c2", "c3"] {
        let blocked = result_of(&output, id);
        assert!(blocked.is_error);
        assert!(blocked.text().contains(BLOCK), "{}", blocked.text());
    }
    assert!(result_of(&output, "c3").text().contains("4th time"));
}

#[tokio::test]
async fn the_same_arguments_in_another_order_are_the_same_call() {
    let (output, runs) = run(
        LoopDetection::default(),
        vec![
            vec![call("a", json!({ "text": "x", "n": { "p": 1, "q": 2 } }))],
            vec![call("b", json!({ "n": { "q": 2, "p": 1 }, "text": "x" }))],
        ],
    )
    .await;
    assert_eq!(runs, 2);
    assert!(result_of(&output, "b").text().contains(WARNING));
}

#[tokio::test]
async fn other_arguments_or_another_tool_are_another_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([call("a", json!({ "text": "x" }))]),
        ModelResponse::tool_calls([call("b", json!({ "text": "y" }))]),
        ModelResponse::tool_calls([ToolCall::new("c", "other", json!({ "text": "x" }))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .tool(counting_tool("other", &runs))
        .chain(LoopDetection::default())
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    for id in ["b", "c"] {
        assert_eq!(result_of(&output, id).text(), "ran");
    }
}

#[tokio::test]
async fn repeats_within_one_answer_count() {
    let same = json!({ "text": "x" });
    let (output, runs) = run(
        LoopDetection::default(),
        vec![vec![
            call("a", same.clone()),
            call("b", same.clone()),
            call("c", same),
        ]],
    )
    .await;
    assert_eq!(runs, 2);
    assert!(result_of(&output, "b").text().contains(WARNING));
    assert!(result_of(&output, "c").is_error);
}

#[tokio::test]
async fn the_window_forgets_older_calls() {
    let detection = LoopDetection::builder().window(2).build().unwrap();
    let text = |t: &str| json!({ "text": t });
    let (output, runs) = run(
        detection,
        vec![
            vec![call("a1", text("a"))],
            vec![call("b", text("b"))],
            vec![call("c", text("c"))],
            // `a` left the window of the last 2 calls: this is a first call again.
            vec![call("a2", text("a"))],
        ],
    )
    .await;
    assert_eq!(runs, 4);
    assert_eq!(result_of(&output, "a2").text(), "ran");
}

#[tokio::test]
async fn the_thresholds_are_configurable() {
    let detection = LoopDetection::builder()
        .warn_at(3)
        .block_at(5)
        .build()
        .unwrap();
    let same = json!({ "text": "x" });
    let answers = (1..=5)
        .map(|i| vec![call(&format!("c{i}"), same.clone())])
        .collect();
    let (output, runs) = run(detection, answers).await;
    assert_eq!(runs, 4);
    assert_eq!(result_of(&output, "c2").text(), "ran");
    assert!(result_of(&output, "c3").text().contains("3rd time"));
    assert!(result_of(&output, "c4").text().contains(WARNING));
    assert!(result_of(&output, "c5").is_error);
}

#[tokio::test]
async fn a_new_run_starts_with_an_empty_window() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last().unwrap();
        Ok(if last.role == Role::User {
            ModelResponse::tool_calls([call("a", json!({ "text": "x" }))])
        } else {
            ModelResponse::text("done")
        })
    });
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(LoopDetection::default())
        .build()
        .unwrap();
    let mut thread = agent.thread();
    for input in ["one", "two", "three"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        validate_history(&output.messages).unwrap();
        assert_eq!(output.messages.last().unwrap().text(), "done");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let results = thread.messages().iter().filter(|m| m.role == Role::Tool);
    assert!(results.into_iter().all(|m| m.text() == "ran"));
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    let field = |builder: hookchain::builtin::loop_detection::LoopDetectionBuilder| {
        builder.build().unwrap_err().field()
    };
    assert_eq!(field(LoopDetection::builder().block_at(1)), "block_at");
    assert_eq!(field(LoopDetection::builder().warn_at(3)), "warn_at");
    assert_eq!(field(LoopDetection::builder().warn_at(1)), "warn_at");
    assert_eq!(field(LoopDetection::builder().window(1)), "window");
    assert!(LoopDetection::builder().window(2).build().is_ok());
}
