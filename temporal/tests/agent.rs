//! A hookchain agent's runs as Temporal workflows (`AgentSteps`), against a real dev server
//! (`tests/support`): a run step by step to its answer, an approval answered by a signal, a
//! cancelled run whose stored run is cancelled too.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{
    ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::{Durability, FnTool, Role, chain};
use hookchain_temporal::{AgentSteps, RunResult, RunStatus, Summary};
use serde_json::{Value, json};
use support::{quick_policy, wait_for_status, with_worker};

/// Arguments of the `pay` tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PayArgs {
    /// The amount.
    amount: u32,
}

/// A model that pays, then says so.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let paid = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if paid {
            ModelResponse::text("Paid.")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c1", "pay", json!({ "amount": 12 }))])
        })
    })
}

/// An agent that pays (counting payments), asking first if `approval`.
fn agent(
    store: &Arc<InMemoryCheckpointer>,
    payments: &Arc<std::sync::atomic::AtomicUsize>,
    approval: bool,
) -> Arc<Agent<ScriptedModel, (Option<HumanInTheLoop>,)>> {
    let paid = payments.clone();
    let pay = FnTool::new("pay", "Pays.", move |args: PayArgs| {
        let paid = paid.clone();
        async move {
            paid.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(format!("paid {}", args.amount))
        }
    });
    let gate = approval.then(|| HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()));
    Arc::new(
        Agent::builder(model())
            .tool(pay)
            .chain(chain![gate])
            .checkpointer(store.clone(), Durability::Pauses)
            .lease(Duration::from_secs(2))
            .build()
            .unwrap(),
    )
}

