//! "A worker process killed (SIGKILL) in the middle of a run, resumed by another process: the
//! history is intact and no completed tool call runs twice."
//!
//! The test spawns its own binary (`current_exe() --exact <name>`), with
//! `HOOKCHAIN_KILL_PHASE` selecting what the child does:
//!
//! - `run`: worker `worker-1` runs an agent with durability `EveryStep` in a thread. The model
//!   calls `fast` and `slow` at once; `fast` completes, `slow` records that it started and
//!   never returns. The parent waits until the store holds the step checkpoint with `fast`'s
//!   result, then kills the child with SIGKILL.
//! - `recover`: worker `worker-2` resumes what the store holds (`ResumeFrom::stored`) on the
//!   thread as the application had stored it before the run: refused while the dead worker's
//!   lease lasts (nobody releases anything), then resumed once it expired; `slow` now completes.
//!
//! Each tool appends `<tool> <idempotency key>` to a side-effect file each time it runs, so the
//! parent can count: `fast` once, `slow` twice with the same key (it was in flight).
//!
//! The store is a `FileCheckpointer`, and with their features SQLite and a Postgres server the
//! test starts itself.

#[cfg(feature = "postgres")]
mod pg;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookchain::interrupt::{
    CheckpointError, Checkpointer, DynCheckpointer, FileCheckpointer, Position, Record, Stored,
};
use hookchain::prelude::*;
use hookchain::{Durability, EndReason, ResumeFrom, Role, Thread, ThreadId};
use serde_json::json;
use support::{EffectTool, Effects};

const PHASE: &str = "HOOKCHAIN_KILL_PHASE";
const DIR: &str = "HOOKCHAIN_KILL_DIR";
const STORE: &str = "HOOKCHAIN_KILL_STORE";
const THREAD: &str = "conversation-7";

/// How long the workers' leases last: the dead worker's run is taken over this long after its
/// last renewal.
const LEASE: Duration = Duration::from_secs(1);

/// The agent of both phases; `slow` hangs in the first.
fn agent(
    dir: &Path,
    store: Arc<dyn DynCheckpointer>,
    worker: &str,
    hang: bool,
) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("both done")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_fast", "fast", json!({})),
                ToolCall::new("call_slow", "slow", json!({})),
            ])
        })
    });
    Agent::builder(model)
        .tool(EffectTool {
            name: "fast",
            effects: Effects::file(dir),
            hang: false,
        })
        .tool(EffectTool {
            name: "slow",
            effects: Effects::file(dir),
            hang,
        })
        .checkpointer(store, Durability::EveryStep)
        .worker(worker)
        .lease(LEASE)
        .build()
        .unwrap()
}

/// The store `store` names (`file`, `sqlite`, or `postgres:<config>`).
async fn open(store: &str, dir: &Path) -> Arc<dyn DynCheckpointer> {
    #[cfg(feature = "postgres")]
    if let Some(config) = store.strip_prefix("postgres:") {
        return Arc::new(
            hookchain::interrupt::PostgresCheckpointer::connect(config)
                .await
                .expect("connect to the test's Postgres"),
        );
    }
    match store {
        "file" => Arc::new(FileCheckpointer::new(dir.join("store"))),
        #[cfg(feature = "sqlite")]
        "sqlite" => Arc::new(
            hookchain::interrupt::SqliteCheckpointer::open(dir.join("store.db"))
                .expect("open the SQLite store"),
        ),
        other => panic!("unknown store {other}"),
    }
}

