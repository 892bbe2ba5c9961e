//! The semantics of one agent run (the rules in the `middleware` module docs), one test per rule,
//! pinned by exact event logs.
//!
//! Most tests build a chain of [`Recorder`]s labelled `a`, `b`, `c` that log every hook into a
//! shared log, together with the model (`"model"`) and the tools (`"tool:<name>"`), then compare
//! the whole log with the expected order.

mod support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::oneshot;
use hookchain::error::Report;
use hookchain::middleware::{False, HookSet, JumpSet, True, phase};
use hookchain::prelude::*;
use hookchain::{EndReason, FnTool, MiddlewareError, Role, Tool};
use serde_json::json;

use support::{
    Log, Recorder, TextArgs, assert_no_dangling, calls_then_text, counting_tool, echo_call,
    echo_tool, events, logged_model, middleware_error, new_log, push, tool_results,
};

/// An agent with the system prompt `"base"`, the `echo` tool and `chain`.
fn agent<C: Middleware>(model: ScriptedModel, log: &Log, chain: C) -> Agent<ScriptedModel, C> {
    Agent::builder(model)
        .system_prompt("base")
        .tool(echo_tool(log))
        .chain(chain)
        .build()
        .unwrap()
}

/// The contents of the messages of `messages`, as `(role, content)`.
fn transcript(messages: &[Message]) -> Vec<(Role, &str)> {
    messages
        .iter()
        .map(|m| (m.role, m.content.as_text().unwrap()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. Order of the sequential hooks
// ---------------------------------------------------------------------------------------------

/// "before_agent (chain order) … before_model (chain order) … after_model (reverse chain order)
/// … after_agent (reverse chain order)."
#[tokio::test]
async fn before_hooks_run_in_chain_order_after_hooks_in_reverse() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log),
        Recorder::new("c", &log),
    );
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let output = agent(model, &log, chain).run("hi").await.unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "c:wrap_model:enter",
            "model",
            "c:wrap_model:exit",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "c:after_model",
            "b:after_model",
            "a:after_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Onions
// ---------------------------------------------------------------------------------------------

/// "wrap_model_call (first listed = outermost)" and "wrap_tool_call per tool call (onion,
/// first = outermost)".
#[tokio::test]
async fn wraps_nest_with_the_first_listed_outermost() {
    let log = new_log();
    let chain = (Recorder::new("a", &log), Recorder::new("b", &log));
    let model = logged_model(
        &log,
        calls_then_text([vec![echo_call("call_1", "x")]], "done"),
    );
    let output = agent(model, &log, chain).run("hi").await.unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    assert_no_dangling(&output.messages);
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            // step 1: the model calls `echo`
            "a:before_model",
            "b:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "model",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "b:after_model",
            "a:after_model",
            "a:wrap_tool:enter:echo",
            "b:wrap_tool:enter:echo",
            "tool:echo",
            "b:wrap_tool:exit:echo",
            "a:wrap_tool:exit:echo",
            // step 2: the model answers
            "a:before_model",
            "b:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "model",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "b:after_model",
            "a:after_model",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Retry
// ---------------------------------------------------------------------------------------------

/// "wrap_model_call … next may be called 0..n times" and "Retrying a wrap re-runs inner wraps
/// from the request it was given, so an inner addition appears exactly once per attempt."
#[tokio::test]
async fn retry_reruns_inner_wraps_from_the_request_it_was_given() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log).stamp_system("A").retry_model(),
        Recorder::new("b", &log).stamp_system("B"),
    );
    let model = logged_model(
        &log,
        [ModelResponse::text("first"), ModelResponse::text("second")],
    );
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(agent.model().calls(), 2);
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.steps, 1);
    // The second attempt's answer is the one kept; the history holds one answer.
    assert_eq!(output.text().as_deref(), Some("second"));
    assert_eq!(
        transcript(&output.messages),
        [(Role::User, "hi"), (Role::Assistant, "second")]
    );
    // Each attempt saw the outer addition and the inner one exactly once.
    let prompts: Vec<_> = agent
        .model()
        .requests()
        .into_iter()
        .map(|request| request.system_prompt)
        .collect();
    assert_eq!(
        prompts,
        [Some("base\nA\nB".to_owned()), Some("base\nA\nB".to_owned())]
    );
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "a:before_model",
            "b:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "model",
            "b:wrap_model:exit",
            "b:wrap_model:enter",
            "model",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "b:after_model",
            "a:after_model",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// The tool onion retries the same way: a `wrap_tool_call` calling `next` twice runs the inner
