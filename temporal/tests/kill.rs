//! A worker killed with SIGKILL in the middle of a step, and another that finishes the run: the
//! server misses the dead worker's heartbeats and retries the step elsewhere; the step goes on
//! from what the shared store recorded — the completed tool call is not run again, the one in
//! flight runs again with the same idempotency key.
//!
//! The workers are processes: this test binary run again with `WORKER_ENV` set (the test
//! `worker_process` is then the worker's `main`).

mod support;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookchain::interrupt::FileCheckpointer;
use hookchain::prelude::*;
use hookchain::{Content, Durability, Role, Tool, ToolError, ToolSpec};
use hookchain_temporal::{
    AgentSteps, RunClient, RunResult, StepPolicy, StepWorker, Summary, connect,
};
use serde_json::json;
use support::{serve_if_worker, spawn_worker, start_server};

/// Set in a worker process: the directory of the run's store and of the side effects.
const WORKER_ENV: &str = "HOOKCHAIN_TEMPORAL_KILL_WORKER";
const TASK_QUEUE: &str = "kill";
/// The agents' lease on a run's key: shorter than the heartbeat timeout, so that the step is
/// retried once the dead worker's lease expired.
const LEASE: Duration = Duration::from_secs(2);

/// A tool that records `<name> <idempotency key>` (synced) each time it runs, then answers —
/// or, in the first worker, hangs (`slow`): the call in flight when the worker is killed.
struct Booking {
    name: &'static str,
    effects: PathBuf,
    hang: bool,
}

impl Tool for Booking {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name, "Books.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.effects)
            .expect("the effects file");
        // One write: lines of several processes never interleave.
        let line = format!("{} {}\n", self.name, cx.idempotency_key());
        file.write_all(line.as_bytes()).expect("record");
        file.sync_all().expect("sync");
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(format!("{} booked", self.name).into())
    }
}

/// The agent of a worker on the store in `dir`; its `slow` tool hangs if `hang`.
fn agent(dir: &Path, hang: bool) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        let booked = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if booked {
            ModelResponse::text("Your flight and hotel are booked.")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_fast", "fast", json!({})),
                ToolCall::new("call_slow", "slow", json!({})),
            ])
        })
    });
    let effects = dir.join("effects.txt");
    Agent::builder(model)
        .tool(Booking {
            name: "fast",
            effects: effects.clone(),
            hang: false,
        })
        .tool(Booking {
            name: "slow",
            effects,
            hang,
        })
        .checkpointer(FileCheckpointer::new(dir.join("runs")), Durability::Pauses)
        .lease(LEASE)
        .build()
        .unwrap()
}

/// The worker process's `main` (a no-op in the test run itself).
#[test]
fn worker_process() {
    serve_if_worker(WORKER_ENV, TASK_QUEUE, |dir| {
        AgentSteps::new(Arc::new(agent(dir, true))).unwrap()
    });
}

fn effects(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("effects.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_step_is_replaced_and_no_completed_call_runs_twice() {
    let server = start_server();
    let dir = std::env::temp_dir().join(format!("hookchain-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let mut first = spawn_worker(WORKER_ENV, &server, &dir);
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let runs = RunClient::new(client, TASK_QUEUE);
    let policy = StepPolicy {
        start_to_close: Duration::from_secs(60),
        heartbeat_timeout: Some(Duration::from_secs(3)),
        maximum_attempts: 10,
        initial_interval: Duration::from_millis(200),
        backoff_coefficient: 2.0,
        maximum_interval: Some(Duration::from_secs(1)),
        max_steps: 10,
    };
    runs.start("trip-1", json!("Book my trip."), &policy)
        .await
        .unwrap();

    // The first worker is mid-step: `fast` done, `slow` in flight (it hangs there).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !effects(&dir).iter().any(|line| line.starts_with("slow ")) {
        assert!(
            Instant::now() < deadline,
            "the first worker never ran the step"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.kill().expect("SIGKILL");
    first.wait().unwrap();
    let killed_at = Instant::now();

    // The second worker, in this process, takes the step over.
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let worker = StepWorker::new(
        client,
        TASK_QUEUE,
        AgentSteps::new(Arc::new(agent(&dir, false))).unwrap(),
    )
    .unwrap();
    let stop = worker.shutdown_handle();
    let (ran, result) = tokio::join!(worker.run(), async {
        let result = tokio::time::timeout(Duration::from_secs(60), runs.result("trip-1")).await;
        stop.shutdown();
        result
    });
    ran.unwrap();
    let result = result.expect("the run ended in time").unwrap();
    eprintln!("finished {:?} after the kill", killed_at.elapsed());
    let RunResult::Completed(outcome) = result else {
        panic!("{result:?}");
    };
    let summary = Summary::parse(&outcome.summary).unwrap();
    assert_eq!(summary.end, "finished");
    assert_eq!(
        summary.text.as_deref(),
        Some("Your flight and hotel are booked.")
    );

    let effects = effects(&dir);
    let runs_of = |tool: &str| {
        effects
            .iter()
            .filter(|line| line.split(' ').next() == Some(tool))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        runs_of("fast").len(),
        1,
        "the completed call ran once: {effects:?}"
    );
    let slow = runs_of("slow");
    assert_eq!(slow.len(), 2, "the call in flight ran again: {effects:?}");
    assert_eq!(slow[0], slow[1], "with the same idempotency key");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
