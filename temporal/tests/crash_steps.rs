//! Crash schedules on a Temporal dev server (DESIGN §21, issue 43): a worker process killed at
//! every point where its step touches the world — each write and read of the shared store,
//! each tool call's start and act — then another worker takes the step over when Temporal
//! retries it; the run asks for an approval between its steps, answered as it pauses. The
//! promise checked after each schedule: the run finishes with the model's answer, each tool
//! call acted once, under one idempotency key — twice only when it was in flight at the kill.
//!
//! A point is counted by the worker's store and tools (the lease's renewals, which come with
//! time, are not points): a dry run counts them (32), then each is a schedule of its own. CI
//! takes every 4th and the last (about 2 min); every point:
//!
//! ```text
//! HOOKCHAIN_CRASH_STRIDE=1 cargo test -p hookchain-temporal --features dev-server-tests \
//!     --test crash_steps -- --nocapture      # about 8 min
//! ``` The worker
//! dies with `abort()`: no destructor runs, no lease is let go, as under `SIGKILL`.
//!
//! The workers are processes: this test binary run again with `WORKER_ENV` set (the test
//! `worker_process` is then the worker's `main`).

mod support;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use hookchain::builtin::human_in_the_loop::{
    ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{
    Checkpoint, CheckpointError, Checkpointer, Claim, FileCheckpointer, Lease, Record, Stored,
    Tombstone,
};
use hookchain::prelude::*;
use hookchain::{Content, Durability, Role, Tool, ToolError, ToolSpec};
use hookchain_temporal::{
    AgentSteps, InterruptSummary, RunClient, RunResult, RunStatus, StepPolicy, Summary, connect,
};
use serde_json::{Value, json};
use support::{DevServer, serve_if_worker, start_server};

/// Set in a worker process: the directory of the run's store and of its ledger.
const WORKER_ENV: &str = "HOOKCHAIN_TEMPORAL_CRASH_WORKER";
/// Set in a worker process that dies: at which point.
const DIE_AT_ENV: &str = "HOOKCHAIN_TEMPORAL_CRASH_AT";
const TASK_QUEUE: &str = "crash";
/// Short, so that a dead worker's key is free again soon after Temporal retries its step.
const LEASE: Duration = Duration::from_secs(1);
const FINAL: &str = "Reserved and paid.";

/// The points a worker passed, and the one it dies at.
struct Points {
    passed: AtomicUsize,
    die_at: Option<usize>,
    /// Where the count goes when a point is passed (read by the test after a dry run).
    count_file: PathBuf,
    /// The ledger, where the death is noted.
    ledger: PathBuf,
}

impl Points {
    fn pass(&self) {
        let n = self.passed.fetch_add(1, Ordering::SeqCst);
        if self.die_at == Some(n) {
            note(&self.ledger, "died");
            // As a SIGKILL: no destructor runs, no lease is let go.
            std::process::abort();
        }
        let _ = std::fs::write(&self.count_file, (n + 1).to_string());
    }
}

/// The shared file store, each operation but renewals a point.
struct Dying {
    inner: FileCheckpointer,
    points: Arc<Points>,
}

impl Checkpointer for Dying {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        self.points.pass();
        let claimed = self.inner.claim(key, worker, ttl).await;
        self.points.pass();
        claimed
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        self.inner.get(key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        self.inner.list().await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        self.points.pass();
        let put = self.inner.put(key, checkpoint, lease).await;
        if put.is_ok() {
            note(&self.points.ledger, "put");
        }
        self.points.pass();
        put
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        self.inner.renew(key, lease).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        self.points.pass();
        self.inner.release(key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        self.points.pass();
        let ended = self.inner.end(key, lease, tombstone).await;
        self.points.pass();
        ended
    }
}

/// A tool with an effect: `enter <tool> <key>` then `acted <tool> <key>` in the ledger
/// (synced), a point before each. (The ledger also notes each checkpoint kept, `put`, and the
/// worker's death, `died`.)
struct Effect {
    name: &'static str,
    ledger: PathBuf,
    points: Arc<Points>,
}

/// Appends `line` to the ledger at `path` (synced).
fn note(path: &Path, line: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the ledger");
    // One write: lines of several processes never interleave.
    file.write_all(format!("{line}\n").as_bytes())
        .expect("note");
    file.sync_all().expect("sync");
}

impl Tool for Effect {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name, "Acts.", json!({ "type": "object" }))
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        let key = cx.idempotency_key();
        self.points.pass();
        note(&self.ledger, &format!("enter {} {key}", self.name));
        self.points.pass();
        note(&self.ledger, &format!("acted {} {key}", self.name));
        Ok(format!("{} done", self.name).into())
    }
}