/// wraps and the tool twice, and the call still gets exactly one result.
#[tokio::test]
async fn tool_retry_reruns_inner_wraps_and_the_tool() {
    let log = new_log();
    let runs = Arc::new(AtomicUsize::new(0));
    let chain = (
        Recorder::new("a", &log).retry_tool(),
        Recorder::new("b", &log),
    );
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![ToolCall::new("call_1", "count", json!({"text": "x"}))]],
            "done",
        ),
    );
    let agent = Agent::builder(model)
        .tool(counting_tool("count", &runs))
        .chain(chain)
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [("call_1".to_owned(), "ran".to_owned(), false)]
    );
    let tool_events: Vec<_> = events(&log)
        .into_iter()
        .filter(|event| event.contains("wrap_tool"))
        .collect();
    assert_eq!(
        tool_events,
        [
            "a:wrap_tool:enter:count",
            "b:wrap_tool:enter:count",
            "b:wrap_tool:exit:count",
            "b:wrap_tool:enter:count",
            "b:wrap_tool:exit:count",
            "a:wrap_tool:exit:count",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Short-circuit of the model
// ---------------------------------------------------------------------------------------------

/// "wrap_model_call … next may be called 0..n times": a wrap that never calls `next` answers in
/// place of the model; inner wraps and the model do not run, every `after_model` does.
#[tokio::test]
async fn wrap_model_call_can_short_circuit_the_model() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log).short_circuit_model(ModelResponse::text("cached")),
        Recorder::new("b", &log),
    );
    let model = logged_model(&log, [ModelResponse::text("from the model")]);
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(agent.model().calls(), 0);
    assert_eq!(output.model_calls, 0);
    assert_eq!(output.text().as_deref(), Some("cached"));
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "a:before_model",
            "b:before_model",
            "a:wrap_model:enter",
            "a:wrap_model:exit",
            "b:after_model",
            "a:after_model",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "`before_model` … `Respond(r)`: skip later `before_model` hooks and the model; `r` is the
/// response" and "A response that stands in for the model still passes through every
/// `after_model` hook".
#[tokio::test]
async fn before_model_respond_skips_later_before_model_hooks_and_the_model() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).returns(
            Hook::BeforeModel,
            Flow::respond(ModelResponse::text("stand-in")),
        ),
        Recorder::new("c", &log),
        Peek("peek", log.clone()),
    );
    let model = logged_model(&log, [ModelResponse::text("from the model")]);
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(agent.model().calls(), 0);
    assert_eq!(output.model_calls, 0);
    assert_eq!(output.steps, 1);
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(
        transcript(&output.messages),
        [(Role::User, "hi"), (Role::Assistant, "stand-in")]
    );
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            // c's before_model, every wrap and the model are skipped
            "peek:saw:stand-in",
            "c:after_model",
            "b:after_model",
            "a:after_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Short-circuit of a tool
// ---------------------------------------------------------------------------------------------