/// Runs `phase` with the store `store`.
async fn child(phase: &str, store: &str, dir: &Path) {
    let store = open(store, dir).await;
    let thread_file = dir.join("thread.json");
    match phase {
        "run" => {
            // The application keeps its thread; this run never gets to store it again.
            let mut thread: Thread<()> = Thread::with_id(ThreadId::new(THREAD));
            std::fs::write(&thread_file, serde_json::to_string(&thread).unwrap()).unwrap();
            let agent = agent(dir, store.clone(), "worker-1", true);
            let _ = agent.run_in(&mut thread, "Do both.").await;
            unreachable!("the run never ends: the parent kills this process");
        }
        "recover" => {
            let mut thread: Thread<()> =
                serde_json::from_str(&std::fs::read_to_string(&thread_file).unwrap()).unwrap();
            let agent = agent(dir, store.clone(), "worker-2", false);
            // Nobody releases the dead worker's key: it is taken once its lease expired.
            let mut refused = 0;
            let output = loop {
                match agent
                    .resume_in(&mut thread, ResumeFrom::stored(THREAD), [])
                    .await
                {
                    Err(Error::Checkpoint(error)) if matches!(*error, CheckpointError::Claimed { ref by, .. } if by == "worker-1") =>
                    {
                        refused += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    done => break done.unwrap(),
                }
            };
            assert_eq!(output.end, EndReason::Finished);
            std::fs::write(&thread_file, serde_json::to_string(&thread).unwrap()).unwrap();
            let stored = store.list().await.unwrap();
            assert_eq!(
                stored,
                [Stored::new(THREAD, None, true)],
                "the run's tombstone, free"
            );
            println!("phase recover: done (refused {refused} times while the lease lasted)");
        }
        other => panic!("unknown phase {other}"),
    }
}

fn spawn(phase: &str, store: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_killed_worker_is_resumed_by_another_process",
            "--nocapture",
        ])
        .args(["--test-threads=1"])
        .env(PHASE, phase)
        .env(STORE, store)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the store holds the run's step checkpoint with `fast`'s result and `slow` has
/// started: the moment to kill the worker.
async fn wait_for_the_step(store: &str, dir: &Path, worker: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = worker.try_wait().unwrap() {
            panic!("the worker ended on its own: {status}");
        }
        let started = !Effects::file(dir).of("slow").is_empty();
        if started && fast_result_stored(store, dir).await {
            return;
        }
        assert!(Instant::now() < deadline, "the worker never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn fast_result_stored(store: &str, dir: &Path) -> bool {
    let stored = open(store, dir).await.get(THREAD).await;
    matches!(
        stored,
        Ok(Some(Record::Checkpoint(checkpoint)))
            if matches!(checkpoint.position(), Position::Tools { results, .. } if results[0].is_some())
    )
}

/// Kills a worker mid-run and recovers its run in another process, with the store `store`
/// (`label` names its directory).
async fn kill_and_recover(label: &str, store: &str) {
    let dir = support::temp_dir("durable_kill", label);

    let mut worker = spawn("run", store, &dir);
    wait_for_the_step(store, &dir, &mut worker).await;
    worker.kill().unwrap(); // SIGKILL
    let status = worker.wait().unwrap();
    assert!(!status.success());

    let recovery = spawn("recover", store, &dir).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&recovery.stdout);
    assert!(
        recovery.status.success() && stdout.contains("phase recover: done"),
        "recovery failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&recovery.stderr)
    );

    // No completed call ran twice; the call in flight ran again with the same key.
    let effects = Effects::file(&dir);
    let (fast, slow) = (effects.of("fast"), effects.of("slow"));
    assert_eq!(fast.len(), 1, "{:?}", effects.lines());
    assert_eq!(slow.len(), 2, "{:?}", effects.lines());
    assert_eq!(slow[0], slow[1]);
    assert!(slow[0].ends_with(":call_slow"), "{}", slow[0]);

    // The history is intact: the input, the calls, one result each, the answer.
    let thread: Thread<()> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("thread.json")).unwrap()).unwrap();
    let roles: Vec<Role> = thread.messages().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Assistant
        ]
    );
    assert_eq!(thread.messages()[0].content.as_text(), Some("Do both."));
    assert_eq!(thread.messages()[2].content.as_text(), Some("fast done"));
    assert_eq!(thread.messages()[3].content.as_text(), Some("slow done"));
    assert_eq!(thread.messages()[4].content.as_text(), Some("both done"));
    assert_eq!(thread.runs(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_is_resumed_by_another_process() {
    if let Some(phase) = std::env::var_os(PHASE) {
        let dir = PathBuf::from(std::env::var_os(DIR).unwrap());
        let store = std::env::var(STORE).unwrap();
        child(phase.to_str().unwrap(), &store, &dir).await;
        return;
    }
    kill_and_recover("file", "file").await;
    #[cfg(feature = "sqlite")]
    kill_and_recover("sqlite", "sqlite").await;
    #[cfg(feature = "postgres")]
    {
        let server = pg::Postgres::start();
        kill_and_recover("postgres", &format!("postgres:{}", server.config())).await;
    }
}
