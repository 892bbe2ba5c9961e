//! `ToolEmulator`: the rules of DESIGN §11, one test each.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::ToolEmulator;
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{ModelError, Tool};
use serde_json::json;
use support::{counting_tool, tool_results};

fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({ "text": id }))
}

fn emulator(answers: impl IntoIterator<Item = ModelResponse>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(answers))
}

fn agent(
    calls: Vec<ToolCall>,
    tools: Vec<Box<dyn FnOnce(AgentBuilderOf) -> AgentBuilderOf>>,
    emulation: ToolEmulator<Arc<ScriptedModel>>,
) -> Agent<ScriptedModel, ToolEmulator<Arc<ScriptedModel>>> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ]);
    tools
        .into_iter()
        .fold(Agent::builder(model), |builder, add| add(builder))
        .chain(emulation)
        .build()
        .unwrap()
}

type AgentBuilderOf = hookchain::AgentBuilder<ScriptedModel>;

fn with(tool: impl Tool) -> Box<dyn FnOnce(AgentBuilderOf) -> AgentBuilderOf> {
    Box::new(move |builder| builder.tool(tool))
}

#[tokio::test]
async fn every_offered_tool_is_played_by_the_model_and_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let played = emulator([ModelResponse::text("42 rows deleted")]);
    let emulation = ToolEmulator::builder(played.clone()).build().unwrap();
    let agent = agent(
        vec![call("c1", "delete_rows")],
        vec![with(counting_tool("delete_rows", &runs))],
        emulation,
    );
    let output = agent.run("Clean up").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the real tool never ran");
    assert_eq!(
        tool_results(&output.messages),
        [("c1".into(), "42 rows deleted".into(), false)]
    );
    let asked = played.requests()[0].messages[0].text().into_owned();
    assert!(
        asked.starts_with("Tool: delete_rows\nDescription: Counts its runs."),
        "{asked}"
    );
    assert!(asked.contains("Arguments schema: {"), "{asked}");
    assert!(asked.ends_with(r#"Arguments: {"text":"c1"}"#), "{asked}");
}

#[tokio::test]
async fn only_the_listed_tools_are_played() {
    let (played_runs, real_runs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let emulation = ToolEmulator::builder(emulator([ModelResponse::text("played")]))
        .tools(["played"])
        .build()
        .unwrap();
    let agent = agent(
        vec![call("c1", "played"), call("c2", "real")],
        vec![
            with(counting_tool("played", &played_runs)),
            with(counting_tool("real", &real_runs)),
        ],
        emulation,
    );
    let output = agent.run("Go").await.unwrap();
    assert_eq!(played_runs.load(Ordering::SeqCst), 0);
    assert_eq!(real_runs.load(Ordering::SeqCst), 1);
    let results = tool_results(&output.messages);
    assert_eq!(results[0].1, "played");
    assert_eq!(results[1].1, "ran");
}

#[tokio::test]
async fn a_tool_the_model_was_not_offered_is_not_played() {
    let played = emulator([]);
    let emulation = ToolEmulator::builder(played.clone()).build().unwrap();
    let agent = agent(vec![call("c1", "invented")], vec![], emulation);
    let output = agent.run("Go").await.unwrap();
    assert_eq!(played.calls(), 0);
    let results = tool_results(&output.messages);
    assert!(results[0].2, "the unknown-tool error result: {results:?}");
}

#[tokio::test]
async fn a_failing_emulator_gives_an_error_result_and_the_run_goes_on() {
    let runs = Arc::new(AtomicUsize::new(0));
    let failing =
        Arc::new(ScriptedModel::new([]).then_fail(ModelError::overloaded("secret detail")));
    let emulation = ToolEmulator::builder(failing).build().unwrap();
    let agent = agent(
        vec![call("c1", "lookup")],
        vec![with(counting_tool("lookup", &runs))],
        emulation,
    );
    let output = agent.run("Go").await.unwrap();
    let results = tool_results(&output.messages);
    assert!(results[0].2);
    assert!(!results[0].1.contains("secret detail"), "{}", results[0].1);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(output.text().as_deref(), Some("done"));
    validate_history(&output.messages).unwrap();
}

#[test]
fn the_builder_names_a_setting_that_cannot_work() {
    let field = |builder: hookchain::builtin::tool_emulator::ToolEmulatorBuilder<ScriptedModel>| {
        builder.build().unwrap_err().field()
    };
    let model = || ScriptedModel::new([]);
    assert_eq!(
        field(ToolEmulator::builder(model()).tools(Vec::<String>::new())),
        "tools"
    );
    assert_eq!(field(ToolEmulator::builder(model()).tools([""])), "tools");
    assert_eq!(
        field(ToolEmulator::builder(model()).system_prompt(" ")),
        "system_prompt"
    );
}