/// "wrap_tool_call … call `next` 0..n times": a wrap that never calls `next` answers in place
/// of the tool; the tool does not run and the returned result is the call's result.
#[tokio::test]
async fn wrap_tool_call_can_short_circuit_the_tool() {
    let log = new_log();
    let runs = Arc::new(AtomicUsize::new(0));
    let chain = (
        Recorder::new("a", &log).short_circuit_tool("from cache"),
        Recorder::new("b", &log),
    );
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![ToolCall::new("call_1", "count", json!({"text": "x"}))]],
            "done",
        ),
    );
    let agent = Agent::builder(model)
        .tool(counting_tool("count", &runs))
        .chain(chain)
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool must not run");
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [("call_1".to_owned(), "from cache".to_owned(), false)]
    );
    // The model read the short-circuited result.
    let second = &agent.model().requests()[1];
    assert_eq!(second.messages.last().unwrap().content, "from cache");
    let tool_events: Vec<_> = events(&log)
        .into_iter()
        .filter(|event| event.contains("tool"))
        .collect();
    assert_eq!(
        tool_events,
        ["a:wrap_tool:enter:count", "a:wrap_tool:exit:count"]
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Jump to end
// ---------------------------------------------------------------------------------------------

/// "Jump to end from any hook still runs every after_agent (reverse order); later before hooks,
/// the model and the tools are skipped." — from `before_model`.
#[tokio::test]
async fn jump_to_end_from_before_model_still_runs_every_after_agent() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).returns(Hook::BeforeModel, Flow::end()),
        Recorder::new("c", &log),
    );
    let model = logged_model(&log, [ModelResponse::text("never")]);
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(agent.model().calls(), 0);
    assert_eq!(transcript(&output.messages), [(Role::User, "hi")]);
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "Jump to end from any hook still runs every after_agent (reverse order)" — from
/// `after_model`: later `after_model` hooks and the response's tool calls are skipped, and each
/// skipped call gets an error result ("No dangling tool calls … also after a jump to end").
#[tokio::test]
async fn jump_to_end_from_after_model_skips_tools_and_still_runs_every_after_agent() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).returns(Hook::AfterModel, Flow::end()),
        Recorder::new("c", &log),
    );
    let model = logged_model(
        &log,
        [ModelResponse::tool_calls([
            echo_call("call_1", "x"),
            echo_call("call_2", "y"),
        ])],
    );
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(agent.model().calls(), 1);
    assert_no_dangling(&output.messages);
    let results = tool_results(&output.messages);
    assert_eq!(results.len(), 2);
    for ((id, content, is_error), expected) in results.iter().zip(["call_1", "call_2"]) {
        assert_eq!(id, expected);
        assert!(is_error);
        assert!(content.contains("not executed"), "{content}");
    }
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "c:wrap_model:enter",
            "model",
            "c:wrap_model:exit",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "c:after_model",
            "b:after_model",
            // a's after_model and the tools are skipped
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "Jump to end from any hook still runs every after_agent (reverse order)" — from
/// `before_agent`: later `before_agent` hooks and the whole loop are skipped.
#[tokio::test]
async fn jump_to_end_from_before_agent_still_runs_every_after_agent() {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).returns(Hook::BeforeAgent, Flow::end()),
        Recorder::new("c", &log),
    );
    let model = logged_model(&log, [ModelResponse::text("never")]);
    let agent = agent(model, &log, chain);
    let output = agent.run("hi").await.unwrap();

    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(agent.model().calls(), 0);
    assert_eq!(output.steps, 0);
    assert_eq!(
        events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 7. One result per tool call
// ---------------------------------------------------------------------------------------------

/// Runs an agent (chain `(a,)`, tools `echo`, `fail`, `boom`) whose model makes `call` and then
/// answers `"done"`, and checks the run went on: one result for the call, no dangling call.
/// Returns the call's result as `(content, is_error)`.
async fn single_call_result(call: ToolCall) -> (String, bool) {
    let log = new_log();
    let failing = FnTool::new("fail", "Always fails.", |_: TextArgs| async {
        Err::<String, _>("disk full")
    });
    let panicking = FnTool::new("boom", "Always panics.", |_: TextArgs| async {
        if true {
            panic!("kaboom");
        }
        Ok::<_, Infallible>("unreachable")
    });
    let model = logged_model(&log, calls_then_text([vec![call.clone()]], "done"));
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .tool(failing)
        .tool(panicking)
        .chain((Recorder::new("a", &log),))
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    assert_eq!(
        output.text().as_deref(),
        Some("done"),
        "the run goes on after a failed call"
    );
    assert_eq!(output.end, EndReason::Finished);
    assert_no_dangling(&output.messages);
    let results = tool_results(&output.messages);
    assert_eq!(results.len(), 1, "{results:?}");
    let (id, content, is_error) = results.into_iter().next().unwrap();
    assert_eq!(id, call.id);
    assert!(
        events(&log).contains(&format!("a:wrap_tool:exit:{}", call.name)),
        "the failure came back through the onion as a result"
    );
    (content, is_error)
}

/// "Every tool call the model makes gets exactly one tool result message" — unknown tool.
#[tokio::test]
async fn unknown_tool_gets_one_error_result() {
    let (content, is_error) =
        single_call_result(ToolCall::new("call_1", "nope", json!({"text": "x"}))).await;
    assert!(is_error);
    assert!(content.contains("unknown tool `nope`"), "{content}");
}

/// "Every tool call the model makes gets exactly one tool result message" — arguments that do
/// not deserialize into the tool's argument type.
#[tokio::test]
async fn bad_arguments_get_one_error_result() {
    let (content, is_error) =
        single_call_result(ToolCall::new("call_1", "echo", json!({"txt": 1}))).await;
    assert!(is_error);
    assert!(
        content.contains("invalid arguments for tool `echo`"),
        "{content}"
    );
}

/// "Every tool call the model makes gets exactly one tool result message, also when … a tool
/// fails".
#[tokio::test]
async fn tool_error_gets_one_error_result() {
    let (content, is_error) =
        single_call_result(ToolCall::new("call_1", "fail", json!({"text": "x"}))).await;
    assert!(is_error);
    // The model reads which tool failed, not the tool's own error text (`disk full`).
    assert_eq!(content, "tool `fail` failed");
}

/// "Every tool call the model makes gets exactly one tool result message, also when … a tool
/// … panics".
#[tokio::test]
async fn panicking_tool_gets_one_error_result() {
    let (content, is_error) =
        single_call_result(ToolCall::new("call_1", "boom", json!({"text": "x"}))).await;
    assert!(is_error);
    assert_eq!(content, "tool `boom` failed unexpectedly (it crashed)");
}

/// "Every tool call the model makes gets exactly one tool result message" — every kind of
/// failure in one step, next to a call that works: one result each, in call order.
#[tokio::test]
async fn mixed_failures_in_one_step_each_get_one_result_in_call_order() {
    let log = new_log();
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![
                ToolCall::new("c1", "nope", json!({})),
                echo_call("c2", "fine"),
                ToolCall::new("c3", "echo", json!({"txt": 1})),
            ]],
            "done",
        ),
    );
    let output = agent(model, &log, (Recorder::new("a", &log),))
        .run("hi")
        .await
        .unwrap();

    assert_no_dangling(&output.messages);
    let results = tool_results(&output.messages);
    let summary: Vec<_> = results
        .iter()
        .map(|(id, _, is_error)| (id.as_str(), *is_error))
        .collect();
    assert_eq!(summary, [("c1", true), ("c2", false), ("c3", true)]);
    assert_eq!(results[1].1, "fine");
    assert_eq!(output.tool_calls, 3);
}

// ---------------------------------------------------------------------------------------------
// 8. Several tool calls in one step
// ---------------------------------------------------------------------------------------------

/// A tool named `name` that signals `arrived`, waits for `other` (the other tool's signal), and
/// returns its name: two of them complete only if they run at the same time.
fn rendezvous_tool(
    name: &'static str,
    log: &Log,
    arrived: oneshot::Sender<()>,
    other: oneshot::Receiver<()>,
) -> impl Tool {
    let log = log.clone();
    let ends = Mutex::new(Some((arrived, other)));
    FnTool::new(name, "Waits for its partner.", move |_: TextArgs| {
        let (arrived, other) = ends.lock().unwrap().take().expect("called once");
        let log = log.clone();
        async move {
            push(&log, format!("{name}:arrived"));
            arrived.send(()).unwrap();
            other.await.unwrap();
            push(&log, format!("{name}:left"));
            Ok::<_, Infallible>(name)
        }
    })
}