/// The agent of a worker on `dir`: `reserve`, then `pay` once a person approved it, then the
/// answer.
fn agent(dir: &Path, points: &Arc<Points>) -> Agent<ScriptedModel, HumanInTheLoop> {
    let model = ScriptedModel::from_rule(|request| {
        let done = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        Ok(match done {
            0 => ModelResponse::tool_calls([ToolCall::new("call_reserve", "reserve", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("call_pay", "pay", json!({}))]),
            _ => ModelResponse::text(FINAL),
        })
    });
    let effect = |name| Effect {
        name,
        ledger: dir.join("ledger.txt"),
        points: Arc::clone(points),
    };
    let store = Dying {
        inner: FileCheckpointer::new(dir.join("runs")),
        points: Arc::clone(points),
    };
    Agent::builder(model)
        .tool(effect("reserve"))
        .tool(effect("pay"))
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .checkpointer(store, Durability::EveryStep)
        .lease(LEASE)
        .build()
        .unwrap()
}

fn points_in(dir: &Path, die_at: Option<usize>) -> Arc<Points> {
    Arc::new(Points {
        passed: AtomicUsize::new(0),
        die_at,
        count_file: dir.join("points"),
        ledger: dir.join("ledger.txt"),
    })
}

/// The worker process's `main` (a no-op in the test run itself).
#[test]
fn worker_process() {
    let die_at = std::env::var(DIE_AT_ENV)
        .ok()
        .map(|at| at.parse().expect("a point"));
    serve_if_worker(WORKER_ENV, TASK_QUEUE, |dir| {
        AgentSteps::new(Arc::new(agent(dir, &points_in(dir, die_at)))).unwrap()
    });
}

/// This test binary as a worker process on `server` for `dir`, dying at `die_at` if given.
fn spawn(server: &DevServer, dir: &Path, die_at: Option<usize>) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "worker_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WORKER_ENV, dir)
        .env("TEMPORAL_ADDRESS", server.address())
        .env("TEMPORAL_NAMESPACE", server.namespace())
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    if let Some(at) = die_at {
        command.env(DIE_AT_ENV, at.to_string());
    }
    command.spawn().expect("a worker process")
}

fn policy() -> StepPolicy {
    StepPolicy {
        start_to_close: Duration::from_secs(60),
        heartbeat_timeout: Some(Duration::from_secs(2)),
        maximum_attempts: 20,
        initial_interval: Duration::from_millis(100),
        backoff_coefficient: 2.0,
        maximum_interval: Some(Duration::from_secs(1)),
        max_steps: 10,
    }
}

fn approve(interrupts: &[InterruptSummary]) -> Value {
    let approve = serde_json::to_value(ApprovalResponse::new(vec![Decision::Approve])).unwrap();
    Value::Object(
        interrupts
            .iter()
            .map(|interrupt| (interrupt.id.clone(), approve.clone()))
            .collect(),
    )
}

