//! Many runs on several worker processes sharing one store: every run ends once, with its
//! answer, and no tool call runs twice. Prints the throughput.
//!
//! The workers are processes: this test binary run again with `WORKER_ENV` set (the test
//! `worker_process` is then the worker's `main`).

mod support;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use hookchain::interrupt::FileCheckpointer;
use hookchain::prelude::*;
use hookchain::{Content, Durability, Role, Tool, ToolError, ToolSpec};
use hookchain_temporal::{AgentSteps, RunClient, RunResult, Summary, connect};
use serde_json::json;
use support::{attempt_failures, quick_policy, serve_if_worker, spawn_worker, start_server};

/// Set in a worker process: the directory of the store and of the side effects.
const WORKER_ENV: &str = "HOOKCHAIN_TEMPORAL_LOAD_WORKER";
const TASK_QUEUE: &str = "load";
const WORKERS: usize = 3;
const RUNS: usize = 200;
/// What a tool call takes (a charge at a payment provider, say).
const TOOL_LATENCY: Duration = Duration::from_millis(20);

/// Records `charge <idempotency key>` (synced) once its charge is done.
struct Charge {
    effects: PathBuf,
}

impl Tool for Charge {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("charge", "Charges.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        tokio::time::sleep(TOOL_LATENCY).await;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.effects)
            .expect("the effects file");
        writeln!(file, "charge {}", cx.idempotency_key()).expect("record");
        file.sync_data().expect("sync");
        Ok("charged".into())
    }
}

fn agent(dir: &Path) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        let charged = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if charged {
            ModelResponse::text("Charged.")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c1", "charge", json!({}))])
        })
    });
    Agent::builder(model)
        .tool(Charge {
            effects: dir.join("effects.txt"),
        })
        .checkpointer(FileCheckpointer::new(dir.join("runs")), Durability::Pauses)
        .lease(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// The worker process's `main` (a no-op in the test run itself).
#[test]
fn worker_process() {
    serve_if_worker(WORKER_ENV, TASK_QUEUE, |dir| {
        AgentSteps::new(Arc::new(agent(dir))).unwrap()
    });
}

/// The worker processes, killed when dropped.
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for worker in &mut self.0 {
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_runs_on_several_workers_each_end_once_and_charge_once() {
    let server = start_server();
    let dir = std::env::temp_dir().join(format!("hookchain-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let _workers = Workers(
        (0..WORKERS)
            .map(|_| spawn_worker(WORKER_ENV, &server, &dir))
            .collect(),
    );
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let runs = RunClient::new(client, TASK_QUEUE);
    let policy = quick_policy();
    let keys: Vec<String> = (0..RUNS).map(|i| format!("order-{i}")).collect();
    let started = Instant::now();
    for key in &keys {
        runs.start(key, json!("Charge the order."), &policy)
            .await
            .unwrap();
    }
    let results: Vec<(&String, RunResult)> = futures::stream::iter(&keys)
        .map(|key| {
            let runs = runs.clone();
            async move {
                let result = tokio::time::timeout(Duration::from_secs(120), runs.result(key))
                    .await
                    .expect("the run ended in time")
                    .expect("a result");
                (key, result)
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let took = started.elapsed();
    eprintln!(
        "{RUNS} runs (2 steps each) on {WORKERS} worker processes in {took:?}: {:.1} runs/s, \
         {:.1} runs/s per worker",
        RUNS as f64 / took.as_secs_f64(),
        RUNS as f64 / took.as_secs_f64() / WORKERS as f64
    );
    // A step's attempt may fail and be retried (a busy machine, a store that answered late):
    // the retry goes on from the store, so a run may take fewer workflow steps than the
    // agent's two, or end "ended" (its last step's reply lost). What must hold is below.
    let mut retried = 0;
    for (key, result) in &results {
        let RunResult::Completed(outcome) = result else {
            panic!("{key}: {result:?}");
        };
        let summary = Summary::parse(&outcome.summary).unwrap();
        if outcome.steps != 2 || summary.end != "finished" {
            retried += 1;
            eprintln!(
                "{key} was retried ({} workflow steps, {summary:?}): {:?}",
                outcome.steps,
                attempt_failures(&server, key)
            );
        }
        if summary.end == "finished" {
            assert_eq!(summary.text.as_deref(), Some("Charged."), "{key}");
            assert_eq!(summary.steps, 2, "{key}: the agent's steps");
        } else {
            assert_eq!(summary.end, "ended", "{key}: {summary:?}");
        }
    }
    eprintln!("{retried} of {RUNS} runs had a step retried");
    let effects = std::fs::read_to_string(dir.join("effects.txt")).unwrap();
    let mut charges: Vec<&str> = effects.lines().collect();
    assert_eq!(charges.len(), RUNS, "one charge per run");
    charges.sort_unstable();
    charges.dedup();
    assert_eq!(
        charges.len(),
        RUNS,
        "each under an idempotency key of its own"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
