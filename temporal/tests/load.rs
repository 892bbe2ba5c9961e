//! Many runs on several worker processes sharing one store, one of the workers killed
//! (`SIGKILL`) in the middle of them and another started: every run ends once, with its answer
//! — a step retried after its first attempt ended the run hands the end back from the store —
//! and a charge acts again only when it was in flight in the killed worker. Prints the
//! throughput.
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

/// Records `start <idempotency key> <worker process id>` (synced) as its charge starts, and
/// `charge <key> <worker>` once it is done.
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
        self.record("start", &cx);
        tokio::time::sleep(TOOL_LATENCY).await;
        self.record("charge", &cx);
        Ok("charged".into())
    }
}

impl Charge {
    fn record(&self, what: &str, cx: &ToolContext<'_>) {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.effects)
            .expect("the effects file");
        let (key, worker) = (cx.idempotency_key(), std::process::id());
        // One write (`writeln!` writes each piece apart): lines of several processes, and of
        // several calls of one, never interleave.
        let line = format!("{what} {key} {worker}\n");
        file.write_all(line.as_bytes()).expect("record");
        file.sync_data().expect("sync");
    }
}

/// The effects file's lines of `what` (`start` or `charge`): `(key, worker process id)`.
fn effects_of(path: &Path, what: &str) -> Vec<(String, u32)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            (words.next()? == what).then_some(())?;
            Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
        })
        .collect()
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
        // Every step kept: a step retried after its attempt ended the run (its worker killed
        // before Temporal heard of it) hands the run's end back, with its answer.
        .checkpointer(
            FileCheckpointer::new(dir.join("runs")),
            Durability::EveryStep,
        )
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
async fn hundreds_of_runs_on_workers_one_killed_each_end_once_with_their_answer() {
    let server = start_server();
    let dir = std::env::temp_dir().join(format!("hookchain-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut workers = Workers(
        (0..WORKERS)
            .map(|_| spawn_worker(WORKER_ENV, &server, &dir))
            .collect(),
    );
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let runs = RunClient::new(client, TASK_QUEUE);
    let policy = quick_policy();
    let keys: Vec<String> = (0..RUNS).map(|i| format!("order-{i}")).collect();
    let started = Instant::now();
    let starting = tokio::spawn({
        let (runs, keys) = (runs.clone(), keys.clone());
        async move {
            for key in &keys {
                runs.start(key, json!("Charge the order."), &policy)
                    .await
                    .unwrap();
            }
        }
    });
    // A third of the way in, the first worker is killed while a charge of its is in flight
    // (started, not done), and another worker started in its place.
    let effects = dir.join("effects.txt");
    let killed = workers.0[0].id();
    let in_flight = loop {
        tokio::time::sleep(Duration::from_millis(1)).await;
        let done = effects_of(&effects, "charge");
        if done.len() < RUNS / 3 {
            continue;
        }
        let in_flight: Vec<String> = effects_of(&effects, "start")
            .into_iter()
            .filter(|(key, worker)| *worker == killed && !done.iter().any(|(k, _)| k == key))
            .map(|(key, _)| key)
            .collect();
        if !in_flight.is_empty() {
            break in_flight;
        }
    };
    workers.0[0].kill().unwrap();
    workers.0[0].wait().unwrap();
    workers.0.push(spawn_worker(WORKER_ENV, &server, &dir));
    eprintln!("killed worker process {killed}, charges in flight: {in_flight:?}");
    starting.await.unwrap();
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
    // A step's attempt may fail and be retried (the killed worker's, a busy machine's): the
    // retry goes on from the store. What must hold: each run finished, with its answer.
    for (key, result) in &results {
        let RunResult::Completed(outcome) = result else {
            panic!("{key}: {result:?}");
        };
        let summary = Summary::parse(&outcome.summary).unwrap();
        assert_eq!(summary.end, "finished", "{key}: {summary:?}");
        assert_eq!(summary.text.as_deref(), Some("Charged."), "{key}");
    }
    for key in &in_flight {
        let run = key.split(':').next().unwrap_or(key);
        eprintln!(
            "{run}'s attempts that failed: {:?}",
            attempt_failures(&server, run)
        );
    }
    // One charge per run, under a key of its own; a key charged twice only when its first
    // charge was the killed worker's (in flight: charged, not yet answered). The charges in
    // flight at the kill were made again, by a live worker.
    let mut by_key: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for (key, worker) in effects_of(&effects, "charge") {
        by_key.entry(key).or_default().push(worker);
    }
    assert_eq!(by_key.len(), RUNS, "one key per run");
    let mut again = 0;
    for (key, workers) in &by_key {
        let (last, before) = workers.split_last().unwrap();
        assert!(
            before.iter().all(|worker| *worker == killed),
            "{key} charged again after a live worker charged it: {workers:?}"
        );
        if in_flight.contains(key) {
            assert_ne!(*last, killed, "{key}: in flight at the kill, charged since");
        }
        again += before.len();
    }
    eprintln!(
        "{} charges in flight at the kill made by another worker; {again} made again under \
         their keys after the killed worker made them",
        in_flight.len()
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
