//! What Temporal adds to a run: the same two-step run (a model call asking for a tool, the tool,
//! the final answer) on the same SQLite store, run in one go by the agent (`Durability::
//! EveryStep`: a checkpoint after every step, as a run that survives its worker keeps) and as a
//! Temporal workflow whose steps are activities (`AgentSteps`, one worker in this process, a dev
//! server of the bench's own on loopback, state in memory).
//!
//! The difference over the two steps is what the engine costs a step: a workflow task and an
//! activity task through the server, their history events, and the client's wait for the result.
//! The tool and the model take no time: what is measured is the plumbing.
//!
//!     cargo bench --bench temporal_step -- --measurement-time 10

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use hookchain::interrupt::SqliteCheckpointer;
use hookchain::prelude::*;
use hookchain::temporal::dev_server::DevServer;
use hookchain::temporal::{AgentSteps, RunClient, RunResult, StepPolicy, StepWorker, connect};
use hookchain::{Durability, EndReason, FnTool, Role};
use serde_json::json;

const TASK_QUEUE: &str = "bench";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// The run: a tool call, then the answer; on `store`.
fn agent(store: SqliteCheckpointer) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        let called = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if called {
            ModelResponse::text("done")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c1", "ping", json!({}))])
        })
    });
    let ping = FnTool::new("ping", "Answers pong.", |_: Empty| async {
        Ok::<_, std::convert::Infallible>("pong")
    });
    Agent::builder(model)
        .tool(ping)
        .checkpointer(store, Durability::EveryStep)
        .build()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("hookchain-bench-temporal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = runtime
        .block_on(async { SqliteCheckpointer::open(dir.join("runs.db")) })
        .unwrap();
    let keys = AtomicUsize::new(0);
    let key = || format!("run-{}", keys.fetch_add(1, Ordering::Relaxed));

    let mut group = c.benchmark_group("two_step_run");
    group.sample_size(20);

    let direct = agent(store.clone());
    group.bench_function("agent_sqlite", |b| {
        b.iter(|| {
            let output = runtime.block_on(direct.run("go")).unwrap();
            assert_eq!(output.end, EndReason::Finished);
        });
    });

    let server = DevServer::start().unwrap_or_else(|error| panic!("{error}"));
    // The worker's future is not `Send`: it runs on a thread of its own, in a runtime of its own.
    let (address, namespace) = (server.address().to_owned(), server.namespace().to_owned());
    let worker_store = store.clone();
    let (ready, stop) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let client = connect(&address, &namespace).await.unwrap();
            let steps = AgentSteps::new(Arc::new(agent(worker_store))).unwrap();
            let worker = StepWorker::new(client, TASK_QUEUE, steps).unwrap();
            ready.send(worker.shutdown_handle()).unwrap();
            worker.run().await.unwrap();
        });
    });
    let shutdown = stop.recv().unwrap();
    let runs = runtime.block_on(async {
        let client = connect(server.address(), server.namespace()).await.unwrap();
        RunClient::new(client, TASK_QUEUE)
    });
    let policy = StepPolicy {
        heartbeat_timeout: Some(Duration::from_secs(10)),
        ..StepPolicy::default()
    };
    group.bench_function("temporal_sqlite", |b| {
        b.iter(|| {
            let key = key();
            runtime.block_on(async {
                runs.start(&key, json!("go"), &policy).await.unwrap();
                let result = runs.result(&key).await.unwrap();
                assert!(matches!(result, RunResult::Completed(_)), "{result:?}");
            });
        });
    });
    group.finish();
    shutdown.shutdown();
    worker.join().unwrap();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
