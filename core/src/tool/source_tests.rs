//! A registry with tool sources: what each model request offers, where a call goes, and names
//! that clash.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{SourcedTool, ToolSource};
use crate::agent::Agent;
use crate::message::{Message, ToolCall};
use crate::model::{ModelResponse, ScriptedModel};
use crate::tool::{FnTool, ToolRegistry};

/// A source the test changes: its tools and a version bumped after each change.
#[derive(Default)]
struct Changing {
    tools: Mutex<Vec<SourcedTool>>,
    version: AtomicU64,
}

impl Changing {
    fn set(&self, tools: Vec<SourcedTool>) {
        *self.tools.lock().unwrap() = tools;
        self.version.fetch_add(1, Ordering::Release);
    }
}

impl ToolSource for Changing {
    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn tools(&self) -> Vec<SourcedTool> {
        self.tools.lock().unwrap().clone()
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArguments {}

/// A tool named `name` that answers `answer`.
fn answering(name: &str, answer: &'static str) -> SourcedTool {
    SourcedTool::new(FnTool::new(
        name,
        format!("Answers {answer}."),
        move |_: NoArguments| async move { Ok::<_, Infallible>(answer) },
    ))
}

fn names(registry: &ToolRegistry) -> Vec<String> {
    registry
        .shared_specs()
        .iter()
        .map(|spec| spec.name.clone())
        .collect()
}

fn tool_texts(messages: &[Message]) -> Vec<(String, bool)> {
    messages
        .iter()
        .filter(|message| message.tool_call_id.is_some())
        .map(|message| (message.text().into_owned(), message.is_error))
        .collect()
}

#[test]
fn a_tool_added_between_two_model_calls_is_offered_and_called() {
    let source = Arc::new(Changing::default());
    let installs = Arc::clone(&source);
    // The agent's own tool `install` adds `greet` to the source, in the middle of the run.
    let install = FnTool::new("install", "Installs greet.", move |_: NoArguments| {
        installs.set(vec![answering("greet", "hello")]);
        async { Ok::<_, Infallible>("installed") }
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "install", json!({}))]),
        ModelResponse::tool_calls([ToolCall::new("c2", "greet", json!({}))]),
        ModelResponse::text("done"),
    ]);
    let registry = ToolRegistry::new().with(install).with_source(source);
    let agent = Agent::builder(model).tools(registry).build().unwrap();

    let output = block_on(agent.run("go")).unwrap();

    let offered: Vec<Vec<String>> = agent
        .model()
        .requests()
        .iter()
        .map(|request| request.tools.iter().map(|spec| spec.name.clone()).collect())
        .collect();
    assert_eq!(
        offered,
        [
            vec!["install"],
            vec!["install", "greet"],
            vec!["install", "greet"]
        ]
    );
    assert_eq!(
        tool_texts(&output.messages),
        [("installed".to_owned(), false), ("hello".to_owned(), false)]
    );
}

#[test]
fn a_tool_the_source_dropped_gets_the_unknown_tool_error() {
    let source = Arc::new(Changing::default());
    source.set(vec![answering("old", "old"), answering("kept", "kept")]);
    let registry = ToolRegistry::new().with_source(Arc::clone(&source));
    assert_eq!(names(&registry), ["old", "kept"]);

    source.set(vec![answering("kept", "kept")]);
    let result = block_on(registry.execute(&ToolCall::new("c1", "old", json!({}))));
    assert!(result.is_error, "{result:?}");
    let text = result.content.text();
    assert!(text.contains("unknown tool `old`"), "{text}");
    assert!(text.contains("kept"), "the tools there are: {text}");
    assert_eq!(names(&registry), ["kept"]);
    assert!(!registry.contains("old") && registry.spec("old").is_none());
}

