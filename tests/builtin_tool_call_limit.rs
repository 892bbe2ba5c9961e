//! `ToolCallLimit`: the rules of DESIGN §11, one test each. Every test checks the final history
//! with `validate_history`: no tool call is ever left without its result.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::LimitScope;
use hookchain::builtin::ToolCallRepair;
use hookchain::builtin::tool_call_limit::{
    ThreadToolCalls, ToolCallLimit, ToolCallLimitExceeded, ToolLimitExit,
};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{EndReason, Role, chain};
use serde_json::json;
use support::{counting_tool, middleware_error};

fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({ "text": id }))
}

/// The result message of the call `id`.
#[track_caller]
fn result_of<'a>(messages: &'a [Message], id: &str) -> &'a Message {
    messages
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no result for `{id}` in {messages:#?}"))
}

fn limit(run: Option<u32>, thread: Option<u32>, exit: ToolLimitExit) -> ToolCallLimit {
    let mut builder = ToolCallLimit::builder().exit(exit);
    if let Some(run) = run {
        builder = builder.run_limit(run);
    }
    if let Some(thread) = thread {
        builder = builder.thread_limit(thread);
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn a_call_is_blocked_when_count_plus_one_exceeds_the_limit() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([call("a", "echo"), call("b", "echo"), call("c", "echo")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(limit(Some(2), None, ToolLimitExit::Continue))
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    // 0 + 1 > 2 and 1 + 1 > 2 are false: a and b run; 2 + 1 > 2: c is blocked.
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert!(!result_of(&output.messages, "b").is_error);
    let blocked = result_of(&output.messages, "c");
    assert!(blocked.is_error);
    assert!(blocked.text().contains("run limit of 2 tool calls"));
}

#[tokio::test]
async fn exit_continue_answers_blocked_calls_runs_the_others_and_goes_on() {
    let searches = Arc::new(AtomicUsize::new(0));
    let echoes = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            call("s1", "search"),
            call("e1", "echo"),
            call("s2", "search"),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("search", &searches))
        .tool(counting_tool("echo", &echoes))
        .chain(
            ToolCallLimit::builder()
                .tool("search")
                .run_limit(1)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(searches.load(Ordering::SeqCst), 1);
    assert_eq!(echoes.load(Ordering::SeqCst), 1);
    let blocked = result_of(&output.messages, "s2");
    assert!(blocked.is_error);
    assert!(blocked.text().contains("Do not call `search` again"));
    // The loop went on: the model answered once more.
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("done"));
}

#[tokio::test]
async fn blocked_calls_count_toward_the_run_not_the_thread() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([call("a", "echo"), call("b", "echo")]),
        ModelResponse::tool_calls([call("c", "echo")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(limit(Some(2), Some(1), ToolLimitExit::Continue))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // b is blocked by the thread limit (1 + 1 > 1), and counts in the run: 2 calls.
    assert!(
        result_of(&output.messages, "b")
            .text()
            .contains("thread limit of 1")
    );
    // So c is blocked by the run limit (2 + 1 > 2); had b not counted, the thread limit
    // would have blocked it.
    assert!(
        result_of(&output.messages, "c")
            .text()
            .contains("run limit of 2")
    );
    // The thread counted only the call that ran.
    assert_eq!(thread.state(), &ThreadToolCalls(1));
}

#[tokio::test]
async fn the_thread_limit_counts_every_run_of_the_thread() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last().unwrap();
        Ok(if last.role == Role::User {
            let id = format!("c{}", request.messages.len());
            ModelResponse::tool_calls([call(&id, "echo")])
        } else {
            ModelResponse::text("done")
        })
    });
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(limit(Some(5), Some(2), ToolLimitExit::Continue))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    for input in ["one", "two", "three"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        validate_history(&output.messages).unwrap();
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(thread.state(), &ThreadToolCalls(2));
}

#[tokio::test]
async fn exit_end_runs_no_tool_answers_every_call_and_ends_with_the_counts() {
    let echoes = Arc::new(AtomicUsize::new(0));
    let others = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([call("a", "echo")]),
        ModelResponse::tool_calls([call("b", "echo"), call("x", "other"), call("c", "echo")]),
        ModelResponse::text("never"),
    ]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &echoes))
        .tool(counting_tool("other", &others))
        .chain(
            ToolCallLimit::builder()
                .tool("echo")
                .run_limit(2)
                .exit(ToolLimitExit::End)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    // Only the first answer's call ran; of the second, none (not even `other`, or b which
    // was within the limit).
    assert_eq!(echoes.load(Ordering::SeqCst), 1);
    assert_eq!(others.load(Ordering::SeqCst), 0);
    for id in ["b", "x", "c"] {
        let result = result_of(&output.messages, id);
        assert!(result.is_error);
        assert!(
            result.text().contains("no call of this answer ran"),
            "{}",
            result.text()
        );
    }
    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(output.model_calls, 2);
    let last = output.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    let text = last.text();
    assert!(text.contains("run limit of 2 calls of `echo`"), "{text}");
    assert!(
        text.contains("3 calls counted in this run, 1 in this thread"),
        "{text}"
    );
}

#[tokio::test]
async fn exit_error_fails_the_run_and_runs_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ModelResponse::tool_calls([
        call("a", "echo"),
        call("b", "echo"),
    ])]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(limit(None, Some(1), ToolLimitExit::Error))
        .build()
        .unwrap();
    let error = middleware_error(agent.run("go").await);
    assert_eq!(error.middleware(), Some("ToolCallLimit"));
    let exceeded = error
        .inner()
        .downcast_ref::<ToolCallLimitExceeded>()
        .unwrap();
    assert_eq!(exceeded.scope, LimitScope::Thread);
    assert_eq!(exceeded.limit, 1);
    // Neither call ran: both count as blocked, in the run only.
    assert_eq!((exceeded.run_calls, exceeded.thread_calls), (2, 0));
    assert!(exceeded.to_string().contains("for all tools"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn exit_error_leaves_no_dangling_call_in_the_thread() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ModelResponse::tool_calls([
        call("a", "echo"),
        call("b", "echo"),
    ])]);
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(limit(Some(1), None, ToolLimitExit::Error))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    middleware_error(agent.run_in(&mut thread, "go").await);
    // The answer whose calls tripped the limit never entered the history.
    validate_history(thread.messages()).unwrap();
    assert!(thread.messages().iter().all(|m| m.tool_calls.is_empty()));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn calls_another_hook_answered_are_not_counted() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([call("nameless", ""), call("a", "echo")]),
        ModelResponse::text("done"),
    ]);
    // ToolCallRepair answers the nameless call (its `after_model` runs first): it never runs,
    // so it does not use up the limit of 1, and `a` runs.
    let agent = Agent::builder(model)
        .tool(counting_tool("echo", &runs))
        .chain(chain![
            limit(Some(1), None, ToolLimitExit::Continue),
            ToolCallRepair::new()
        ])
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    validate_history(&output.messages).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(!result_of(&output.messages, "a").is_error);
    assert!(
        result_of(&output.messages, "nameless")
            .text()
            .contains("names no tool")
    );
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    assert_eq!(
        ToolCallLimit::builder().build().unwrap_err().field(),
        "run_limit"
    );
    let zero = ToolCallLimit::builder().run_limit(0).build().unwrap_err();
    assert_eq!(zero.field(), "run_limit");
    let empty = ToolCallLimit::builder()
        .tool(" ")
        .thread_limit(1)
        .build()
        .unwrap_err();
    assert_eq!(empty.field(), "tool");
}
