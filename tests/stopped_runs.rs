//! Runs stopped before they ended, as a service finds them: `Agent::interrupted_run` names the
//! thread's run a checkpointer holds in progress (not a pause, not another run's), and
//! `Agent::settle` waits for a dropped run's key to be let go, so that a process exiting right
//! after leaves nothing held. On tokio's paused clock, with a store slow to let go.

mod support;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, Clock, InMemoryCheckpointer, Lease, Record, Stored,
    Tombstone,
};
use hookchain::prelude::*;
use hookchain::{Checkpoint, Durability, ResumeFrom, Role};
use serde_json::json;
use support::{EffectTool, Effects};

/// How long the slow store takes to let a key go.
const SLOW_RELEASE: Duration = Duration::from_secs(5);

/// An in-memory store that takes [`SLOW_RELEASE`] to let a key go (a database far away).
#[derive(Clone)]
struct SlowRelease(Arc<InMemoryCheckpointer>);

impl Checkpointer for SlowRelease {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        self.0.claim(key, worker, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        self.0.get(key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        self.0.list().await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        self.0.put(key, checkpoint, lease).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        self.0.renew(key, lease).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        tokio::time::sleep(SLOW_RELEASE).await;
        self.0.release(key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        self.0.end(key, lease, tombstone).await
    }
}

/// Calls `act` until a tool result is in the history, then answers.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        Ok(if request.messages.iter().any(|m| m.role == Role::Tool) {
            ModelResponse::text("done")
        } else {
            ModelResponse::tool_calls([ToolCall::new("call_1", "act", json!({}))])
        })
    })
}

fn agent<C: Middleware>(
    store: &SlowRelease,
    chain: C,
    ran: &Effects,
    hang: bool,
) -> Agent<ScriptedModel, C> {
    Agent::builder(model())
        .tool(EffectTool {
            name: "act",
            effects: ran.clone(),
            hang,
        })
        .chain(chain)
        .checkpointer(store.clone(), Durability::EveryStep)
        .build()
        .unwrap()
}

fn slow_store() -> SlowRelease {
    SlowRelease(Arc::new(
        InMemoryCheckpointer::new().with_clock(Clock::tokio()),
    ))
}

#[tokio::test(start_paused = true)]
async fn a_settled_agent_left_its_stopped_run_free_to_continue() {
    let store = slow_store();
    let ran = Effects::memory();
    let first = agent(&store, (), &ran, true);
    let mut thread = first.thread();
    assert!(first.interrupted_run(&thread).await.unwrap().is_none());
    let stopped =
        tokio::time::timeout(Duration::from_secs(1), first.run_in(&mut thread, "go")).await;
    assert!(stopped.is_err(), "the run ended");

    let before = tokio::time::Instant::now();
    first.settle().await;
    assert!(
        before.elapsed() >= SLOW_RELEASE,
        "settled before the release"
    );
    let key = thread.id().as_str().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.clone(), None, false)],
        "the key is let go"
    );
    let run = first.interrupted_run(&thread).await.unwrap();
    let run = run.expect("the stopped run is found");
    assert!(!run.is_pause());
    assert_eq!(run.thread(), Some(thread.id()));

    let second = agent(&store, (), &ran, false);
    let output = second
        .resume_in(&mut thread, ResumeFrom::stored(&key), [])
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(thread.runs(), 1);
    assert!(
        second.interrupted_run(&thread).await.unwrap().is_none(),
        "it ended"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pause_and_another_threads_run_are_not_stopped_runs() {
    let store = slow_store();
    let ran = Effects::memory();
    let gated = HumanInTheLoop::new().interrupt_on("act", ToolPolicy::always());
    let agent = agent(&store, gated, &ran, false);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "go").await.unwrap();
    assert!(paused.checkpoint.is_some());
    assert!(
        agent.interrupted_run(&thread).await.unwrap().is_none(),
        "a pause"
    );

    // The stored run is this thread's, not another's of the same id and an earlier run.
    let mut other = agent.thread();
    assert!(agent.interrupted_run(&other).await.unwrap().is_none());
    let _ = agent.run_in(&mut other, "go").await.unwrap();
    assert!(agent.interrupted_run(&other).await.unwrap().is_none());

    // Without a checkpointer there is nothing to find, and nothing to wait for.
    let plain = Agent::builder(model()).build().unwrap();
    assert!(
        plain
            .interrupted_run(&plain.thread())
            .await
            .unwrap()
            .is_none()
    );
    plain.settle().await;
}