fn summary(result: RunResult) -> Summary {
    match result {
        RunResult::Completed(outcome) => Summary::parse(&outcome.summary).unwrap(),
        other => panic!("not completed: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_goes_step_by_step_to_its_answer() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let payments = Arc::default();
    // What the side channel tells: (key, step, attempt, what happened).
    let told = Arc::new(std::sync::Mutex::new(
        Vec::<(String, u32, u32, String)>::new(),
    ));
    let tell = told.clone();
    let steps = AgentSteps::new(agent(&store, &payments, false))
        .unwrap()
        .on_event(move |step| {
            let what = match step.event {
                AgentEvent::Model(ModelEvent::TextDelta { text, .. }) => format!("text {text}"),
                AgentEvent::ToolCallFinished(result) => format!("tool {}", result.content),
                AgentEvent::Output(output) => format!("output {:?}", output.end),
                _ => return,
            };
            let key = step.key.to_owned();
            tell.lock()
                .unwrap()
                .push((key, step.step, step.attempt, what));
        });
    let kept = store.clone();
    with_worker(steps, |runs| async move {
        runs.start("order-1", json!("Pay the invoice."), &quick_policy())
            .await
            .unwrap();
        let summary = summary(runs.result("order-1").await.unwrap());
        assert_eq!(summary.end, "finished");
        assert_eq!(summary.text.as_deref(), Some("Paid."));
        assert_eq!(summary.steps, 2);
        assert_eq!(
            runs.status("order-1").await.unwrap(),
            RunStatus::Done { steps: 2 }
        );
        // The run's history stayed in the store: its tombstone is there now.
        assert!(matches!(
            kept.get("order-1").await.unwrap(),
            Some(Record::Ended(_))
        ));
    })
    .await;
    assert_eq!(payments.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(
        *told.lock().unwrap(),
        [
            (1, "tool paid 12"),
            (1, "output Stepped"),
            (2, "text Paid."),
            (2, "output Finished")
        ]
        .map(|(step, what)| ("order-1".to_owned(), step, 1, what.to_owned()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_signalled_later_lets_the_run_go_on() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let payments = Arc::default();
    let steps = AgentSteps::new(agent(&store, &payments, true)).unwrap();
    let paid = Arc::clone(&payments);
    with_worker(steps, |runs| async move {
        runs.start("order-2", json!("Pay the invoice."), &quick_policy())
            .await
            .unwrap();
        let status =
            wait_for_status(&runs, "order-2", |s| matches!(s, RunStatus::Paused { .. })).await;
        let RunStatus::Paused { interrupts, .. } = status else {
            unreachable!()
        };
        assert_eq!(interrupts.len(), 1);
        // What an approval screen shows, from the workflow's status alone.
        assert_eq!(interrupts[0].source.as_deref(), Some("HumanInTheLoop"));
        let asked = interrupts[0].payload.to_string();
        assert!(asked.contains("\"pay\"") && asked.contains("12"), "{asked}");
        assert!(!interrupts[0].payload_omitted);
        assert_eq!(paid.load(std::sync::atomic::Ordering::SeqCst), 0);
        let approve = serde_json::to_value(ApprovalResponse::new(vec![Decision::Approve])).unwrap();
        let mut answers = serde_json::Map::new();
        answers.insert(interrupts[0].id.clone(), approve);
        runs.answer("order-2", Value::Object(answers))
            .await
            .unwrap();
        let summary = summary(runs.result("order-2").await.unwrap());
        assert_eq!(summary.text.as_deref(), Some("Paid."));
    })
    .await;
    assert_eq!(payments.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_workflow_cancels_the_stored_run() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let payments = Arc::default();
    let steps = AgentSteps::new(agent(&store, &payments, true)).unwrap();
    let kept = store.clone();
    with_worker(steps, |runs| async move {
        runs.start("order-3", json!("Pay the invoice."), &quick_policy())
            .await
            .unwrap();
        wait_for_status(&runs, "order-3", |s| matches!(s, RunStatus::Paused { .. })).await;
        runs.cancel("order-3", "the customer left").await.unwrap();
        assert_eq!(runs.result("order-3").await.unwrap(), RunResult::Cancelled);
        let Some(Record::Ended(tombstone)) = kept.get("order-3").await.unwrap() else {
            panic!("the stored run is cancelled");
        };
        assert_eq!(tombstone.how, "cancelled");
        assert!(kept.list().await.unwrap()[0].held_by.is_none());
    })
    .await;
    assert_eq!(payments.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_input_fails_the_run_at_once() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let steps = AgentSteps::new(agent(&store, &Arc::default(), false)).unwrap();
    with_worker(steps, |runs| async move {
        runs.start("order-4", json!({ "not": "a text" }), &quick_policy())
            .await
            .unwrap();
        let result = runs.result("order-4").await;
        assert!(result.is_err(), "{result:?}");
    })
    .await;
}

/// The worker that paused the run is restarted (a new process would do the same: a new agent
/// on the same store); the approval signalled then reaches the new one, which finishes the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_signalled_after_a_worker_restart_finishes_the_run() {
    let server = support::start_server();
    let store = Arc::new(InMemoryCheckpointer::new());
    let payments = Arc::default();
    let client = hookchain_temporal::connect(server.address(), server.namespace())
        .await
        .unwrap();
    let runs = hookchain_temporal::RunClient::new(client.clone(), "restart");

    let before = hookchain_temporal::StepWorker::new(
        client.clone(),
        "restart",
        AgentSteps::new(agent(&store, &payments, true)).unwrap(),
    )
    .unwrap();
    let stop = before.shutdown_handle();
    let running = before.run();
    tokio::pin!(running);
    let interrupts = tokio::select! {
        result = &mut running => panic!("the worker stopped early: {result:?}"),
        status = async {
            runs.start("order-5", json!("Pay the invoice."), &quick_policy()).await.unwrap();
            wait_for_status(&runs, "order-5", |s| matches!(s, RunStatus::Paused { .. })).await
        } => match status {
            RunStatus::Paused { interrupts, .. } => interrupts,
            _ => unreachable!(),
        },
    };
    stop.shutdown();
    running.await.unwrap();

    // A new worker, with an agent of its own on the same store.
    let after = hookchain_temporal::StepWorker::new(
        client,
        "restart",
        AgentSteps::new(agent(&store, &payments, true)).unwrap(),
    )
    .unwrap();
    let stop = after.shutdown_handle();
    let (ran, result) = tokio::join!(after.run(), async {
        let approve = serde_json::to_value(ApprovalResponse::new(vec![Decision::Approve])).unwrap();
        let answers = json!({ interrupts[0].id.clone(): approve });
        runs.answer("order-5", answers).await.unwrap();
        let result = tokio::time::timeout(Duration::from_secs(60), runs.result("order-5")).await;
        stop.shutdown();
        result
    });
    ran.unwrap();
    let summary = summary(result.expect("in time").unwrap());
    assert_eq!(summary.text.as_deref(), Some("Paid."));
    assert_eq!(payments.load(std::sync::atomic::Ordering::SeqCst), 1);
    drop(server);
}