/// "the calls of one step may run concurrently" and every call gets its result, in call order.
#[tokio::test]
async fn tool_calls_of_one_step_run_concurrently_and_results_keep_call_order() {
    let log = new_log();
    let (left_tx, left_rx) = oneshot::channel();
    let (right_tx, right_rx) = oneshot::channel();
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![
                ToolCall::new("call_1", "left", json!({"text": ""})),
                ToolCall::new("call_2", "right", json!({"text": ""})),
            ]],
            "done",
        ),
    );
    let agent = Agent::builder(model)
        .tool(rendezvous_tool("left", &log, left_tx, right_rx))
        .tool(rendezvous_tool("right", &log, right_tx, left_rx))
        .chain((Recorder::new("a", &log),))
        .build()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(5), agent.run("hi"))
        .await
        .expect("the two tools wait for each other: they must run concurrently")
        .unwrap();

    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [
            ("call_1".to_owned(), "left".to_owned(), false),
            ("call_2".to_owned(), "right".to_owned(), false),
        ]
    );
    let log = events(&log);
    let at = |event: &str| log.iter().position(|e| e == event).unwrap();
    assert!(at("left:arrived") < at("right:left") && at("right:arrived") < at("left:left"));
    // Both wraps entered before either left: the onions ran side by side.
    assert!(at("a:wrap_tool:enter:right") < at("a:wrap_tool:exit:left"));
}

/// A tool named `name` that logs its start, yields to the runtime once, and logs its end.
fn yielding_tool(name: &'static str, log: &Log) -> impl Tool {
    let log = log.clone();
    FnTool::new(name, "Yields once.", move |_: TextArgs| {
        let log = log.clone();
        async move {
            push(&log, format!("{name}:start"));
            tokio::task::yield_now().await;
            push(&log, format!("{name}:end"));
            Ok::<_, Infallible>(name)
        }
    })
}

/// Runs two yielding tools in one step with `concurrency` and returns the tools' events.
async fn yielding_step(concurrency: usize) -> Vec<String> {
    let log = new_log();
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![
                ToolCall::new("call_1", "first", json!({"text": ""})),
                ToolCall::new("call_2", "second", json!({"text": ""})),
            ]],
            "done",
        ),
    );
    let agent = Agent::builder(model)
        .tool(yielding_tool("first", &log))
        .tool(yielding_tool("second", &log))
        .tool_concurrency(concurrency)
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_no_dangling(&output.messages);
    let ids: Vec<_> = tool_results(&output.messages)
        .into_iter()
        .map(|(id, ..)| id)
        .collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    events(&log).into_iter().filter(|e| e != "model").collect()
}

/// `tool_concurrency(1)` runs the calls of a step one after the other; the default overlaps
/// them.
#[tokio::test]
async fn tool_concurrency_bounds_the_calls_running_at_once() {
    assert_eq!(
        yielding_step(1).await,
        ["first:start", "first:end", "second:start", "second:end"]
    );
    let overlapping = yielding_step(hookchain::agent::DEFAULT_TOOL_CONCURRENCY).await;
    let at = |event: &str| overlapping.iter().position(|e| e == event).unwrap();
    assert!(
        at("second:start") < at("first:end"),
        "both calls start before either ends: {overlapping:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 9. max_steps
// ---------------------------------------------------------------------------------------------

/// "loop { … } until no tool calls, a jump to end, or max_steps": a model that always calls a
/// tool stops with `Error::MaxStepsExceeded`.
#[tokio::test]
async fn max_steps_stops_a_model_that_always_calls_tools() {
    let log = new_log();
    let model = ScriptedModel::from_rule(|request| {
        let id = format!("call_{}", request.messages.len());
        Ok(ModelResponse::tool_calls([echo_call(&id, "again")]))
    });
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain((Recorder::new("a", &log),))
        .max_steps(3)
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();

    assert!(
        matches!(error, Error::MaxStepsExceeded { max_steps: 3 }),
        "{error:?}"
    );
    assert!(error.to_string().contains("max_steps = 3"), "{error}");
    assert_eq!(agent.model().calls(), 3);
    let log = events(&log);
    assert_eq!(log.iter().filter(|e| *e == "a:before_model").count(), 3);
    assert_eq!(log.iter().filter(|e| *e == "tool:echo").count(), 3);
    // The error ends the loop, but after_agent still runs: it always does once the run started.
    assert_eq!(
        log.last().map(String::as_str),
        Some("a:after_agent"),
        "{log:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 9b. How the last answer ended
// ---------------------------------------------------------------------------------------------

/// A run whose answer was refused, filtered or cut off is no unremarkable success: its end
/// says so, its stop reason is the provider's, and `parse` refuses it — streamed or not.
#[tokio::test]
async fn an_unfinished_answer_ends_the_run_as_what_it_is_streamed_or_not() {
    use futures::TryStreamExt;
    use hookchain::model::{OutputError, StopReason};
    let cases = [
        (StopReason::EndTurn, EndReason::Finished),
        (StopReason::StopSequence, EndReason::Finished),
        (StopReason::Refusal, EndReason::Refused),
        (StopReason::ContentFilter, EndReason::Filtered),
        (StopReason::MaxTokens, EndReason::Truncated),
    ];
    for (stop, end) in cases {
        let answer = || ModelResponse::new(Message::assistant("{\"a\": 1}"), stop);
        let agent = Agent::builder(ScriptedModel::new([answer(), answer()]))
            .build()
            .unwrap();
        let ran = agent.run("hi").await.unwrap();
        let mut events = agent.stream("hi");
        let mut streamed = None;
        while let Some(event) = events.try_next().await.unwrap() {
            if let AgentEvent::Output(output) = event {
                streamed = Some(output);
            }
        }
        let streamed = streamed.expect("the stream ends with the output");
        for output in [&ran, &*streamed] {
            assert_eq!(output.end, end, "{stop:?}");
            assert_eq!(output.stop_reason, Some(stop));
            let parsed = output.parse::<serde_json::Value>();
            if end == EndReason::Finished {
                assert_eq!(parsed.unwrap(), json!({ "a": 1 }));
            } else {
                assert!(
                    matches!(parsed, Err(OutputError::Unfinished(reason)) if reason == stop),
                    "{stop:?}"
                );
            }
        }
    }
}

/// A run that kept no answer has no stop reason; one that kept several has its last one's.
#[tokio::test]
async fn the_stop_reason_is_the_last_kept_answers() {
    use hookchain::model::StopReason;
    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]))
    .tool(echo_tool(&log))
    .build()
    .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(output.end, EndReason::Finished);
}

// ---------------------------------------------------------------------------------------------
// 10. Hook errors abort the run and name the middleware and the hook
// ---------------------------------------------------------------------------------------------

/// Runs `(a, b, c)` where `b` fails in `hook`, on a one-step text script; returns the error and
/// the log.
async fn run_failing_in(hook: Hook) -> (MiddlewareError, Vec<String>) {
    let log = new_log();
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).fails(hook, "boom"),
        Recorder::new("c", &log),
    );
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let error = middleware_error(agent(model, &log, chain).run("hi").await);
    (error, events(&log))
}