/// Runs the scenario on a fresh directory, its first worker dying at `die_at` (then one that
/// lives is started); answers its pause; returns the run's summary and the ledger, and
/// whether the first worker died.
async fn schedule(
    server: &DevServer,
    key: &str,
    die_at: Option<usize>,
) -> (Summary, Vec<String>, usize, bool) {
    let dir = std::env::temp_dir().join(format!("hookchain-crash-{}-{key}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut first = spawn(server, &dir, die_at);
    let client = connect(server.address(), server.namespace()).await.unwrap();
    let runs = RunClient::new(client, TASK_QUEUE);
    runs.start(key, json!("Reserve the room, then pay."), &policy())
        .await
        .unwrap();
    let mut second: Option<Child> = None;
    let mut died = false;
    let mut answered = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let result = loop {
        assert!(
            Instant::now() < deadline,
            "{key}: the run did not end in time"
        );
        if !died && first.try_wait().unwrap().is_some() {
            died = true;
            second = Some(spawn(server, &dir, None));
        }
        let status = tokio::time::timeout(Duration::from_secs(2), runs.status(key)).await;
        match status {
            Ok(Ok(RunStatus::Paused { step, interrupts })) if !answered.contains(&step) => {
                // Refused when the step the pause came from went on already: answered again
                // at its next status.
                if runs.resume(key, approve(&interrupts)).await.is_ok() {
                    answered.push(step);
                }
            }
            Ok(Ok(RunStatus::Done { .. })) => {
                break tokio::time::timeout(Duration::from_secs(30), runs.result(key))
                    .await
                    .expect("the result")
                    .unwrap();
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    for worker in [Some(&mut first), second.as_mut()].into_iter().flatten() {
        let _ = worker.kill();
        let _ = worker.wait();
    }
    let RunResult::Completed(outcome) = result else {
        panic!("{key}: {result:?}");
    };
    let ledger: Vec<String> = std::fs::read_to_string(dir.join("ledger.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let points = std::fs::read_to_string(dir.join("points"))
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    (
        Summary::parse(&outcome.summary).unwrap(),
        ledger,
        points,
        died,
    )
}

/// The promise for one schedule (see the module's doc).
fn check(key: &str, summary: &Summary, ledger: &[String]) {
    let context = format!("{key}: {ledger:#?}");
    assert_eq!(summary.end, "finished", "{context}");
    assert_eq!(summary.text.as_deref(), Some(FINAL), "{context}");
    for tool in ["reserve", "pay"] {
        let of = |what: &str| -> Vec<&str> {
            ledger
                .iter()
                .filter_map(|line| {
                    let mut words = line.split(' ');
                    (words.next() == Some(what) && words.next() == Some(tool))
                        .then(|| words.next().unwrap_or(""))
                })
                .collect()
        };
        let (entered, acted) = (of("enter"), of("acted"));
        assert!(!acted.is_empty(), "{tool} never acted: {context}");
        assert!(
            entered.iter().chain(&acted).all(|k| *k == acted[0]),
            "{tool} under two keys: {context}"
        );
        // A second act only of a call in flight at the kill: entered before the death, and
        // no checkpoint kept since (its result was not in the store).
        let died = ledger.iter().position(|line| line == "died");
        let entered_at = ledger
            .iter()
            .position(|line| line.starts_with(&format!("enter {tool} ")));
        let in_flight = match (entered_at, died) {
            (Some(entered), Some(died)) => {
                entered < died && !ledger[entered..died].iter().any(|line| line == "put")
            }
            _ => false,
        };
        assert!(
            acted.len() == 1 || (acted.len() == 2 && in_flight),
            "{tool} acted {} times: {context}",
            acted.len()
        );
        assert!(
            entered.len() <= 2,
            "{tool} entered {} times: {context}",
            entered.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_at_every_point_of_its_steps_is_replaced_and_each_call_acts_once() {
    let server = start_server();
    let started = Instant::now();
    let (summary, ledger, points, died) = schedule(&server, "dry", None).await;
    assert!(!died);
    check("dry", &summary, &ledger);
    assert!(points > 0, "the dry run passed no point");
    eprintln!("dry run: {points} points in {:?}", started.elapsed());
    // Every `HOOKCHAIN_CRASH_STRIDE`-th point (in CI, every 4th, and the last: a schedule
    // takes some 14 s, mostly Temporal's timeouts for a dead worker; every point, stride 1,
    // takes some 8 min).
    let stride = std::env::var("HOOKCHAIN_CRASH_STRIDE")
        .ok()
        .and_then(|stride| stride.parse().ok())
        .unwrap_or(4)
        .max(1);
    let mut covered = 0;
    let chosen = (0..points)
        .step_by(stride)
        .chain(((points - 1) % stride != 0).then_some(points - 1));
    for at in chosen {
        let key = format!("at-{at}");
        let (summary, ledger, _, died) = schedule(&server, &key, Some(at)).await;
        assert!(died, "{key}: the worker did not die at its point");
        check(&key, &summary, &ledger);
        covered += 1;
    }
    eprintln!(
        "temporal crash schedules: {covered} of {points} points, a worker killed at each, in {:?}",
        started.elapsed()
    );
}
