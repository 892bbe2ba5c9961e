//! `DynamicPrompt`: the rules of DESIGN §11, one test each.

mod support;

use hookchain::builtin::{DynamicPrompt, PromptMode};
use hookchain::prelude::*;
use hookchain::{Role, chain};
use support::{echo_call, echo_tool, new_log, system_prompts};

#[tokio::test]
async fn the_prompt_is_computed_for_every_model_call() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let prompt = DynamicPrompt::builder()
        .prompt(|cx, _| format!("step {}, {} messages", cx.step(), cx.messages().len()))
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .system_prompt("static")
        .tool(echo_tool(&new_log()))
        .chain(prompt)
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    assert_eq!(
        system_prompts(&agent),
        [
            Some("step 1, 1 messages".into()),
            Some("step 2, 3 messages".into())
        ]
    );
}

#[tokio::test]
async fn append_follows_the_current_prompt_and_sees_the_request() {
    let model = ScriptedModel::new([ModelResponse::text("done")]);
    let prompt = DynamicPrompt::builder()
        .prompt(|_, request| format!("{} tools", request.tools.len()))
        .mode(PromptMode::Append)
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .system_prompt("Be brief.")
        .tool(echo_tool(&new_log()))
        .chain(prompt)
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    assert_eq!(
        system_prompts(&agent),
        [Some("Be brief.\n\n1 tools".into())]
    );
}

#[tokio::test]
async fn an_empty_text_replaces_with_no_prompt_and_appends_nothing() {
    let empty = |mode| {
        DynamicPrompt::builder()
            .prompt(|_, _| String::new())
            .mode(mode)
            .build()
            .unwrap()
    };
    let model = ScriptedModel::new([ModelResponse::text("a")]);
    let agent = Agent::builder(model)
        .system_prompt("Be brief.")
        .chain(chain![
            empty(PromptMode::Append),
            empty(PromptMode::Replace)
        ])
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    assert_eq!(system_prompts(&agent), [None]);
    let model = ScriptedModel::new([ModelResponse::text("a")]);
    let agent = Agent::builder(model)
        .system_prompt("Be brief.")
        .chain(empty(PromptMode::Append))
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    assert_eq!(system_prompts(&agent), [Some("Be brief.".into())]);
}

#[tokio::test]
async fn the_history_is_not_changed() {
    let model = ScriptedModel::new([ModelResponse::text("done")]);
    let prompt = DynamicPrompt::builder()
        .prompt(|_, _| "computed".into())
        .build()
        .unwrap();
    let agent = Agent::builder(model).chain(prompt).build().unwrap();
    let output = agent.run("Hi").await.unwrap();
    assert!(output.messages.iter().all(|m| m.role != Role::System));
    assert_eq!(output.messages.len(), 2);
}

#[test]
fn the_builder_needs_a_function() {
    let error = DynamicPrompt::builder().build().unwrap_err();
    assert_eq!(error.field(), "prompt");
}