/// "Only hook errors outside the tool path abort the run, and the error names the middleware
/// and the hook" — `before_agent`.
#[tokio::test]
async fn before_agent_error_aborts_the_run_naming_middleware_and_hook() {
    let (error, log) = run_failing_in(Hook::BeforeAgent).await;
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::BeforeAgent));
    assert_eq!(error.inner().to_string(), "boom");
    assert_eq!(
        Report(&error).to_string(),
        "middleware `Recorder` failed in `before_agent`: boom"
    );
    // The error ends the run; every after_agent still runs, in reverse order.
    assert_eq!(
        log,
        [
            "a:before_agent",
            "b:before_agent",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "Only hook errors outside the tool path abort the run, and the error names the middleware
/// and the hook" — `before_model`.
#[tokio::test]
async fn before_model_error_aborts_the_run_naming_middleware_and_hook() {
    let (error, log) = run_failing_in(Hook::BeforeModel).await;
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    assert_eq!(error.inner().to_string(), "boom");
    assert_eq!(
        log,
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "Only hook errors outside the tool path abort the run, and the error names the middleware
/// and the hook" — `after_model`.
#[tokio::test]
async fn after_model_error_aborts_the_run_naming_middleware_and_hook() {
    let (error, log) = run_failing_in(Hook::AfterModel).await;
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::AfterModel));
    assert_eq!(error.inner().to_string(), "boom");
    assert_eq!(
        log,
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "c:wrap_model:enter",
            "model",
            "c:wrap_model:exit",
            "b:wrap_model:exit",
            "a:wrap_model:exit",
            "c:after_model",
            "b:after_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// "Only hook errors outside the tool path abort the run, and the error names the middleware
/// and the hook" — `after_agent`. The other members' `after_agent` hooks still run.
#[tokio::test]
async fn after_agent_error_fails_the_run_naming_middleware_and_hook() {
    let (error, log) = run_failing_in(Hook::AfterAgent).await;
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::AfterAgent));
    assert_eq!(error.inner().to_string(), "boom");
    assert_eq!(
        log[log.len() - 3..],
        ["c:after_agent", "b:after_agent", "a:after_agent"]
    );
}

/// A wrap hook that raises with `Error::middleware(NAME, Hook::WrapModelCall, err)` keeps its
/// name: "the error names the middleware and the hook".
#[tokio::test]
async fn wrap_model_error_raised_with_a_name_keeps_it() {
    let (error, log) = run_failing_in(Hook::WrapModelCall).await;
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::WrapModelCall));
    assert_eq!(
        Report(&error).to_string(),
        "middleware `Recorder` failed in `wrap_model_call`: boom"
    );
    // b failed before calling next: c's wrap and the model did not run; the run aborted.
    assert_eq!(
        log,
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
            "c:before_model",
            "a:wrap_model:enter",
            "b:wrap_model:enter",
            "a:wrap_model:exit",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
}

/// Fails in `before_model`; named `Failing`.
#[derive(Debug)]
struct Failing;

impl Middleware for Failing {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Failing";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);

    async fn before_model(
        &self,
        _: &mut Context,
        _thread: &mut (),
        _: &mut (),
        _: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        Err(Error::hook("inner boom"))
    }
}

/// "errors are not re-wrapped layer after layer": an error inside a nested chain is named after
/// the member that raised it, not after the chain around it, exactly as in a flat chain.
#[tokio::test]
async fn error_in_a_nested_chain_is_named_after_the_inner_member() {
    let log = new_log();
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let nested = agent(
        model,
        &log,
        (
            (Recorder::new("a", &log), Failing),
            Recorder::new("c", &log),
        ),
    );
    let error = middleware_error(nested.run("hi").await);
    assert_eq!(error.middleware(), Some("Failing"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    assert_eq!(error.inner().to_string(), "inner boom");
    assert_eq!(
        Report(&error).to_string(),
        "middleware `Failing` failed in `before_model`: inner boom"
    );

    let model = logged_model(&log, [ModelResponse::text("done")]);
    let flat = agent(
        model,
        &log,
        (Recorder::new("a", &log), Failing, Recorder::new("c", &log)),
    );
    let flat_error = middleware_error(flat.run("hi").await);
    assert_eq!(flat_error.to_string(), error.to_string());

    // A named wrap error deep in a nested chain keeps its name too.
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let deep = agent(
        model,
        &log,
        (
            Recorder::new("a", &log),
            ((Recorder::new("b", &log).fails(Hook::WrapModelCall, "deep"),),),
        ),
    );
    let error = middleware_error(deep.run("hi").await);
    assert_eq!(error.middleware(), Some("Recorder"));
    assert_eq!(error.hook(), Some(Hook::WrapModelCall));
    assert_eq!(error.inner().to_string(), "deep");
}

/// Fails in `wrap_model_call` with an unnamed `Error::hook`.
#[derive(Debug)]
struct AnonymousWrapFailure;

impl Middleware for AnonymousWrapFailure {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = False;
    const NAME: &'static str = "AnonymousWrapFailure";
    const HOOKS: HookSet = HookSet::of(Hook::WrapModelCall);

    async fn wrap_model_call<N: ModelNext>(
        &self,
        _: &mut Context,
        _thread: &mut (),
        _: &mut (),
        _: ModelRequest,
        _: N,
    ) -> Result<ModelResponse, Error> {
        Err(Error::hook("anonymous"))
    }
}

/// The chain adds no layer around wrap hooks, so a wrap error raised without a name keeps no
/// name, but the hook is recorded (documented on `Middleware::wrap_model_call`).
#[tokio::test]
async fn unnamed_wrap_model_error_records_the_hook_only() {
    let log = new_log();
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let agent = agent(
        model,
        &log,
        (Recorder::new("a", &log), AnonymousWrapFailure),
    );
    let error = middleware_error(agent.run("hi").await);
    assert_eq!(error.middleware(), None);
    assert_eq!(error.hook(), Some(Hook::WrapModelCall));
    assert_eq!(
        Report(&error).to_string(),
        "a middleware failed in `wrap_model_call`: anonymous"
    );
}

// ---------------------------------------------------------------------------------------------
// 11. Errors on the tool path become results
// ---------------------------------------------------------------------------------------------

/// "an error that escapes a `wrap_tool_call` layer also becomes the result for that call" and
/// the run continues.
#[tokio::test]
async fn wrap_tool_error_becomes_the_calls_error_result_and_the_run_goes_on() {
    let log = new_log();
    let runs = Arc::new(AtomicUsize::new(0));
    let chain = (
        Recorder::new("a", &log),
        Recorder::new("b", &log).fails(Hook::WrapToolCall, "denied"),
    );
    let model = logged_model(
        &log,
        calls_then_text(
            [vec![ToolCall::new("call_1", "count", json!({"text": "x"}))]],
            "done",
        ),
    );
    let agent = Agent::builder(model)
        .tool(counting_tool("count", &runs))
        .chain(chain)
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(agent.model().calls(), 2);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [(
            "call_1".to_owned(),
            "tool call `count` failed".to_owned(),
            true,
        )]
    );
    // The application (and `tracing`) get the full error; the model only read the line above.
    let failure = &output.tool_failures[0];
    assert_eq!(failure.tool(), "count");
    assert!(
        Report(failure.error())
            .to_string()
            .contains("`Recorder` failed in `wrap_tool_call`: denied")
    );
    let tool_events: Vec<_> = events(&log)
        .into_iter()
        .filter(|event| event.contains("tool"))
        .collect();
    assert_eq!(
        tool_events,
        [
            "a:wrap_tool:enter:count",
            "b:wrap_tool:enter:count",
            "a:wrap_tool:exit:count",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 12. Undeclared jumps
// ---------------------------------------------------------------------------------------------

/// Jumps to the end from `before_model`, but declares `end` for `after_model` only.
#[derive(Debug)]
struct EndsFromTheWrongHook;

impl Middleware for EndsFromTheWrongHook {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "EndsFromTheWrongHook";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);
    const JUMPS: JumpSet = JumpSet::of(Hook::AfterModel, Jump::End);

    async fn before_model(
        &self,
        _: &mut Context,
        _thread: &mut (),
        _: &mut (),
        _: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        Ok(Flow::end())
    }
}

/// "Undeclared jump target is … a run error naming the middleware — never silently ignored."
#[tokio::test]
async fn undeclared_jump_is_an_error_naming_the_middleware() {
    let log = new_log();
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let agent = agent(
        model,
        &log,
        (Recorder::new("a", &log), EndsFromTheWrongHook),
    );
    let error = agent.run("hi").await.unwrap_err();

    assert!(
        matches!(
            error,
            Error::UndeclaredJump {
                middleware: "EndsFromTheWrongHook",
                hook: Hook::BeforeModel,
                target: Jump::End,
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("EndsFromTheWrongHook") && message.contains("JUMPS"),
        "{message}"
    );
    assert_eq!(agent.model().calls(), 0);
    assert_eq!(
        events(&log),
        ["a:before_agent", "a:before_model", "a:after_agent"]
    );

    // Also as the whole chain, not a member of a tuple.
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let alone = Agent::builder(model)
        .chain(EndsFromTheWrongHook)
        .build()
        .unwrap();
    let error = alone.run("hi").await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::UndeclaredJump {
                middleware: "EndsFromTheWrongHook",
                ..
            }
        ),
        "{error:?}"
    );
}

/// Returns the flows it is given: `before_model` declares `end`, `after_model` declares nothing.
/// The flows come from fields (known at run time only), so the macro cannot check them.
#[derive(Debug)]
struct EndsFrom {
    before_model: Flow,
    after_model: Flow,
}

#[hookchain::middleware]
impl EndsFrom {
    #[hook(before_model, jumps = [end])]
    fn before(&self) -> Flow {
        self.before_model.clone()
    }

    #[hook(after_model)]
    fn after(&self) -> Flow {
        self.after_model.clone()
    }
}

/// "Jump declarations are per hook": `jumps = [end]` on one hook of a `#[middleware]` block lets
/// that hook end the run, and no other hook of the block.
#[tokio::test]
async fn jump_declarations_are_per_hook() {
    let log = new_log();
    let declared = EndsFrom {
        before_model: Flow::end(),
        after_model: Flow::Continue,
    };
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let output = agent(model, &log, declared).run("hi").await.unwrap();
    assert_eq!(output.end, EndReason::Jumped);

    let undeclared = EndsFrom {
        before_model: Flow::Continue,
        after_model: Flow::end(),
    };
    let model = logged_model(&log, [ModelResponse::text("done")]);
    let error = agent(model, &log, undeclared).run("hi").await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::UndeclaredJump {
                middleware: "EndsFrom",
                hook: Hook::AfterModel,
                target: Jump::End,
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("#[hook(after_model, jumps = [end])]"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------------
// 13. Option<M>
// ---------------------------------------------------------------------------------------------

/// Runs `chain` on a one-tool-call script and returns the log.
async fn log_of<C: Middleware>(log: &Log, chain: C) -> Vec<String> {
    let model = logged_model(
        log,
        calls_then_text([vec![echo_call("call_1", "x")]], "done"),
    );
    let output = agent(model, log, chain).run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_no_dangling(&output.messages);
    events(log)
}

/// "`Option<M>` (toggle)": `Some(m)` behaves as `m`, `None` lets every hook pass through.
#[tokio::test]
async fn option_some_behaves_like_the_middleware_and_none_passes_through() {
    let log = new_log();
    let plain = log_of(&log, (Recorder::new("a", &log), Recorder::new("b", &log))).await;
    let log = new_log();
    let some = log_of(
        &log,
        (Some(Recorder::new("a", &log)), Recorder::new("b", &log)),
    )
    .await;
    assert_eq!(some, plain);

    let log = new_log();
    let only_b = log_of(&log, (Recorder::new("b", &log),)).await;
    let log = new_log();
    let none = log_of(&log, (None::<Recorder>, Recorder::new("b", &log))).await;
    assert_eq!(none, only_b);
    assert!(
        none.iter().all(|event| !event.starts_with("a:")),
        "{none:?}"
    );

    // Some(a) keeps a's behaviour, not just its events: a short-circuit still short-circuits.
    let log = new_log();
    let model = logged_model(&log, [ModelResponse::text("from the model")]);
    let toggled = Some(Recorder::new("a", &log).short_circuit_model(ModelResponse::text("hit")));
    let agent = agent(model, &log, toggled);
    assert_eq!(
        agent.run("hi").await.unwrap().text().as_deref(),
        Some("hit")
    );
    assert_eq!(agent.model().calls(), 0);
}

// ---------------------------------------------------------------------------------------------
// 14. Per-run state
// ---------------------------------------------------------------------------------------------

/// Counts `before_model` calls in its state; logs the count at every call and at the end.
#[derive(Debug)]
struct Counter(Log);

impl Middleware for Counter {
    type State = u32;
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Counter";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel).with(Hook::AfterAgent);

    async fn before_model(
        &self,
        _: &mut Context,
        count: &mut u32,
        _thread: &mut (),
        _: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        *count += 1;
        push(&self.0, format!("count={count}"));
        Ok(Flow::Continue)
    }

    async fn after_agent(
        &self,
        _: &mut Context,
        count: &mut u32,
        _thread: &mut (),
    ) -> Result<(), Error> {
        push(&self.0, format!("final={count}"));
        Ok(())
    }
}

/// "Configuration lives in the struct; per-run or per-thread data lives in State": each run of
/// the same agent starts from `State::default()`.
#[tokio::test]
async fn state_is_fresh_for_every_run() {
    let log = new_log();
    // Calls `echo` until it sees a tool result, then answers: two steps per run.
    let model = ScriptedModel::from_rule(|request| {
        Ok(match request.messages.last() {
            Some(last) if last.role == Role::Tool => ModelResponse::text("done"),
            _ => ModelResponse::tool_calls([echo_call("call_1", "x")]),
        })
    });
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain((Counter(log.clone()),))
        .build()
        .unwrap();
    agent.run("first run").await.unwrap();
    agent.run("second run").await.unwrap();

    assert_eq!(
        events(&log),
        [
            "count=1",
            "tool:echo",
            "count=2",
            "final=2",
            "count=1",
            "tool:echo",
            "count=2",
            "final=2",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 15. Request vs history
// ---------------------------------------------------------------------------------------------

/// In step 1, edits the request (system prompt and messages) and the history.
#[derive(Debug)]
struct Editor;

impl Middleware for Editor {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Editor";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);

    async fn before_model(
        &self,
        cx: &mut Context,
        _: &mut (),
        _thread: &mut (),
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        if cx.step() == 1 {
            request.messages.push(Message::user("request-only"));
            request
                .system_prompt
                .get_or_insert_with(String::new)
                .push_str("\nREQUEST-EDIT");
            cx.edit_history(|messages| messages.push(Message::user("history-edit")))
                .unwrap();
        }
        Ok(Flow::Continue)
    }
}

/// "Edits to the `ModelRequest` (in `before_model` or a wrap) affect that call only; the
/// conversation history changes only through explicit history edits on the run context".
#[tokio::test]
async fn request_edits_affect_one_call_history_edits_persist() {
    let log = new_log();
    let model = logged_model(
        &log,
        calls_then_text([vec![echo_call("call_1", "x")]], "done"),
    );
    let agent = agent(model, &log, (Editor,));
    let output = agent.run("hi").await.unwrap();
    let requests = agent.model().requests();
    assert_eq!(requests.len(), 2);

    // Step 1: the request carries the edits.
    assert_eq!(
        requests[0].system_prompt.as_deref(),
        Some("base\nREQUEST-EDIT")
    );
    assert!(
        requests[0]
            .messages
            .iter()
            .any(|m| m.content == "request-only")
    );
    // The step's request was built before the hook ran: the history edit shows from step 2 on
    // (rebuilding the request would undo request-only edits such as input redaction).
    assert!(
        !requests[0]
            .messages
            .iter()
            .any(|m| m.content == "history-edit")
    );
    // Step 2: the request edits are gone, the history edit is there.
    assert_eq!(requests[1].system_prompt.as_deref(), Some("base"));
    assert_eq!(
        transcript(&requests[1].messages),
        [
            (Role::User, "hi"),
            (Role::User, "history-edit"),
            (Role::Assistant, ""),
            (Role::Tool, "x"),
        ]
    );
    // The history keeps the history edit only.
    assert_eq!(
        transcript(&output.messages),
        [
            (Role::User, "hi"),
            (Role::User, "history-edit"),
            (Role::Assistant, ""),
            (Role::Tool, "x"),
            (Role::Assistant, "done"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 16. Nested chains
// ---------------------------------------------------------------------------------------------

/// "A chain … implements `Middleware` too, so chains nest": `((a, b), c)` and `(a, (b, c))` run
/// exactly like `(a, b, c)`.
#[tokio::test]
async fn nested_chains_run_like_the_flat_chain() {
    let recorders = |log: &Log| {
        (
            Recorder::new("a", log),
            Recorder::new("b", log),
            Recorder::new("c", log),
        )
    };
    let log = new_log();
    let flat = log_of(&log, recorders(&log)).await;
    let log = new_log();
    let (a, b, c) = recorders(&log);
    let left = log_of(&log, ((a, b), c)).await;
    let log = new_log();
    let (a, b, c) = recorders(&log);
    let right = log_of(&log, (a, (b, c))).await;
    let log = new_log();
    let (a, b, c) = recorders(&log);
    let deep = log_of(&log, (((a,), (b,)), ((c,),))).await;

    assert_eq!(flat.len(), 39, "{flat:?}");
    assert_eq!(left, flat);
    assert_eq!(right, flat);
    assert_eq!(deep, flat);
}

// ---------------------------------------------------------------------------------------------
// 17. Respond from after_model
// ---------------------------------------------------------------------------------------------

/// Logs `"<label>:saw:<content>"` in `after_model`.
#[derive(Debug)]
struct Peek(&'static str, Log);

impl Middleware for Peek {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Peek";
    const HOOKS: HookSet = HookSet::of(Hook::AfterModel);

    async fn after_model(
        &self,
        _: &mut Context,
        _thread: &mut (),
        _: &mut (),
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        push(
            &self.1,
            format!("{}:saw:{}", self.0, response.message.content),
        );
        Ok(Flow::Continue)
    }
}

/// "`after_model` … `Respond(r)`: replace the response with `r`, go on": the remaining
/// `after_model` hooks see the replacement, and the history holds it.
#[tokio::test]
async fn after_model_respond_replaces_the_response_for_the_remaining_hooks() {
    let log = new_log();
    let chain = (
        Peek("first", log.clone()),
        Recorder::new("a", &log),
        Recorder::new("b", &log).returns(
            Hook::AfterModel,
            Flow::respond(ModelResponse::text("replaced")),
        ),
        Peek("last", log.clone()),
    );
    let model = logged_model(&log, [ModelResponse::text("original")]);
    let output = agent(model, &log, chain).run("hi").await.unwrap();

    assert_eq!(output.text().as_deref(), Some("replaced"));
    assert_eq!(
        transcript(&output.messages),
        [(Role::User, "hi"), (Role::Assistant, "replaced")]
    );
    let after_model: Vec<_> = events(&log)
        .into_iter()
        .filter(|event| event.contains("after_model") || event.contains(":saw:"))
        .collect();
    assert_eq!(
        after_model,
        [
            "last:saw:original",
            "b:after_model",
            "a:after_model",
            "first:saw:replaced",
        ]
    );
}
