//! Trajectories: what a paused run and a run with a sub-agent give, their serde form, and
//! input that cannot be read (an error saying where, never a panic).

use futures::StreamExt;
use hookchain::ToolCall;
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain_eval::{Step, Trajectory, TrajectoryMatch, TrajectoryMatcher};
use serde_json::json;

#[tokio::test]
async fn a_paused_run_ends_with_its_interrupt() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("q1", "ask_user", json!({"question": "Which city?"})),
    ])]))
    .tool(AskUser)
    .build()
    .unwrap();
    let output = agent.run("Weather?").await.unwrap();
    let trajectory = Trajectory::from_output(&output);
    let Some(Step::Interrupt(interrupt)) = trajectory.steps().last() else {
        panic!("no interrupt last: {trajectory:?}");
    };
    assert_eq!(interrupt.tool_call_id.as_deref(), Some("q1"));
    assert_eq!(interrupt.payload["question"], "Which city?");

    // agentevals compares messages: the interrupt is not one of them.
    let expected = Trajectory::builder()
        .user("Weather?")
        .tool_call("ask_user", json!({"question": "Which city?"}))
        .build();
    TrajectoryMatch::strict()
        .check(&trajectory, &expected)
        .unwrap();
}

#[tokio::test]
async fn a_sub_agents_events_are_one_step_of_its_own() {
    let researcher = Agent::builder(ScriptedModel::new([ModelResponse::text("Found it.")]))
        .name("researcher")
        .build()
        .unwrap()
        .into_tool("research", "Researches a topic.")
        .unwrap();
    let lead = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("r1", "research", json!({"task": "rust"}))]),
        ModelResponse::text("Done."),
    ]))
    .tool(researcher)
    .build()
    .unwrap();
    let events: Vec<AgentEvent> = lead
        .stream("Look into Rust.")
        .map(|e| e.unwrap())
        .collect()
        .await;
    let trajectory = Trajectory::from_events(&events);

    let subs: Vec<_> = trajectory
        .steps()
        .iter()
        .filter_map(|step| match step {
            Step::SubAgent(sub) => Some(sub),
            _ => None,
        })
        .collect();
    assert_eq!(subs.len(), 1, "{trajectory:#?}");
    assert_eq!(subs[0].agent, "researcher");
    assert_eq!(subs[0].call_id, "r1");
    assert!(
        subs[0]
            .trajectory
            .steps()
            .iter()
            .any(|step| matches!(step, Step::Model(m) if m.text == "Found it."))
    );
    // The lead's own calls are its own: the child's are not among them.
    assert_eq!(
        trajectory
            .tool_calls()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["research"]
    );
}

#[test]
fn the_serde_form_is_a_list_of_tagged_steps_and_reads_back() {
    let trajectory = Trajectory::builder()
        .system("Be brief.")
        .user("Hi")
        .tool_call("lookup", json!({"id": 7}))
        .tool_result("lookup", "found")
        .interrupt("approval", json!({"tool": "pay"}))
        .sub_agent("helper", "c9", Trajectory::builder().model("ok").build())
        .model("Done.")
        .build();
    let value = serde_json::to_value(&trajectory).unwrap();
    assert_eq!(value[0], json!({"step": "system", "text": "Be brief."}));
    assert_eq!(
        value[2],
        json!({"step": "model", "tool_calls": [{"name": "lookup", "arguments": {"id": 7}}]})
    );
    assert_eq!(
        value[5]["trajectory"][0],
        json!({"step": "model", "text": "ok"})
    );
    let back: Trajectory = serde_json::from_value(value).unwrap();
    assert_eq!(back, trajectory);
}

#[test]
fn openai_messages_that_cannot_be_read_say_where() {
    let cases = [
        (json!({"not": "messages"}), ""),
        (json!([{"content": "no role"}]), "[0].role"),
        (json!([{"role": "robot"}]), "[0].role"),
        (
            json!([{"role": "user"}, {"role": "assistant", "tool_calls": "nope"}]),
            "[1].tool_calls",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]),
            "[0].tool_calls[0].function.name",
        ),
        (
            json!([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{not json"}}]}]),
            "[0].tool_calls[0].function.arguments",
        ),
    ];
    for (input, at) in cases {
        let error = Trajectory::from_openai_messages(&input).unwrap_err();
        assert_eq!(error.at, at, "{input}: {error}");
    }
    // LangChain's form of a tool call, and content as parts, are read too.
    let read = Trajectory::from_openai_messages(&json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "ai", "content": "", "tool_calls": [{"id": "1", "name": "f", "args": {"x": 1}}]},
    ]}))
    .unwrap();
    assert_eq!(
        read,
        Trajectory::builder()
            .user("Hi")
            .tool_calls([hookchain_eval::ToolCallStep::new("f", json!({"x": 1})).with_id("1")])
            .build()
    );
}
