//! The cost of a step checkpoint: one `Checkpointer::put` of the checkpoint of a mid-size run
//! (a thread of 24 turns, then a 25th that stops before its model call: 49 messages of a few
//! hundred bytes, paused before its model call with the request pending), per store: in memory, JSON files,
//! SQLite, Postgres (a server of the bench's own, started as the tests start theirs, with its
//! defaults: `fsync` and `synchronous_commit` on). The checkpoint is made a step checkpoint
//! (no pending interrupt), so every put is by the worker holding the key, as a run in progress
//! writes after each step. `encode` is `Checkpoint::to_json` alone, the part every store pays.
//!
//! Each put is driven by a current-thread tokio runtime's `block_on` (the SQLite and file
//! stores run their I/O on its blocking threads, the Postgres store's connections are tasks of
//! it); every store writes to the same disk and syncs what it writes.
//!
//!     cargo bench --bench checkpoint_store -- --measurement-time 3

#[path = "../../tests/pg/mod.rs"]
mod pg;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hookchain::interrupt::{
    Checkpointer, Claim, FileCheckpointer, InMemoryCheckpointer, PostgresCheckpointer,
    SqliteCheckpointer,
};
use hookchain::prelude::*;
use hookchain::{Checkpoint, EndReason, chain, hook};
use serde_json::json;

/// The turns of the thread before the one that stops.
const TURNS: usize = 24;

/// Stops the run once the history holds the earlier turns and the new input.
#[hook(before_model)]
fn stop_at_the_last_turn(cx: &mut Context, request: &mut ModelRequest) -> Flow {
    if request.messages.len() > 2 * TURNS && cx.resume_value().is_none() {
        Flow::interrupt(json!("go on?"))
    } else {
        Flow::Continue
    }
}

/// A sentence of about `bytes` bytes for turn `turn`.
fn text(turn: usize, who: &str, bytes: usize) -> String {
    let mut text = format!("Turn {turn}, {who}: ");
    while text.len() < bytes {
        text.push_str("the quick brown fox jumps over the lazy dog, ");
    }
    text
}

/// The step checkpoint of a mid-size run, made by a scripted run.
fn mid_size_checkpoint(runtime: &tokio::runtime::Runtime) -> Checkpoint {
    let model = ScriptedModel::from_rule(|request| {
        Ok(ModelResponse::text(text(
            request.messages.len(),
            "assistant",
            400,
        )))
    });
    let agent = Agent::builder(model)
        .chain(chain![stop_at_the_last_turn])
        .build()
        .unwrap();
    let paused = runtime.block_on(async {
        let mut thread = agent.thread();
        for turn in 0..TURNS {
            let output = agent
                .run_in(&mut thread, text(turn, "user", 250))
                .await
                .expect("a turn");
            assert_eq!(output.end, EndReason::Finished);
        }
        agent
            .run_in(&mut thread, text(TURNS, "user", 250))
            .await
            .expect("the last turn")
    });
    assert_eq!(paused.end, EndReason::Interrupted);
    let checkpoint = paused.checkpoint.expect("a paused run has a checkpoint");
    assert_eq!(checkpoint.messages().len(), 2 * TURNS + 1);
    // A step of a run in progress: no pending interrupt.
    let mut json: serde_json::Value =
        serde_json::from_str(&checkpoint.to_json().expect("encode")).expect("decode");
    json["interrupts"] = json!([]);
    let step = Checkpoint::from_json(&json.to_string()).expect("a step checkpoint");
    assert!(!step.is_pause());
    step
}

fn put_one(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    runtime: &tokio::runtime::Runtime,
    store: &impl Checkpointer,
    checkpoint: &Checkpoint,
) {
    // The key is claimed once; the measured puts replace its step, as a run's do.
    let claim = runtime.block_on(store.claim("run-1", "worker-1", Duration::from_secs(3600)));
    let Ok(Claim::Granted { lease, .. }) = claim else {
        panic!("the key is free");
    };
    c.bench_function(BenchmarkId::new("put", name), |b| {
        b.iter(|| {
            runtime
                .block_on(store.put("run-1", black_box(checkpoint), &lease))
                .expect("put")
        })
    });
}

fn checkpoint_store(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let checkpoint = mid_size_checkpoint(&runtime);
    let size = checkpoint.to_json().expect("encode").len();
    let history = serde_json::to_string(checkpoint.messages())
        .expect("encode")
        .len();
    println!(
        "checkpoint: {} messages, {size} bytes of JSON for {history} bytes of history ({:.3}x)",
        checkpoint.messages().len(),
        size as f64 / history as f64
    );

    let dir = std::env::temp_dir().join(format!("hookchain-bench-stores-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");

    let mut group = c.benchmark_group("checkpoint_store");
    group.bench_function(BenchmarkId::new("encode", "to_json"), |b| {
        b.iter(|| black_box(&checkpoint).to_json().expect("encode"))
    });

    let memory = InMemoryCheckpointer::new();
    put_one(&mut group, "memory", &runtime, &memory, &checkpoint);

    let files = FileCheckpointer::new(dir.join("files"));
    put_one(&mut group, "file", &runtime, &files, &checkpoint);

    let sqlite = SqliteCheckpointer::open(dir.join("checkpoints.db")).expect("open SQLite");
    put_one(&mut group, "sqlite", &runtime, &sqlite, &checkpoint);

    let server = pg::Postgres::start();
    let postgres = runtime
        .block_on(PostgresCheckpointer::connect(&server.config()))
        .expect("connect to Postgres");
    put_one(&mut group, "postgres", &runtime, &postgres, &checkpoint);

    group.finish();
    drop(postgres);
    drop(server);
    drop(sqlite);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, checkpoint_store);
criterion_main!(benches);
