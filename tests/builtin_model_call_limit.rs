//! `ModelCallLimit`: the rules of DESIGN §11, one test each.

mod support;

use hookchain::builtin::model_call_limit::{ModelCallLimitExceeded, ThreadModelCalls};
use hookchain::builtin::{LimitExit, LimitScope, ModelCallLimit};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{EndReason, Role};
use support::{echo_call, echo_tool, middleware_error, new_log};

/// A model that always calls `echo`: only a limit ends its runs.
fn looping_model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let id = format!("c{}", request.messages.len());
        Ok(ModelResponse::tool_calls([echo_call(&id, "again")]))
    })
}

fn limit(run: Option<u32>, thread: Option<u32>, exit: LimitExit) -> ModelCallLimit {
    let mut builder = ModelCallLimit::builder().exit(exit);
    if let Some(run) = run {
        builder = builder.run_limit(run);
    }
    if let Some(thread) = thread {
        builder = builder.thread_limit(thread);
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn the_run_limit_is_checked_before_each_call_as_count_reaches_limit() {
    let agent = Agent::builder(looping_model())
        .tool(echo_tool(&new_log()))
        .chain(limit(Some(2), None, LimitExit::End))
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    // Calls 0 and 1 pass (`0 >= 2`, `1 >= 2` are false); the third is refused (`2 >= 2`).
    assert_eq!(output.model_calls, 2);
    assert_eq!(agent.model().calls(), 2);
    assert_eq!(output.end, EndReason::Jumped);
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn exit_end_adds_an_assistant_message_naming_the_limit_and_the_counts_then_ends() {
    let agent = Agent::builder(looping_model())
        .tool(echo_tool(&new_log()))
        .chain(limit(Some(2), Some(10), LimitExit::End))
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    let last = output.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert!(last.tool_calls.is_empty());
    let text = output.text().unwrap();
    assert!(text.contains("run limit of 2 model calls"), "{text}");
    assert!(text.contains("2 in this run, 2 in this thread"), "{text}");
    assert_eq!(output.end, EndReason::Jumped);
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn exit_error_fails_the_run_naming_the_limit_and_the_counts() {
    let agent = Agent::builder(looping_model())
        .tool(echo_tool(&new_log()))
        .chain(limit(None, Some(1), LimitExit::Error))
        .build()
        .unwrap();
    let error = middleware_error(agent.run("go").await);
    assert_eq!(error.middleware(), Some("ModelCallLimit"));
    let exceeded = error
        .inner()
        .downcast_ref::<ModelCallLimitExceeded>()
        .unwrap();
    assert_eq!(exceeded.scope, LimitScope::Thread);
    assert_eq!(exceeded.limit, 1);
    assert_eq!((exceeded.run_calls, exceeded.thread_calls), (1, 1));
    assert!(exceeded.to_string().contains("thread limit of 1"));
    assert_eq!(agent.model().calls(), 1);
}

#[tokio::test]
async fn the_run_count_resets_every_run_and_the_thread_count_lives_with_the_thread() {
    let agent = Agent::builder(looping_model())
        .tool(echo_tool(&new_log()))
        .chain(limit(Some(2), Some(5), LimitExit::End))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let mut calls = Vec::new();
    for input in ["one", "two", "three", "four"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        validate_history(&output.messages).unwrap();
        calls.push(output.model_calls);
    }
    // 2 + 2 + 1 reaches the thread's 5; the last run makes none.
    assert_eq!(calls, [2, 2, 1, 0]);
    assert_eq!(thread.state(), &ThreadModelCalls(5));
    let last = thread.messages().last().unwrap().text().into_owned();
    assert!(last.contains("thread limit of 5"), "{last}");
    assert!(last.contains("0 in this run, 5 in this thread"), "{last}");

    // A run outside a thread starts from zero in both.
    assert_eq!(agent.run("five").await.unwrap().model_calls, 2);
}

#[tokio::test]
async fn a_run_within_the_limits_is_untouched() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(limit(Some(2), Some(2), LimitExit::Error))
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("done"));
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    let none = ModelCallLimit::builder().build().unwrap_err();
    assert_eq!(none.field(), "run_limit");
    let zero = ModelCallLimit::builder()
        .run_limit(3)
        .thread_limit(0)
        .build()
        .unwrap_err();
    assert_eq!(zero.field(), "thread_limit");
    assert!(zero.to_string().starts_with("invalid `thread_limit`: "));
    assert!(ModelCallLimit::builder().thread_limit(1).build().is_ok());
}