#[test]
fn a_fixed_tool_or_an_earlier_source_keeps_its_name() {
    let first = Arc::new(Changing::default());
    let second = Arc::new(Changing::default());
    first.set(vec![
        answering("fixed", "first"),
        answering("shared", "first"),
    ]);
    second.set(vec![
        answering("shared", "second"),
        answering("own", "second"),
    ]);
    let fixed = FnTool::new("fixed", "The fixed one.", |_: NoArguments| async {
        Ok::<_, Infallible>("fixed")
    });
    // The fixed tool registered after the sources still wins over them.
    let registry = ToolRegistry::new()
        .with_source(first)
        .with_source(second)
        .with(fixed);
    assert_eq!(registry.registered_twice(), None);
    assert_eq!(names(&registry), ["fixed", "shared", "own"]);
    assert_eq!(registry.len(), 3);
    let answer = |name: &str| {
        let result = block_on(registry.execute(&ToolCall::new("c", name, json!({}))));
        result.content.text().into_owned()
    };
    assert_eq!(answer("fixed"), "fixed");
    assert_eq!(answer("shared"), "first");
    assert_eq!(answer("own"), "second");
}

#[test]
fn the_offered_list_is_shared_until_a_source_changes() {
    let source = Arc::new(Changing::default());
    source.set(vec![answering("a", "a")]);
    let registry = ToolRegistry::new().with_source(Arc::clone(&source));
    let first = registry.shared_specs();
    assert!(first.ptr_eq(&registry.shared_specs()), "unchanged: shared");
    source.set(vec![answering("a", "a"), answering("b", "b")]);
    let second = registry.shared_specs();
    assert!(!first.ptr_eq(&second));
    assert_eq!(second.len(), 2);
    assert!(second.ptr_eq(&registry.shared_specs()));
}

#[test]
fn without_sources_every_request_shares_the_registry_s_list() {
    let tool = FnTool::new("a", "A.", |_: NoArguments| async {
        Ok::<_, Infallible>("a")
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "a", json!({}))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tools(ToolRegistry::new().with(tool))
        .build()
        .unwrap();
    block_on(agent.run("go")).unwrap();
    let requests = agent.model().requests();
    let registry = agent.tools().shared_specs();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert!(request.tools.ptr_eq(&registry));
    }
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn a_source_s_tool_runs_in_a_task_of_its_own_when_calls_are_spawned() {
    use crate::tool::ToolExecution;

    let source = Arc::new(Changing::default());
    source.set(vec![answering("greet", "hello")]);
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "greet", json!({})),
            ToolCall::new("c2", "missing", json!({})),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tools(ToolRegistry::new().with_source(source))
        .tool_execution(ToolExecution::Spawned)
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    let results = tool_texts(&output.messages);
    assert_eq!(results[0], ("hello".to_owned(), false));
    assert!(results[1].1 && results[1].0.contains("unknown tool `missing`"));
}

#[test]
fn a_request_resumed_from_a_checkpoint_gets_the_source_s_specs() {
    use crate::Shared;
    use crate::model::ModelRequest;
    use crate::tool::ToolSpec;

    let source = Arc::new(Changing::default());
    source.set(vec![answering("kept", "kept")]);
    let registry = ToolRegistry::new().with_source(source);
    // A checkpoint names the tools only; one of them the source has no longer.
    let mut request = ModelRequest {
        tools: Shared::new(vec![
            ToolSpec::new("kept", "", json!(null)),
            ToolSpec::new("dropped", "", json!(null)),
        ]),
        ..ModelRequest::default()
    };
    registry.fill_specs(&mut request);
    assert_eq!(*request.tools, [answering("kept", "kept").spec().clone()]);

    let mut request = ModelRequest {
        tools: Shared::new(vec![ToolSpec::new("kept", "", json!(null))]),
        ..ModelRequest::default()
    };
    registry.fill_specs(&mut request);
    assert!(
        request.tools.ptr_eq(&registry.shared_specs()),
        "all of them: shared"
    );
}
