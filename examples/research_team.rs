//! A research team: a lead agent delegating to two specialists, one of which needs approval.
//!
//! ```sh
//! cargo run --example research_team
//! ```
//!
//! The lead (on the scripted model: no API key, no network) has a team of sub-agents behind
//! one `task` tool (`SubAgents`): a `researcher`, which searches and answers, and a
//! `publisher`, which publishes the post — after a person approves (`HumanInTheLoop`, in the
//! publisher's own chain). The lead delegates both in one step; the researcher finishes, the
//! publisher's approval pauses the whole run, and the question reaches the program through the
//! lead's checkpoint (a `SubAgentPause`: the child's checkpoint nested in the parent's). The
//! program approves, as a person would in an app, and the run goes on: the researcher is not
//! run again, the post is published once. The usage printed at the end is every model call's,
//! the children's included; the events a streamed run would show are the children's too,
//! tagged (`AgentEvent::SubAgent`).

use std::process::ExitCode;

use hookchain::builtin::SubAgents;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::prelude::*;
use hookchain::subagent::SubAgentPause;
use hookchain::{EndReason, InterruptId, Role, Usage, chain, tool};
use serde_json::json;

/// Searches the web (a fake: it knows one thing).
#[tool]
async fn search(query: String) -> String {
    format!("3 results for {query:?}: the Moon's pull raises two bulges of water a day")
}

/// Publishes a post (a fake: it prints).
#[tool]
async fn publish(title: String, body: String) -> String {
    println!("    [publish] {title}: {body}");
    format!("published {title:?}")
}

/// The tool results of the request so far, in order.
fn tool_results(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.text().into_owned())
        .collect()
}

/// The researcher: searches, then answers from what it found.
fn researcher() -> Result<Agent<ScriptedModel>, Box<dyn std::error::Error>> {
    let model = ScriptedModel::from_rule(|request| {
        let found = tool_results(request);
        Ok(match found.first() {
            None => ModelResponse::tool_calls([ToolCall::new(
                "s1",
                "search",
                json!({"query": "why are there tides"}),
            )]),
            Some(found) => ModelResponse::text(format!("Tides: {found}.")),
        }
        .with_usage(Usage::new(120, 40)))
    });
    Ok(Agent::builder(model)
        .name("researcher")
        .tool(search)
        .build()?)
}

/// The publisher: publishes, after a person approves.
fn publisher() -> Result<Agent<ScriptedModel, (HumanInTheLoop,)>, Box<dyn std::error::Error>> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(match tool_results(request).first() {
            None => ModelResponse::tool_calls([ToolCall::new(
                "p1",
                "publish",
                json!({"title": "Why tides?", "body": "Because of the Moon."}),
            )]),
            Some(done) => ModelResponse::text(format!("Done: {done}.")),
        }
        .with_usage(Usage::new(90, 30)))
    });
    Ok(Agent::builder(model)
        .name("publisher")
        .tool(publish)
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("publish", ToolPolicy::always())
        ])
        .build()?)
}

/// The lead: delegates both tasks at once, then reports.
fn lead() -> Result<Agent<ScriptedModel, SubAgents>, Box<dyn std::error::Error>> {
    let team = SubAgents::builder()
        .agent(researcher()?.into_tool("researcher", "Searches and explains, with sources.")?)
        .agent(publisher()?.into_tool("publisher", "Publishes posts on the blog.")?)
        .build()?;
    let model = ScriptedModel::from_rule(|request| {
        let results = tool_results(request);
        Ok(if results.is_empty() {
            ModelResponse::tool_calls([
                ToolCall::new(
                    "t1",
                    "task",
                    json!({"agent": "researcher", "task": "Explain why there are tides."}),
                ),
                ToolCall::new(
                    "t2",
                    "task",
                    json!({"agent": "publisher", "task": "Publish a post titled 'Why tides?'."}),
                ),
            ])
        } else {
            ModelResponse::text(format!("Team report — {}", results.join(" / ")))
        }
        .with_usage(Usage::new(60, 20)))
    });
    Ok(Agent::builder(model).name("lead").chain(team).build()?)
}

/// Approves every approval the children asked for, as a person would.
fn approve(interrupts: &[hookchain::Interrupt]) -> Vec<(InterruptId, serde_json::Value)> {
    interrupts
        .iter()
        .filter_map(|interrupt| {
            let pause = SubAgentPause::from_interrupt(interrupt)?;
            let answers = pause.interrupts().iter().filter_map(|asked| {
                let request = ApprovalRequest::from_interrupt(asked)?;
                for action in &request.actions {
                    println!(
                        "  {} asks to run `{}` with {} — approved",
                        pause.agent, action.name, action.arguments
                    );
                }
                Some(ApprovalResponse::approve_all(&request).answer(asked))
            });
            Some((interrupt.id.clone(), pause.answer(answers)))
        })
        .collect()
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let lead = lead()?;
    println!("lead: delegating to the researcher and the publisher");
    let paused = lead.run("Write and publish a post about tides.").await?;
    if paused.end != EndReason::Interrupted {
        return Err(format!("expected a pause for the approval, got {:?}", paused.end).into());
    }
    println!(
        "paused: {} approval(s) asked inside the team",
        paused.interrupts().len()
    );
    let answers = approve(paused.interrupts());
    let checkpoint = paused.checkpoint.ok_or("a paused run has a checkpoint")?;
    let done = lead.resume(checkpoint, answers).await?;
    println!("{}", done.text().unwrap_or_default());
    println!(
        "usage, the team's included: {} input and {} output tokens",
        done.usage.input_tokens, done.usage.output_tokens
    );
    if done.end != EndReason::Finished {
        return Err(format!("the run ended {:?}", done.end).into());
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}
