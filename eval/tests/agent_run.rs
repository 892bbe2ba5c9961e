//! A real agent's run (a `ScriptedModel` calling a `#[tool]`) taken as a trajectory, from its
//! output and from its events, and matched against the expected one by both families.

use futures::StreamExt;
use hookchain::prelude::*;
use hookchain::{ToolCall, tool};
use hookchain_eval::{
    ArgsMatch, Step, ToolTrajectory, ToolTrajectoryMatch, Trajectory, TrajectoryMatch,
    TrajectoryMatcher,
};
use serde_json::json;

/// The weather in a city.
#[tool]
async fn weather(city: String) -> String {
    format!("18°C in {city}")
}

/// The model asks for two cities in one answer, then Rome again, then answers.
fn agent() -> Agent<ScriptedModel> {
    Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "weather", json!({"city": "Paris"})),
            ToolCall::new("c2", "weather", json!({"city": "Rome"})),
        ]),
        ModelResponse::tool_calls([ToolCall::new(
            "c3",
            "weather",
            json!({"city": "Rome", "units": "C"}),
        )]),
        ModelResponse::text("18°C in both."),
    ]))
    .tool(weather)
    .build()
    .unwrap()
}

fn expected() -> Trajectory {
    Trajectory::builder()
        .user("Paris and Rome?")
        .tool_calls([
            hookchain_eval::ToolCallStep::new("weather", json!({"city": "Rome"})),
            hookchain_eval::ToolCallStep::new("weather", json!({"city": "Paris"})),
        ])
        .tool_result("weather", "18°C in Paris")
        .tool_result("weather", "18°C in Rome")
        .tool_call("weather", json!({"city": "Rome"}))
        .tool_result("weather", "18°C in Rome")
        .model("18°C in both.")
        .build()
}

#[tokio::test]
async fn a_run_matches_its_expected_trajectory() {
    let output = agent().run("Paris and Rome?").await.unwrap();
    let actual = Trajectory::from_output(&output);

    // The steps are the run's: the user, the model's answers with their calls, the results.
    assert_eq!(actual.len(), 7);
    assert!(matches!(&actual.steps()[0], Step::User { text } if text == "Paris and Rome?"));
    assert!(
        matches!(&actual.steps()[2], Step::ToolResult(r) if r.text == "18°C in Paris" && r.name.as_deref() == Some("weather"))
    );

    // `units` is extra in the second answer: exact arguments fail, a superset passes.
    let mismatch = TrajectoryMatch::strict()
        .check(&actual, &expected())
        .unwrap_err();
    assert_eq!(mismatch.actual_index(), Some(4));
    assert_eq!(mismatch.expected_index(), Some(4));
    TrajectoryMatch::strict()
        .tool_args(ArgsMatch::Superset)
        .check(&actual, &expected())
        .unwrap();
    TrajectoryMatch::unordered()
        .tool_args(ArgsMatch::Ignore)
        .check(&actual, &expected())
        .unwrap();
    ToolTrajectory::new(ToolTrajectoryMatch::AnyOrder)
        .ignore_args(true)
        .check(&actual, &expected())
        .unwrap();
    assert!(!ToolTrajectory::new(ToolTrajectoryMatch::Exact).matches(&actual, &expected()));
}

#[tokio::test]
async fn the_events_of_a_run_give_its_steps_but_the_input() {
    let streamed = agent();
    let events: Vec<AgentEvent> = streamed
        .stream("Paris and Rome?")
        .map(|event| event.unwrap())
        .collect()
        .await;
    let from_events = Trajectory::from_events(&events);
    let output = agent().run("Paris and Rome?").await.unwrap();
    let from_output = Trajectory::from_output(&output);
    // The input is no event: the rest is the same.
    assert_eq!(from_events.steps(), &from_output.steps()[1..]);
}

#[tokio::test]
async fn a_failure_shows_both_trajectories_aligned() {
    let output = agent().run("Paris and Rome?").await.unwrap();
    let actual = Trajectory::from_output(&output);
    let mismatch = TrajectoryMatch::strict()
        .check(&actual, &expected())
        .unwrap_err();
    let shown = format!("{mismatch:?}");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[0],
        r#"trajectory mismatch (agentevals strict, tool arguments exact): message 4: call weather({"city":"Rome","units":"C"}) matches no expected call of this message"#
    );
    assert!(lines[1].trim_start().starts_with("expected"), "{shown}");
    // The step at fault is marked, and the separator is in the same column on every line.
    assert!(
        lines[6].starts_with(">  4  model → weather({\"city\":\"Rome\"})"),
        "{shown}"
    );
    let column = |line: &str| line.chars().position(|c| c == '|');
    assert!(
        lines[1..]
            .iter()
            .all(|line| column(line) == column(lines[1])),
        "{shown}"
    );
}
