//! `PromptCaching`: where the breakpoints go as an agent's history grows — one rule per test.

use hookchain::builtin::PromptCaching;
use hookchain::model::{CacheTtl, PromptCache};
use hookchain::prelude::*;
use serde_json::json;

/// Says hello.
#[hookchain::tool]
async fn hello() -> String {
    "hello".to_owned()
}

fn two_steps() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "hello", json!({}))]),
        ModelResponse::text("done"),
    ])
}

#[tokio::test]
async fn each_call_writes_its_prompt_and_reads_the_previous_calls() {
    let agent = Agent::builder(two_steps())
        .system_prompt("Be brief.")
        .tool(hello)
        .chain(PromptCaching::new())
        .build()
        .unwrap();
    let output = agent.run("Greet").await.unwrap();
    let requests = agent.model().requests();
    let first = requests[0].prompt_cache.clone().unwrap();
    assert!(first.prefix);
    assert_eq!(first.breakpoints, [0], "the user's message");
    // [user, assistant(call), tool]: this call's end (2), and the previous call's (0).
    let second = requests[1].prompt_cache.clone().unwrap();
    assert_eq!(second.breakpoints, [0, 2]);
    assert_eq!(second.ttl, CacheTtl::Short);
    assert_eq!(output.end, hookchain::EndReason::Finished);
    assert!(second.key.is_some(), "the run's id");
}

#[tokio::test]
async fn the_key_is_the_threads_unless_set() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .chain(PromptCaching::new().ttl(CacheTtl::OneHour))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "Hi").await.unwrap();
    let cache = agent.model().requests()[0].prompt_cache.clone().unwrap();
    assert_eq!(cache.key.as_deref(), Some(thread.id().as_str()));
    assert_eq!(cache.ttl, CacheTtl::OneHour);
    assert!(
        !cache.prefix,
        "no system prompt, no tools: no prefix to cache"
    );

    let keyed = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .chain(PromptCaching::new().key("tenant-42"))
        .build()
        .unwrap();
    keyed.run("Hi").await.unwrap();
    let cache = keyed.model().requests()[0].prompt_cache.clone().unwrap();
    assert_eq!(cache.key.as_deref(), Some("tenant-42"));
}

/// Sets a plan of its own before `PromptCaching`.
#[hookchain::hook(before_model)]
fn own_plan(request: &mut ModelRequest) {
    request.prompt_cache = Some(Box::new(PromptCache::new().breakpoint(0).key("mine")));
}

#[tokio::test]
async fn a_plan_set_before_it_is_kept() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .chain(hookchain::chain![own_plan, PromptCaching::new()])
        .build()
        .unwrap();
    agent.run("Hi").await.unwrap();
    let cache = agent.model().requests()[0].prompt_cache.clone().unwrap();
    assert_eq!(cache.key.as_deref(), Some("mine"));
}
