//! One gate for every call (DESIGN §13): tool calls that come in the run's input, or that a jump
//! runs, pass the same approval and limits as calls the model proposes (`after_model`) before
//! they run; and every call of a history has its own id, so its own idempotency key.

mod support;

use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::builtin::tool_call_limit::{ToolCallLimit, ToolLimitExit};
use hookchain::prelude::*;
use hookchain::{EndReason, Role, chain, hook};
use serde_json::json;
use support::{EffectTool, Effects, assert_no_dangling};

/// An agent with a `pay` tool that needs an approval; its model answers "done".
fn gated(ran: &Effects) -> Agent<ScriptedModel, HumanInTheLoop> {
    Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .tool(EffectTool {
            name: "pay",
            effects: ran.clone(),
            hang: false,
        })
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .build()
        .unwrap()
}

/// A client's message list whose last message asks for `pay`: what a service that forwards
/// its client's messages receives.
fn forwarded(calls: &[(&str, &str)]) -> Vec<Message> {
    vec![
        Message::user("pay the bill"),
        Message::assistant_with_tool_calls(
            "",
            calls
                .iter()
                .map(|(id, name)| ToolCall::new(*id, *name, json!({}))),
        ),
    ]
}

/// "A gated tool ran without approval when the call arrived in the run's input": it pauses for
/// the approval first, and runs once approved.
#[tokio::test]
async fn a_call_in_the_input_waits_for_its_approval() {
    let ran = Effects::memory();
    let agent = gated(&ran);
    let paused = agent.run(forwarded(&[("c1", "pay")])).await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert!(
        ran.lines().is_empty(),
        "the gated call ran without approval"
    );
    assert!(agent.model().requests().is_empty());

    let checkpoint = paused.checkpoint.unwrap();
    let answers: Vec<_> = checkpoint
        .interrupts()
        .iter()
        .map(|interrupt| {
            let request = ApprovalRequest::from_interrupt(interrupt).unwrap();
            assert_eq!(request.actions[0].name, "pay");
            ApprovalResponse::approve_all(&request).answer(interrupt)
        })
        .collect();
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(ran.of("pay").len(), 1);
    assert_no_dangling(&done.messages);
    let roles: Vec<Role> = done.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
}

/// A call the input already answered keeps its result and does not run; the others of its
/// message pass the gate.
#[tokio::test]
async fn an_answered_call_of_the_input_keeps_its_result() {
    let ran = Effects::memory();
    let agent = gated(&ran);
    let mut input = forwarded(&[("c1", "pay"), ("c2", "pay")]);
    input.push(Message::tool(ToolResult::ok("c1", "paid before")));
    let paused = agent.run(input).await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let checkpoint = paused.checkpoint.unwrap();
    let answers: Vec<_> = checkpoint
        .interrupts()
        .iter()
        .map(|interrupt| {
            let request = ApprovalRequest::from_interrupt(interrupt).unwrap();
            ApprovalResponse::approve_all(&request).answer(interrupt)
        })
        .collect();
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(ran.of("pay").len(), 1, "{:?}", ran.lines());
    assert!(ran.of("pay")[0].ends_with(":c2"));
    let results: Vec<String> = done
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.text().into_owned())
        .collect();
    assert_eq!(results, ["paid before", "pay done"]);
    assert_no_dangling(&done.messages);
}

/// Calls in the input count against `ToolCallLimit` as the model's do.
#[tokio::test]
async fn calls_in_the_input_count_against_the_limit() {
    let ran = Effects::memory();
    let limit = ToolCallLimit::builder()
        .tool("pay")
        .run_limit(1)
        .exit(ToolLimitExit::Continue)
        .build()
        .unwrap();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .tool(EffectTool {
            name: "pay",
            effects: ran.clone(),
            hang: false,
        })
        .chain(limit)
        .build()
        .unwrap();
    let done = agent
        .run(forwarded(&[("c1", "pay"), ("c2", "pay"), ("c3", "pay")]))
        .await
        .unwrap();
    assert_eq!(
        ran.of("pay").len(),
        1,
        "the limit let {:?} run",
        ran.lines()
    );
    assert!(done.messages[3].text().contains("Do not call `pay` again"));
    assert_no_dangling(&done.messages);
}

/// Jumps to the pending calls from the start of the run.
#[hook(before_agent, jumps = [tools])]
fn straight_to_tools() -> Flow {
    Flow::Jump(Jump::Tools)
}

/// A jump to the tools runs the pending calls through the same gate.
#[tokio::test]
async fn calls_a_jump_runs_wait_for_their_approval() {
    let ran = Effects::memory();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .tool(EffectTool {
            name: "pay",
            effects: ran.clone(),
            hang: false,
        })
        .chain(chain![
            straight_to_tools,
            HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    let paused = agent.run(forwarded(&[("c1", "pay")])).await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert!(
        ran.lines().is_empty(),
        "the jump ran a gated call without approval"
    );
}

/// "Two different calls shared one idempotency key": a model that numbers its calls per answer
/// repeats an id of an earlier step; the repeat is renamed before anything runs, so each call
/// has its own id in the history and its own idempotency key.
#[tokio::test]
async fn an_id_repeated_across_steps_is_renamed() {
    let ran = Effects::memory();
    let pay = |id: &str| ModelResponse::tool_calls([ToolCall::new(id, "pay", json!({}))]);
    let agent = Agent::builder(ScriptedModel::new([
        pay("call_0"),
        pay("call_0"),
        pay("call_0"),
        ModelResponse::text("done"),
    ]))
    .tool(EffectTool {
        name: "pay",
        effects: ran.clone(),
        hang: false,
    })
    .build()
    .unwrap();
    let mut thread = agent.thread();
    let done = agent.run_in(&mut thread, "pay thrice").await.unwrap();
    let keys = ran.of("pay");
    assert_eq!(keys.len(), 3);
    assert!(
        keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2],
        "{keys:?}"
    );
    let ids: Vec<&str> = done
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|call| call.id.as_str()))
        .collect();
    assert_eq!(ids, ["call_0", "call_0_2", "call_0_3"]);
    assert_no_dangling(&done.messages);

    // And across the runs of a thread.
    let again = Agent::builder(ScriptedModel::new([
        pay("call_0"),
        ModelResponse::text("done"),
    ]))
    .tool(EffectTool {
        name: "pay",
        effects: ran.clone(),
        hang: false,
    })
    .build()
    .unwrap();
    again.run_in(&mut thread, "once more").await.unwrap();
    let last = thread
        .messages()
        .iter()
        .rev()
        .find(|m| !m.tool_calls.is_empty())
        .unwrap();
    assert_eq!(last.tool_calls[0].id, "call_0_4");
    assert_no_dangling(thread.messages());
}
