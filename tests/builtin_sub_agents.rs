//! `SubAgents`: a team behind one `task` tool — one rule per test.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::SubAgents;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::prelude::*;
use hookchain::subagent::SubAgentPause;
use hookchain::{EndReason, chain, tool};
use serde_json::json;

/// An agent that answers `"<name>: <task>"`.
fn echoing(name: &'static str) -> Agent<ScriptedModel> {
    Agent::builder(ScriptedModel::from_rule(move |request| {
        let task = request.messages.last().unwrap().text().into_owned();
        Ok(ModelResponse::text(format!("{name}: {task}")))
    }))
    .name(name)
    .build()
    .unwrap()
}

/// A lead whose model sends `calls` to `task`, then answers with the results joined.
fn lead(team: SubAgents, calls: Vec<ToolCall>) -> Agent<ScriptedModel, SubAgents> {
    Agent::builder(ScriptedModel::from_rule(move |request| {
        let results: Vec<String> = support::tool_texts(&request.messages);
        Ok(if results.is_empty() {
            ModelResponse::tool_calls(calls.clone())
        } else {
            ModelResponse::text(results.join(" | "))
        })
    }))
    .chain(team)
    .build()
    .unwrap()
}

fn delegate(id: &str, agent: &str, task: &str) -> ToolCall {
    ToolCall::new(id, "task", json!({ "agent": agent, "task": task }))
}

#[tokio::test]
async fn the_model_delegates_to_the_agents_it_names_and_reads_their_answers() {
    let team = SubAgents::builder()
        .agent(
            echoing("researcher")
                .into_tool("researcher", "Finds sources.")
                .unwrap(),
        )
        .agent(
            echoing("writer")
                .into_tool("writer", "Writes prose.")
                .unwrap(),
        )
        .build()
        .unwrap();
    assert_eq!(team.names(), ["researcher", "writer"]);
    let lead = lead(
        team,
        vec![
            delegate("t1", "researcher", "tides"),
            delegate("t2", "writer", "a haiku"),
        ],
    );
    let prompt = lead.system_prompt().unwrap();
    assert!(prompt.contains("- researcher: Finds sources."), "{prompt}");
    assert!(prompt.contains("- writer: Writes prose."), "{prompt}");
    let spec = lead.tools().spec("task").unwrap();
    assert_eq!(
        spec.parameters["properties"]["agent"]["enum"],
        json!(["researcher", "writer"])
    );
    let output = lead.run("Go").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("researcher: tides | writer: a haiku")
    );
}

#[tokio::test]
async fn an_agent_the_team_does_not_have_is_an_error_the_model_reads() {
    let team = SubAgents::builder()
        .agent(
            echoing("researcher")
                .into_tool("researcher", "Finds sources.")
                .unwrap(),
        )
        .build()
        .unwrap();
    let output = lead(team, vec![delegate("t1", "poet", "a haiku")])
        .run("Go")
        .await
        .unwrap();
    let text = output.text().unwrap();
    assert!(
        text.contains("there is no agent `poet`; the agents are: researcher"),
        "{text}"
    );
}

/// Publishes a post.
#[tool]
async fn publish(title: String) -> String {
    format!("published {title}")
}

/// A member that pauses (an approval) pauses the lead; the answer goes through `task` to it,
/// and the other member's completed delegation does not run again.
#[tokio::test]
async fn a_member_that_pauses_pauses_the_lead_and_is_resumed_through_task() {
    let researcher_runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&researcher_runs);
    let researcher = Agent::builder(ScriptedModel::from_rule(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse::text("three sources"))
    }))
    .name("researcher")
    .build()
    .unwrap();
    let publisher = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("p1", "publish", json!({"title": "Tides"}))]),
        ModelResponse::text("Tides is out."),
    ]))
    .name("publisher")
    .tool(publish)
    .chain(chain![
        HumanInTheLoop::new().interrupt_on("publish", ToolPolicy::always())
    ])
    .build()
    .unwrap();
    let team = SubAgents::builder()
        .agent(
            researcher
                .into_tool("researcher", "Finds sources.")
                .unwrap(),
        )
        .agent(
            publisher
                .into_tool("publisher", "Publishes posts.")
                .unwrap(),
        )
        .build()
        .unwrap();
    let lead = lead(
        team,
        vec![
            delegate("t1", "researcher", "tides"),
            delegate("t2", "publisher", "publish Tides"),
        ],
    );
    let paused = lead.run("Go").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let interrupt = paused.interrupts()[0].clone();
    assert_eq!(interrupt.tool_call_id.as_deref(), Some("t2"));
    let pause = SubAgentPause::from_interrupt(&interrupt).unwrap();
    assert_eq!(pause.agent, "publisher");
    assert_eq!(pause.tool, "publisher");
    let asked = &pause.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(asked).unwrap();
    let answer = pause.answer([ApprovalResponse::approve_all(&request).answer(asked)]);

    // An answer that is not the member's is refused before anything runs.
    let refused = lead
        .resume(
            paused.checkpoint.clone().unwrap(),
            [(interrupt.id.clone(), json!("yes"))],
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");

    let done = lead
        .resume(paused.checkpoint.unwrap(), [(interrupt.id, answer)])
        .await
        .unwrap();
    assert_eq!(
        done.text().as_deref(),
        Some("three sources | Tides is out.")
    );
    assert_eq!(researcher_runs.load(Ordering::SeqCst), 1);
}

#[test]
fn the_builder_refuses_an_empty_team_a_name_twice_and_a_blank_description() {
    assert_eq!(SubAgents::builder().build().unwrap_err().field(), "agent");
    let twice = SubAgents::builder()
        .agent(echoing("a").into_tool("same", "One.").unwrap())
        .agent(echoing("b").into_tool("same", "Two.").unwrap())
        .build()
        .unwrap_err();
    assert!(twice.problem().contains("`same`"), "{twice}");
    let blank = SubAgents::builder()
        .agent(echoing("a").into_tool("a", " ").unwrap())
        .build()
        .unwrap_err();
    assert_eq!(blank.problem(), "is empty");
}

#[test]
fn an_agent_that_has_a_task_tool_already_is_not_built() {
    let team = SubAgents::builder()
        .agent(echoing("a").into_tool("a", "One.").unwrap())
        .build()
        .unwrap();
    let built = Agent::builder(ScriptedModel::new([]))
        .tool(hookchain::FnTool::new(
            "task",
            "Does a task of its own.",
            |_: serde_json::Value| async { Ok::<_, hookchain::ToolError>("mine") },
        ))
        .chain(team)
        .build();
    assert!(built.is_err());
}
