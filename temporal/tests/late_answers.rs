//! Answers delivered again once the run went on (a duplicated webhook), against a real dev
//! server (`tests/support`): a run paused at its second approval is sent the first approval's
//! answers again — as an update, refused by the workflow's validator; as a signal, dropped by
//! the step — and goes on waiting; the right answers finish it, and each approved effect
//! happened once.

mod support;

use std::sync::{Arc, Mutex};

use hookchain::builtin::human_in_the_loop::{
    ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::{Durability, FnTool, Role, Tool, chain};
use hookchain_temporal::{
    AgentSteps, Error, InterruptSummary, RunClient, RunResult, RunStatus, Summary,
};
use serde_json::{Value, json};
use support::{quick_policy, wait_for_status, with_worker};

/// The effects of the approved calls, in the order they happened.
type Effects = Arc<Mutex<Vec<&'static str>>>;

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// A model that pays, then ships, then says so.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let done = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        Ok(match done {
            0 => ModelResponse::tool_calls([ToolCall::new("c1", "pay", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("c2", "ship", json!({}))]),
            _ => ModelResponse::text("Paid and shipped."),
        })
    })
}

/// A tool that records its effect.
fn effect(name: &'static str, effects: &Effects) -> impl Tool + use<> {
    let effects = Arc::clone(effects);
    FnTool::new(name, "Does it.", move |_: NoArgs| {
        effects.lock().unwrap().push(name);
        async move { Ok::<_, std::convert::Infallible>(format!("{name}: done")) }
    })
}

/// An agent whose two calls each wait for an approval: two pauses.
fn agent(effects: &Effects) -> Arc<Agent<ScriptedModel, (HumanInTheLoop,)>> {
    let gate = HumanInTheLoop::new()
        .interrupt_on("pay", ToolPolicy::always())
        .interrupt_on("ship", ToolPolicy::always());
    Arc::new(
        Agent::builder(model())
            .tool(effect("pay", effects))
            .tool(effect("ship", effects))
            .chain(chain![gate])
            .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
            .lease(std::time::Duration::from_secs(2))
            .build()
            .unwrap(),
    )
}

/// Approves every interrupt of a pause.
fn approve(interrupts: &[InterruptSummary]) -> Value {
    let approve = serde_json::to_value(ApprovalResponse::new(vec![Decision::Approve])).unwrap();
    Value::Object(
        interrupts
            .iter()
            .map(|interrupt| (interrupt.id.clone(), approve.clone()))
            .collect(),
    )
}

/// Waits for the run to pause after a step later than `after`.
async fn paused_after(runs: &RunClient, key: &str, after: u32) -> (u32, Vec<InterruptSummary>) {
    let status = wait_for_status(
        runs,
        key,
        |status| matches!(status, RunStatus::Paused { step, .. } if *step > after),
    )
    .await;
    let RunStatus::Paused { step, interrupts } = status else {
        unreachable!()
    };
    (step, interrupts)
}

fn ids(interrupts: &[InterruptSummary]) -> Vec<&str> {
    interrupts.iter().map(|i| i.id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_approval_delivered_again_at_the_second_is_refused_and_the_run_goes_on() {
    let effects = Effects::default();
    let steps = AgentSteps::new(agent(&effects)).unwrap();
    let seen = Arc::clone(&effects);
    with_worker(steps, |runs| async move {
        runs.start("order-1", json!("Pay and ship."), &quick_policy())
            .await
            .unwrap();
        let (first_step, first) = paused_after(&runs, "order-1", 0).await;
        let first_answers = approve(&first);
        assert_eq!(
            runs.resume("order-1", first_answers.clone()).await.unwrap(),
            first_step
        );
        let (second_step, second) = paused_after(&runs, "order-1", first_step).await;
        assert_ne!(ids(&first), ids(&second), "another pause");
        assert_eq!(*seen.lock().unwrap(), ["pay"]);

        // The webhook of the first approval, delivered again as an update: refused, and why.
        let again = runs.resume("order-1", first_answers.clone()).await;
        let Err(Error::Rejected { reason, .. }) = again else {
            panic!("the first approval's answers taken at the second pause: {again:?}");
        };
        assert!(
            reason.contains(first[0].id.as_str()) && reason.contains(second[0].id.as_str()),
            "{reason}"
        );
        assert!(reason.contains("earlier pause"), "{reason}");
        assert_eq!(
            runs.status("order-1").await.unwrap(),
            RunStatus::Paused {
                step: second_step,
                interrupts: second.clone()
            },
            "the run still waits on the second approval"
        );

        // Delivered again as a signal, which nothing validates: the step drops the answers
        // and reports the pause as it stands.
        runs.answer("order-1", first_answers).await.unwrap();
        let (third_step, still) = paused_after(&runs, "order-1", second_step).await;
        assert_eq!(
            ids(&still),
            ids(&second),
            "the same pause, after {third_step}"
        );
        // So does an answer to no interrupt of the run at all (an id written by hand).
        runs.answer("order-1", json!({ "not-an-interrupt": "approve" }))
            .await
            .unwrap();
        let (fourth_step, still) = paused_after(&runs, "order-1", third_step).await;
        assert_eq!(
            ids(&still),
            ids(&second),
            "the same pause, after {fourth_step}"
        );
        assert_eq!(*seen.lock().unwrap(), ["pay"], "nothing ran meanwhile");

        // The right answers finish the run.
        assert_eq!(
            runs.resume("order-1", approve(&second)).await.unwrap(),
            fourth_step
        );
        let RunResult::Completed(outcome) = runs.result("order-1").await.unwrap() else {
            panic!("the run did not complete");
        };
        let summary = Summary::parse(&outcome.summary).unwrap();
        assert_eq!(summary.end, "finished");
        assert_eq!(summary.text.as_deref(), Some("Paid and shipped."));
    })
    .await;
    assert_eq!(
        *effects.lock().unwrap(),
        ["pay", "ship"],
        "each approved effect happened once"
    );
}
