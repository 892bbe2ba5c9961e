//! A tool whose body blocks its thread (a synchronous payment SDK) for several heartbeat
//! timeouts, against a real dev server (`tests/support`): the step's heartbeats go on from a
//! task of their own, so the server never times the attempt out and retries the step while
//! the tool still runs, and the card is charged once.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::{Content, Durability, Role, Tool, ToolError, ToolSpec};
use hookchain_temporal::{
    AgentSteps, RunClient, RunResult, StepPolicy, StepWorker, Summary, connect,
};
use serde_json::json;
use support::{attempt_failures, start_server};

const TASK_QUEUE: &str = "blocking";
/// How long the server waits for a heartbeat: short, so that the block lasts several of them.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the payment SDK blocks the step's thread: three and a half heartbeat timeouts.
const BLOCK: Duration = Duration::from_millis(7000);
/// The agent's lease on the run, renewed from a task of its own too; shorter than the
/// heartbeat timeout, as `AgentSteps::policy` has it.
const LEASE: Duration = Duration::from_millis(1500);

/// The payments made, by idempotency key, in the order they started.
type Ledger = Arc<Mutex<Vec<String>>>;

/// Charges a card through a synchronous SDK: the call blocks the thread it runs on.
struct BlockingCharge {
    ledger: Ledger,
}

impl Tool for BlockingCharge {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("charge", "Charges the card.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        // Recorded as the charge starts: a second attempt running under this one would show.
        self.ledger.lock().unwrap().push(cx.idempotency_key());
        std::thread::sleep(BLOCK);
        Ok("charged".into())
    }
}

fn agent(ledger: &Ledger) -> Arc<Agent<ScriptedModel>> {
    let model = ScriptedModel::from_rule(|request| {
        let charged = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if charged {
            ModelResponse::text("Charged.")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c1", "charge", json!({}))])
        })
    });
    Arc::new(
        Agent::builder(model)
            .tool(BlockingCharge {
                ledger: Arc::clone(ledger),
            })
            .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
            .lease(LEASE)
            .build()
            .unwrap(),
    )
}

fn policy() -> StepPolicy {
    StepPolicy {
        start_to_close: Duration::from_secs(30),
        heartbeat_timeout: Some(HEARTBEAT_TIMEOUT),
        maximum_attempts: 3,
        initial_interval: Duration::from_millis(100),
        backoff_coefficient: 2.0,
        maximum_interval: Some(Duration::from_secs(1)),
        max_steps: 10,
    }
}

/// On the worker's multi-thread runtime (two threads: the tool blocks one of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_blocks_its_thread_is_not_retried_under_it_and_charges_once() {
    let server = start_server();
    let ledger = Ledger::default();
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let worker = StepWorker::new(
        client.clone(),
        TASK_QUEUE,
        AgentSteps::new(agent(&ledger)).unwrap(),
    )
    .unwrap();
    let stop = worker.shutdown_handle();
    let runs = RunClient::new(client, TASK_QUEUE);
    let (ran, result) = tokio::join!(worker.run(), async {
        runs.start("order-1", json!("Charge the card."), &policy())
            .await
            .unwrap();
        let result = tokio::time::timeout(Duration::from_secs(60), runs.result("order-1")).await;
        stop.shutdown();
        result
    });
    ran.unwrap();

    // No attempt of a step timed out, nor failed (a retry refused the run's key, say).
    let failures = attempt_failures(&server, "order-1");
    assert!(
        failures.is_empty(),
        "a step was retried while the tool blocked: {failures:?}"
    );
    let RunResult::Completed(outcome) = result.expect("the run ended in time").unwrap() else {
        panic!("the run did not complete");
    };
    let summary = Summary::parse(&outcome.summary).unwrap();
    assert_eq!(summary.end, "finished");
    assert_eq!(summary.text.as_deref(), Some("Charged."));
    assert_eq!(outcome.steps, 2, "two steps, each run once");
    assert_eq!(
        *ledger.lock().unwrap(),
        ["order-1:c1"],
        "the card was charged once"
    );
    drop(server);
}
