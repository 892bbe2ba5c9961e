//! `LlmToolSelector`: the rules of DESIGN §11, one test each.

use std::convert::Infallible;
use std::sync::Arc;

use hookchain::builtin::LlmToolSelector;
use hookchain::prelude::*;
use hookchain::{FnTool, Model, ModelError, Tool};
use tracing_subscriber::fmt::MakeWriter;

fn tool(name: &'static str) -> impl Tool {
    FnTool::new(
        name,
        format!("The {name} tool."),
        |_: serde_json::Value| async { Ok::<_, Infallible>("ok") },
    )
}

/// An agent with the tools a..e, whose model answers "done" once, behind `selector`.
fn agent<H: Model + 'static>(
    selector: LlmToolSelector<H>,
) -> Agent<ScriptedModel, LlmToolSelector<H>> {
    ["a", "b", "c", "d", "e"]
        .into_iter()
        .fold(
            Agent::builder(ScriptedModel::new([ModelResponse::text("done")])),
            |builder, name| builder.tool(tool(name)),
        )
        .chain(selector)
        .build()
        .unwrap()
}

fn offered(agent: &Agent<ScriptedModel, impl Middleware>) -> Vec<String> {
    agent.model().requests()[0]
        .tools
        .iter()
        .map(|spec| spec.name.clone())
        .collect()
}

fn helper(answers: impl IntoIterator<Item = ModelResponse>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(answers))
}

#[tokio::test]
async fn at_most_max_tools_of_the_helpers_choice_are_offered_in_the_agents_order() {
    let helper = helper([ModelResponse::text(
        r#"{"tools": ["d", "made_up", "b", "a"]}"#,
    )]);
    let selector = LlmToolSelector::builder(helper.clone())
        .max_tools(2)
        .build()
        .unwrap();
    let agent = agent(selector);
    agent.run("Which tools?").await.unwrap();
    assert_eq!(offered(&agent), ["b", "d"]);
    // The helper read the query and every candidate.
    let asked = helper.requests()[0].messages[0].text().into_owned();
    assert!(asked.contains("Query: Which tools?"), "{asked}");
    assert!(asked.contains("- e: The e tool."), "{asked}");
    assert!(helper.requests()[0].response_format.is_some());
}

#[tokio::test]
async fn always_included_tools_stay_and_do_not_count() {
    let helper = helper([ModelResponse::text("```json\n{\"tools\": [\"c\"]}\n```")]);
    let selector = LlmToolSelector::builder(helper.clone())
        .max_tools(1)
        .always_include(["e", "a"])
        .build()
        .unwrap();
    let agent = agent(selector);
    agent.run("Hi").await.unwrap();
    assert_eq!(offered(&agent), ["a", "c", "e"]);
    let asked = helper.requests()[0].messages[0].text().into_owned();
    assert!(
        !asked.contains("- a:"),
        "always-included tools are not candidates: {asked}"
    );
}

#[tokio::test]
async fn no_helper_call_when_there_is_nothing_to_choose() {
    let helper = helper([]);
    let selector = LlmToolSelector::builder(helper.clone())
        .max_tools(3)
        .always_include(["a", "b"])
        .build()
        .unwrap();
    let agent = agent(selector);
    agent.run("Hi").await.unwrap();
    assert_eq!(helper.calls(), 0);
    assert_eq!(offered(&agent).len(), 5);
}

/// Collects what the run logs.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn a_failing_helper_degrades_to_all_tools_with_a_warning() {
    let failing = ScriptedModel::new([]).then_fail(ModelError::overloaded("busy"));
    let unparsable = helper([ModelResponse::text("I think b and c.")]);
    for helper in [Arc::new(failing), unparsable] {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_max_level(tracing::Level::WARN)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let selector = LlmToolSelector::builder(helper)
            .max_tools(1)
            .build()
            .unwrap();
        let agent = agent(selector);
        let output = agent.run("Hi").await.unwrap();
        assert_eq!(output.text().as_deref(), Some("done"));
        assert_eq!(offered(&agent).len(), 5);
        let logged = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(
            logged.contains("WARN") && logged.contains("keeps all its tools"),
            "{logged}"
        );
    }
}

#[tokio::test]
async fn fail_on_error_ends_the_run() {
    let helper = Arc::new(ScriptedModel::new([]).then_fail(ModelError::overloaded("busy")));
    let selector = LlmToolSelector::builder(helper)
        .max_tools(1)
        .fail_on_error(true)
        .build()
        .unwrap();
    let agent = agent(selector);
    let Err(Error::Middleware(error)) = agent.run("Hi").await else {
        panic!("expected a middleware error")
    };
    assert_eq!(error.middleware(), Some("LlmToolSelector"));
    assert_eq!(agent.model().calls(), 0);
}

#[test]
fn the_builder_names_a_setting_that_cannot_work() {
    let field = |builder: hookchain::builtin::llm_tool_selector::LlmToolSelectorBuilder<_>| {
        builder.build().unwrap_err().field()
    };
    let model = || ScriptedModel::new([]);
    assert_eq!(
        field(LlmToolSelector::builder(model()).max_tools(0)),
        "max_tools"
    );
    assert_eq!(
        field(LlmToolSelector::builder(model()).always_include([""])),
        "always_include"
    );
    assert_eq!(
        field(LlmToolSelector::builder(model()).system_prompt("")),
        "system_prompt"
    );
}
