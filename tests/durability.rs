//! Durable runs in one process: what an agent writes to its checkpointer in each durability
//! mode; a run whose worker dies mid-way (its future forgotten, nothing released) resumed by
//! another worker once its lease expired; a dropped run letting its key go at once; and a
//! stored run resumed exactly once, whoever retries, duplicates or replays its resume — no
//! completed tool call runs again, a call in flight runs again with the same idempotency key.
//! (`durable_kill.rs` kills a real process.)

mod store_rules;
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, Clock, InMemoryCheckpointer, Lease, Position, Record,
    ResumeError, Stored, Tombstone,
};
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{Checkpoint, Durability, EndReason, InterruptId, ResumeFrom, Role, RunOutput};
use serde_json::json;
use support::{EffectTool, Effects, approve_all, assert_no_dangling};

/// The agents' lease: the tests advance tokio's paused clock past it.
const LEASE: Duration = Duration::from_secs(30);

/// A store on tokio's clock (paused in these tests).
fn store() -> Arc<InMemoryCheckpointer> {
    Arc::new(InMemoryCheckpointer::new().with_clock(Clock::tokio()))
}

/// The model: calls `fast` and `slow` at once, then answers.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("all done")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_fast", "fast", json!({})),
                ToolCall::new("call_slow", "slow", json!({})),
            ])
        })
    })
}

/// An agent of worker `worker` keeping its runs in `store` as `durability` says; its `slow`
/// tool hangs if `hang`.
fn agent(
    store: &Arc<InMemoryCheckpointer>,
    durability: Durability,
    worker: &str,
    ran: &Effects,
    hang: bool,
) -> Agent<ScriptedModel> {
    Agent::builder(model())
        .tool(EffectTool {
            name: "fast",
            effects: ran.clone(),
            hang: false,
        })
        .tool(EffectTool {
            name: "slow",
            effects: ran.clone(),
            hang,
        })
        .tool(AskUser)
        .checkpointer(store.clone(), durability)
        .worker(worker)
        .lease(LEASE)
        .build()
        .unwrap()
}

/// Polls `run` until every task is idle (its `slow` call hangs), then forgets it: its worker
/// died there, nothing of it released.
async fn dies_while_it_hangs<F: std::future::Future>(run: F) {
    let mut run = Box::pin(run);
    let polled = tokio::time::timeout(Duration::from_millis(1), &mut run).await;
    assert!(polled.is_err(), "the run ended");
    std::mem::forget(run);
}

/// Lets the tasks the runtime has (a dropped run's release) run.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

fn is_claimed(error: &Error, holder: &str) -> bool {
    matches!(error, Error::Checkpoint(error) if matches!(&**error, CheckpointError::Claimed { by, .. } if by == holder))
}

fn resume_error(error: Error) -> ResumeError {
    match error {
        Error::Resume(error) => *error,
        other => panic!("not a resume error: {other:?}"),
    }
}

/// "A run whose process dies resumes from its last completed step, with no operator step": the
/// dead worker's key is held until its lease expires, then another worker resumes it; every
/// completed tool call never runs again; the one in flight runs again with the same
/// idempotency key.
#[tokio::test(start_paused = true)]
async fn a_dead_workers_run_is_taken_over_once_its_lease_expired() {
    let store = store();
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let mut thread = first.thread();
    let before = thread.clone();
    dies_while_it_hangs(first.run_in(&mut thread, "go")).await;
    assert_eq!(
        thread, before,
        "a run that never ended leaves its thread as it was"
    );

    // The key is the thread's, still leased to the dead worker; it holds the model's answer
    // and the completed call.
    let key = thread.id().as_str().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.clone(), Some("worker-1".to_owned()), false)]
    );
    let Some(Record::Checkpoint(checkpoint)) = store.get(&key).await.unwrap() else {
        panic!("a step is stored");
    };
    let Position::Tools { results, .. } = checkpoint.position() else {
        panic!("{:?}", checkpoint.position());
    };
    assert_eq!(results[0].as_ref().unwrap().content, "fast done");
    assert!(results[1].is_none());

    let second = agent(&store, Durability::EveryStep, "worker-2", &ran, false);
    let refused = second
        .resume_in(&mut thread, ResumeFrom::stored(&key), [])
        .await
        .unwrap_err();
    assert!(is_claimed(&refused, "worker-1"), "{refused:?}");
    tokio::time::advance(LEASE).await;
    let done = second
        .resume_in(&mut thread, ResumeFrom::stored(&key), [])
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(
        second.model().requests().len(),
        1,
        "the model's first answer was kept"
    );
    assert_eq!(ran.of("fast").len(), 1, "a completed call ran again");
    let slow = ran.of("slow");
    assert_eq!(slow.len(), 2, "the call in flight runs again");
    assert_eq!(slow[0], slow[1], "with the same idempotency key");
    // The thread has the whole run, valid for any provider; the store the run's tombstone.
    assert_eq!(thread.messages().len(), 5);
    assert_eq!(thread.runs(), 1);
    assert_no_dangling(thread.messages());
    assert_eq!(store.list().await.unwrap(), [Stored::new(key, None, true)]);
}

/// A run whose future is dropped (its client went away, it was cancelled) lets its key go at
/// once: another worker resumes it without waiting for the lease, and the thread runs again.
#[tokio::test(start_paused = true)]
async fn a_dropped_run_releases_its_key() {
    let store = store();
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let mut thread = first.thread();
    let stopped =
        tokio::time::timeout(Duration::from_secs(1), first.run_in(&mut thread, "go")).await;
    assert!(stopped.is_err());
    settle().await;
    let key = thread.id().as_str().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.clone(), None, false)],
        "released"
    );
    let second = agent(&store, Durability::EveryStep, "worker-2", &ran, false);
    let done = second
        .resume_in(&mut thread, ResumeFrom::stored(&key), [])
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
}

/// A cancelled run of `Pauses` (which stores nothing until it pauses) lets its thread's key go
/// too: the thread's next run is not refused.
#[tokio::test(start_paused = true)]
async fn a_cancelled_run_leaves_its_thread_free() {
    let store = store();
    let ran = Effects::memory();
    let hanging = agent(&store, Durability::Pauses, "worker-1", &ran, true);
    let mut thread = hanging.thread();
    let stopped =
        tokio::time::timeout(Duration::from_secs(1), hanging.run_in(&mut thread, "go")).await;
    assert!(stopped.is_err());
    settle().await;
    assert_eq!(
        store.list().await.unwrap(),
        [],
        "nothing stored, nothing held"
    );
    let working = agent(&store, Durability::Pauses, "worker-1", &ran, false);
    let done = working.run_in(&mut thread, "go").await.unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
}

/// Outside a thread the run's id is the key.
#[tokio::test(start_paused = true)]
async fn a_run_outside_a_thread_is_kept_under_its_run_id() {
    let store = store();
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    dies_while_it_hangs(first.run("go")).await;
    let key = store.list().await.unwrap().remove(0).key;
    let Some(Record::Checkpoint(checkpoint)) = store.get(&key).await.unwrap() else {
        panic!("stored");
    };
    assert_eq!(checkpoint.run_id(), key);
    tokio::time::advance(LEASE).await;
    let restarted = agent(&store, Durability::EveryStep, "worker-1", &ran, false);
    let done = restarted
        .resume(ResumeFrom::stored(&key), [])
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
}

/// A checkpoint's `key()` is the key its store holds it under: the thread's id for a run in a
/// thread, else the run's id — for a pause and for a step alike.
#[tokio::test(start_paused = true)]
async fn a_checkpoint_names_the_key_it_is_stored_under() {
    let store = store();
    let ran = Effects::memory();
    let asking = Agent::builder(ScriptedModel::from_rule(|_| {
        Ok(ModelResponse::tool_calls([ToolCall::new(
            "q",
            "ask_user",
            json!({ "question": "?" }),
        )]))
    }))
    .tool(AskUser)
    .checkpointer(store.clone(), Durability::Pauses)
    .build()
    .unwrap();
    let alone = asking.run("hi").await.unwrap().checkpoint.unwrap();
    let mut thread = asking.thread();
    let in_thread = asking
        .run_in(&mut thread, "hi")
        .await
        .unwrap()
        .checkpoint
        .unwrap();
    assert_eq!(alone.key(), alone.run_id());
    assert_eq!(in_thread.key(), thread.id().as_str());
    assert_ne!(in_thread.key(), in_thread.run_id());
    for checkpoint in [&alone, &in_thread] {
        assert_eq!(
            store.get(checkpoint.key()).await.unwrap(),
            Some(Record::Checkpoint(checkpoint.clone()))
        );
    }

    // A step checkpoint of a run whose worker died: the same rule.
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let mut thread = first.thread();
    dies_while_it_hangs(first.run_in(&mut thread, "go")).await;
    let Some(Record::Checkpoint(step)) = store.get(thread.id().as_str()).await.unwrap() else {
        panic!("the step is stored under the thread's id");
    };
    assert!(!step.is_pause());
    assert_eq!(step.key(), thread.id().as_str());
}

/// `Pauses` writes a paused run's checkpoint, its key free for whoever has the answers;
/// nothing between steps; the run resumed by another worker ends, and leaves its tombstone.
/// A run that never paused leaves nothing.
#[tokio::test(start_paused = true)]
async fn pauses_are_written_free_and_the_end_leaves_a_tombstone() {
    let store = store();
    let asking = |worker: &str| {
        Agent::builder(ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("q", "ask_user", json!({ "question": "?" }))]),
            ModelResponse::text("thanks"),
        ]))
        .tool(AskUser)
        .checkpointer(store.clone(), Durability::Pauses)
        .worker(worker)
        .build()
        .unwrap()
    };
    let asking = asking("worker");
    let paused = asking.run("hi").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let checkpoint = paused.checkpoint.unwrap();
    let key = checkpoint.run_id().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.clone(), None, false)]
    );
    assert_eq!(
        store.get(&key).await.unwrap(),
        Some(Record::Checkpoint(checkpoint.clone()))
    );

    let answers = answer_all(&checkpoint, json!("Ada"));
    let done = asking.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("thanks"));
    let Some(Record::Ended(tombstone)) = store.get(&key).await.unwrap() else {
        panic!("a tombstone");
    };
    assert_eq!(
        (
            tombstone.run_id.as_str(),
            tombstone.how.as_str(),
            tombstone.by.as_str()
        ),
        (key.as_str(), "finished", "worker")
    );

    let plain = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .checkpointer(store.clone(), Durability::Pauses)
        .build()
        .unwrap();
    plain.run("hi").await.unwrap();
    assert_eq!(
        store.list().await.unwrap().len(),
        1,
        "a run that never paused leaves nothing"
    );
}

/// An answer for every pending interrupt.
fn answer_all(
    checkpoint: &Checkpoint,
    answer: serde_json::Value,
) -> Vec<(InterruptId, serde_json::Value)> {
    checkpoint
        .pending()
        .map(|id| (id.clone(), answer.clone()))
        .collect()
}

/// `Never` writes nothing, even for a pause (the checkpoint is in the output only).
#[tokio::test]
async fn never_writes_nothing() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let asking = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("q", "ask_user", json!({ "question": "?" })),
    ])]))
    .tool(AskUser)
    .checkpointer(store.clone(), Durability::Never)
    .build()
    .unwrap();
    let paused = asking.run("hi").await.unwrap();
    assert!(paused.checkpoint.is_some());
    assert_eq!(store.list().await.unwrap(), []);
}

/// Every step of a run is written as the run goes: before each model call, when the model's
/// answer is kept, as each tool call completes; the key leased by the worker throughout.
#[tokio::test]
async fn every_step_is_written_as_the_run_goes() {
    /// Records the position of the run's checkpoint each time the model is called.
    #[derive(Clone)]
    struct Watch(Arc<InMemoryCheckpointer>, Arc<Mutex<Vec<String>>>);
    let store = Arc::new(InMemoryCheckpointer::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watch = Watch(store.clone(), seen.clone());
    let model = ScriptedModel::from_rule(move |request| {
        let Watch(store, seen) = &watch;
        let stored = futures::executor::block_on(store.list()).unwrap();
        let Some(Record::Checkpoint(checkpoint)) =
            futures::executor::block_on(store.get(&stored[0].key)).unwrap()
        else {
            panic!("a step is stored");
        };
        seen.lock().unwrap().push(format!(
            "{:?} step {} held by {:?}",
            std::mem::discriminant(checkpoint.position())
                == std::mem::discriminant(&Position::Step),
            checkpoint.step(),
            stored[0].held_by
        ));
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("done")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c", "fast", json!({}))])
        })
    });
    let ran = Effects::memory();
    let agent = Agent::builder(model)
        .tool(EffectTool {
            name: "fast",
            effects: ran.clone(),
            hang: false,
        })
        .checkpointer(store.clone(), Durability::EveryStep)
        .worker("w")
        .build()
        .unwrap();
    let done = agent.run("go").await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    // Before each model call: a step checkpoint of the step before (held by the worker).
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "true step 0 held by Some(\"w\")",
            "true step 1 held by Some(\"w\")"
        ]
    );
    assert!(store.list().await.unwrap()[0].ended);
}

/// A run on a key another worker's live lease holds is refused before anything runs, and the
/// holder's checkpoint is left as it was.
#[tokio::test(start_paused = true)]
async fn a_run_on_a_key_another_worker_holds_is_refused() {
    let store = store();
    let ran = Effects::memory();
    let agent = agent(&store, Durability::EveryStep, "intruder", &ran, false);
    let mut thread = agent.thread();
    let holder = store_rules::step("the owner's").await;
    store_rules::store_as(&*store, thread.id().as_str(), &holder, "owner").await;
    let error = agent.run_in(&mut thread, "go").await.unwrap_err();
    assert!(is_claimed(&error, "owner"), "{error:?}");
    assert!(ran.lines().is_empty());
    assert!(agent.model().requests().is_empty());
    assert_eq!(
        store.get(thread.id().as_str()).await.unwrap(),
        Some(Record::Checkpoint(Box::new(holder)))
    );
}

/// A run that fails releases its key and leaves its last checkpoint: another worker resumes it
/// from there at once (the completed call does not run again).
#[tokio::test(start_paused = true)]
async fn a_failed_run_leaves_its_last_step_for_another_worker() {
    let store = store();
    let ran = Effects::memory();
    let failing = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("c", "fast", json!({})),
    ])]))
    .tool(EffectTool {
        name: "fast",
        effects: ran.clone(),
        hang: false,
    })
    .checkpointer(store.clone(), Durability::EveryStep)
    .worker("w1")
    .build()
    .unwrap();
    // The script has no second answer: the second model call fails.
    let error = failing.run("go").await.unwrap_err();
    assert!(matches!(error, Error::Model(_)), "{error:?}");
    let stored = store.list().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].held_by, None, "released");

    let working = agent(&store, Durability::EveryStep, "w2", &ran, false);
    let done = working
        .resume(ResumeFrom::stored(&stored[0].key), [])
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
}

/// A streamed run keeps its steps as an unstreamed one: a dropped stream leaves its last step
/// in the store, free, and another worker finishes it.
#[tokio::test(start_paused = true)]
async fn a_streamed_run_keeps_its_steps() {
    use futures::StreamExt;
    let store = store();
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let mut thread = first.thread();
    {
        let mut stream = first.stream_in(&mut thread, "go");
        let consumed = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(event) = stream.next().await {
                event.unwrap();
            }
        })
        .await;
        assert!(consumed.is_err(), "the stream ended");
    }
    settle().await;
    let key = thread.id().as_str().to_owned();
    let second = agent(&store, Durability::EveryStep, "worker-2", &ran, false);
    let done = second
        .resume_in(&mut thread, ResumeFrom::stored(&key), [])
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
}

/// A long tool call outlives many leases: the run renews its lease while it waits, so no other
/// worker may take the run over meanwhile.
#[tokio::test(start_paused = true)]
async fn a_running_worker_renews_its_lease() {
    /// Sleeps five leases long, then answers.
    struct Slow;
    impl hookchain::Tool for Slow {
        fn spec(&self) -> hookchain::ToolSpec {
            hookchain::ToolSpec::new("fast", "Takes long.", json!({ "type": "object" }))
        }
        async fn call(
            &self,
            _: ToolContext<'_>,
            _: serde_json::Value,
        ) -> Result<hookchain::Content, hookchain::ToolError> {
            tokio::time::sleep(LEASE * 5).await;
            Ok("slept".into())
        }
    }
    let store = store();
    let ran = Effects::memory();
    let slow = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c", "fast", json!({}))]),
        ModelResponse::text("rested"),
    ]))
    .tool(Slow)
    .checkpointer(store.clone(), Durability::EveryStep)
    .worker("w1")
    .lease(LEASE)
    .build()
    .unwrap();
    let other = agent(&store, Durability::EveryStep, "w2", &ran, false);
    let run = slow.run("go");
    let watch = async {
        for _ in 0..8 {
            tokio::time::sleep(LEASE / 2).await;
            let key = store.list().await.unwrap().remove(0).key;
            let refused = other
                .resume(ResumeFrom::stored(&key), [])
                .await
                .unwrap_err();
            assert!(is_claimed(&refused, "w1"), "{refused:?}");
        }
    };
    let (done, ()) = futures::join!(run, watch);
    assert_eq!(done.unwrap().text().as_deref(), Some("rested"));
    assert!(ran.lines().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Exactly once at the seams: approvals retried, duplicated, replayed
// ---------------------------------------------------------------------------------------------

/// An agent whose model calls `pay` and `notify` at once, both needing an approval
/// (`HumanInTheLoop`); `notify` hangs if `hang` (the client gives up while it waits).
fn approving(
    store: &Arc<InMemoryCheckpointer>,
    durability: Durability,
    worker: &str,
    ran: &Effects,
    hang: bool,
) -> Agent<ScriptedModel, HumanInTheLoop> {
    let model = ScriptedModel::from_rule(|request| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("paid")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_pay", "pay", json!({})),
                ToolCall::new("call_notify", "notify", json!({})),
            ])
        })
    });
    Agent::builder(model)
        .tool(EffectTool {
            name: "pay",
            effects: ran.clone(),
            hang: false,
        })
        .tool(EffectTool {
            name: "notify",
            effects: ran.clone(),
            hang,
        })
        .chain(
            HumanInTheLoop::new()
                .interrupt_on("pay", ToolPolicy::always())
                .interrupt_on("notify", ToolPolicy::always()),
        )
        .checkpointer(store.clone(), durability)
        .worker(worker)
        .lease(LEASE)
        .build()
        .unwrap()
}

/// Pauses a run of `approving` for its approval: the checkpoint, stored.
async fn paused_for_approval(
    store: &Arc<InMemoryCheckpointer>,
    durability: Durability,
) -> Checkpoint {
    let agent = approving(store, durability, "api", &Effects::memory(), false);
    let paused = agent.run("pay the bill").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    *paused.checkpoint.unwrap()
}

/// "A client timed out during a resume, the run stopped after the approved tool ran, and the
/// retried approval ran it again" — in `Pauses` and in `EveryStep`: the retry of the same
/// approval is refused (the run went on past that pause), the run is finished from what the
/// store holds, and `pay` ran once.
#[tokio::test(start_paused = true)]
async fn a_retried_approval_after_a_client_timeout_runs_nothing_twice() {
    for durability in [Durability::Pauses, Durability::EveryStep] {
        let store = store();
        let ran = Effects::memory();
        let checkpoint = paused_for_approval(&store, durability).await;
        let answers = approve_all(&checkpoint);
        let first = approving(&store, durability, "web-1", &ran, true);
        let timed_out = tokio::time::timeout(
            Duration::from_secs(5),
            first.resume(checkpoint.clone(), answers.clone()),
        )
        .await;
        assert!(timed_out.is_err(), "{durability:?}: the client gave up");
        settle().await;
        assert_eq!(ran.of("pay").len(), 1);

        let retry = approving(&store, durability, "web-2", &ran, false);
        let refused = retry
            .resume(checkpoint.clone(), answers.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(resume_error(refused), ResumeError::Superseded { ref checkpoint, .. } if checkpoint == checkpoint.as_str()),
            "{durability:?}"
        );
        let done = retry
            .resume(ResumeFrom::stored(checkpoint.run_id()), [])
            .await
            .unwrap();
        assert_eq!(done.text().as_deref(), Some("paid"));
        assert_eq!(ran.of("pay").len(), 1, "{durability:?}: pay ran twice");
        let notify = ran.of("notify");
        assert_eq!(
            notify.len(),
            2,
            "{durability:?}: the call in flight runs again"
        );
        assert_eq!(notify[0], notify[1], "{durability:?}: with the same key");

        // And once more after the end: the tombstone refuses it.
        let replayed = retry.resume(checkpoint, answers).await.unwrap_err();
        assert!(
            matches!(resume_error(replayed), ResumeError::Ended { .. }),
            "{durability:?}"
        );
        assert_eq!(ran.of("pay").len(), 1);
    }
}

/// "Resuming the same pause checkpoint after its run finished re-ran the approved payment":
/// refused with the run's tombstone while it is kept, and as not stored after it — never run.
#[tokio::test(start_paused = true)]
async fn a_finished_runs_checkpoint_is_refused() {
    let store = store();
    let ran = Effects::memory();
    let checkpoint = paused_for_approval(&store, Durability::Pauses).await;
    let agent = approving(&store, Durability::Pauses, "web", &ran, false);
    let done = agent
        .resume(checkpoint.clone(), approve_all(&checkpoint))
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(ran.of("pay").len(), 1);

    let refused = resume_error(
        agent
            .resume(checkpoint.clone(), approve_all(&checkpoint))
            .await
            .unwrap_err(),
    );
    let ResumeError::Ended { tombstone, .. } = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(
        (
            tombstone.run_id.as_str(),
            tombstone.by.as_str(),
            tombstone.how.as_str()
        ),
        (checkpoint.run_id(), "web", "finished")
    );
    assert_eq!(tombstone.checkpoint, checkpoint.id());
    assert!(refused.to_string().contains("run ended"), "{refused}");

    tokio::time::advance(Duration::from_secs(24 * 60 * 60)).await;
    let refused = resume_error(
        agent
            .resume(checkpoint.clone(), approve_all(&checkpoint))
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(refused, ResumeError::NotStored { .. }),
        "{refused:?}"
    );
    assert_eq!(ran.of("pay").len(), 1);
    assert!(store.list().await.unwrap().is_empty());
}

/// "Two workers that each received the same approval both ran it": of two resumes at once,
/// one runs it, the other is refused.
#[tokio::test(start_paused = true)]
async fn two_workers_with_one_approval_run_it_once() {
    let store = store();
    let ran = Effects::memory();
    let checkpoint = paused_for_approval(&store, Durability::Pauses).await;
    let (a, b) = (
        approving(&store, Durability::Pauses, "a", &ran, false),
        approving(&store, Durability::Pauses, "b", &ran, false),
    );
    let (first, second) = futures::join!(
        a.resume(checkpoint.clone(), approve_all(&checkpoint)),
        b.resume(checkpoint.clone(), approve_all(&checkpoint)),
    );
    let (done, refused) = match (first, second) {
        (Ok(done), Err(refused)) | (Err(refused), Ok(done)) => (done, refused),
        other => panic!("exactly one resume runs: {other:?}"),
    };
    assert_eq!(done.text().as_deref(), Some("paid"));
    let busy = is_claimed(&refused, "a") || is_claimed(&refused, "b");
    let ended =
        matches!(&refused, Error::Resume(error) if matches!(**error, ResumeError::Ended { .. }));
    assert!(busy || ended, "{refused:?}");
    assert_eq!(ran.of("pay").len(), 1);
}

/// "A stale pause checkpoint resumed over a newer step checkpoint of the same run": refused,
/// and the store still holds the newer one, which resumes.
#[tokio::test(start_paused = true)]
async fn a_stale_pause_does_not_resume_over_a_newer_step() {
    let store = store();
    let ran = Effects::memory();
    let checkpoint = paused_for_approval(&store, Durability::EveryStep).await;
    let worker = approving(&store, Durability::EveryStep, "w1", &ran, true);
    dies_while_it_hangs(worker.resume(checkpoint.clone(), approve_all(&checkpoint))).await;
    let key = checkpoint.run_id();
    let Some(Record::Checkpoint(newer)) = store.get(key).await.unwrap() else {
        panic!()
    };
    assert!(!newer.is_pause());
    tokio::time::advance(LEASE).await;

    let other = approving(&store, Durability::EveryStep, "w2", &ran, false);
    let refused = resume_error(
        other
            .resume(checkpoint.clone(), approve_all(&checkpoint))
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(&refused, ResumeError::Superseded { stored, .. } if stored == newer.id()),
        "{refused:?}"
    );
    assert_eq!(
        store.get(key).await.unwrap(),
        Some(Record::Checkpoint(newer.clone()))
    );
    assert_eq!(
        store.list().await.unwrap()[0].held_by,
        None,
        "the refused resume let the key go"
    );
    let done = other.resume(newer, []).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("paid"));
    assert_eq!(ran.of("pay").len(), 1);
}

/// A store one of whose operations fails, the others working: `end` (the cleanup after a
/// run), or `renew` (another worker claimed the key while this one was paused by its machine).
struct Faulty {
    inner: InMemoryCheckpointer,
    fails: &'static str,
}

impl Faulty {
    fn failing(fails: &'static str) -> Self {
        Faulty {
            inner: InMemoryCheckpointer::new(),
            fails,
        }
    }
}

impl Checkpointer for Faulty {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        self.inner.claim(key, worker, ttl).await
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
        self.inner.put(key, checkpoint, lease).await
    }
    async fn renew(
        &self,
        key: &str,
        lease: &Lease,
    ) -> Result<std::time::SystemTime, CheckpointError> {
        if self.fails == "renew" {
            return Err(CheckpointError::Claimed {
                key: key.to_owned(),
                by: "the other".to_owned(),
            });
        }
        self.inner.renew(key, lease).await
    }
    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        self.inner.release(key, lease).await
    }
    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        if self.fails == "end" {
            return Err(CheckpointError::Store {
                what: "end",
                source: "the database went away".into(),
            });
        }
        self.inner.end(key, lease, tombstone).await
    }
}

/// "A finished run was reported as failed when the store's cleanup failed": the output comes
/// back, with the cleanup error beside it.
#[tokio::test]
async fn a_finished_run_keeps_its_output_when_cleanup_fails() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .checkpointer(Faulty::failing("end"), Durability::EveryStep)
        .build()
        .unwrap();
    let output: RunOutput = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    let error = output
        .cleanup_error
        .expect("the cleanup error, beside the output");
    assert!(matches!(
        error.error(),
        CheckpointError::Store { what: "end", .. }
    ));
    assert!(error.to_string().contains("the run ended"), "{error}");
}

/// A durable agent resumes only what its store holds: a key that holds nothing, or a
/// checkpoint never stored, is refused before anything runs.
#[tokio::test(start_paused = true)]
async fn nothing_stored_does_not_resume() {
    let store = store();
    let ran = Effects::memory();
    let agent = approving(&store, Durability::Pauses, "w", &ran, false);
    let refused = resume_error(
        agent
            .resume(ResumeFrom::stored("nobody"), [])
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(refused, ResumeError::NotStored { ref key } if key == "nobody"),
        "{refused:?}"
    );
    // A checkpoint of an agent that keeps nothing, handed to one that keeps its runs.
    let keeps_nothing = approving(&store, Durability::Never, "w", &ran, false);
    let checkpoint = keeps_nothing.run("pay").await.unwrap().checkpoint.unwrap();
    let refused = resume_error(
        agent
            .resume(checkpoint.clone(), approve_all(&checkpoint))
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(refused, ResumeError::NotStored { .. }),
        "{refused:?}"
    );
    assert!(ran.lines().is_empty());
    assert!(
        store.list().await.unwrap().is_empty(),
        "the refused claims left nothing"
    );
    // Without a store, `stored` cannot be resumed.
    let refused = resume_error(
        keeps_nothing
            .resume(ResumeFrom::stored("k"), [])
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(refused, ResumeError::NotStored { .. }),
        "{refused:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// A worker stopped anywhere
// ---------------------------------------------------------------------------------------------

mod stopped_anywhere {
    use std::sync::Arc;

    use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer};
    use hookchain::prelude::*;
    use hookchain::{Content, Durability, EndReason, ResumeFrom, Role, Tool, ToolError, ToolSpec};
    use proptest::prelude::*;
    use serde_json::json;

    use crate::support::{Effects, ManualClock, YieldOnce, stopped_after};

    /// The agents' lease.
    const LEASE: std::time::Duration = std::time::Duration::from_secs(30);

    /// The `fx` tool: records `fx <idempotency key>` (and `fx-done <key>` as it returns), then lets the executor run something
    /// else before it answers — once for calls `…_a`, twice for `…_b`, three times for `…_c`,
    /// so the calls of a step complete one by one — points where its worker can stop, the
    /// effect done and its result not yet kept.
    struct Fx(Effects);

    impl Tool for Fx {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("fx", "Has an effect.", json!({ "type": "object" }))
        }

        async fn call(
            &self,
            cx: ToolContext<'_>,
            _arguments: serde_json::Value,
        ) -> Result<Content, ToolError> {
            let key = cx.idempotency_key();
            self.0.record(format!("fx {key}"));
            let yields = match key.chars().last() {
                Some('a') => 1,
                Some('b') => 2,
                _ => 3,
            };
            for _ in 0..yields {
                YieldOnce::new().await;
            }
            self.0.record(format!("fx-done {key}"));
            Ok("fx done".into())
        }
    }

    /// The model: the answer of step `n` is `script[n]` (the number of its answers in the
    /// history tells the step, so a worker that resumes gets the same), then "done".
    fn model(script: Vec<Vec<&'static str>>) -> ScriptedModel {
        ScriptedModel::from_rule(move |request| {
            let step = request
                .messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .count();
            Ok(match script.get(step) {
                Some(ids) if !ids.is_empty() => ModelResponse::tool_calls(
                    ids.iter()
                        .map(|id| ToolCall::new(format!("s{step}_{id}"), "fx", json!({}))),
                ),
                _ => ModelResponse::text("done"),
            })
        })
    }

    fn agent(
        script: &[Vec<&'static str>],
        store: &Arc<InMemoryCheckpointer>,
        worker: &str,
        effects: &Effects,
    ) -> Agent<ScriptedModel> {
        Agent::builder(model(script.to_vec()))
            .tool(Fx(effects.clone()))
            .checkpointer(store.clone(), Durability::EveryStep)
            .worker(worker)
            .lease(LEASE)
            .build()
            .unwrap()
    }

    /// Steps of one to three `fx` calls each (an empty step answers).
    fn any_script() -> impl Strategy<Value = Vec<Vec<&'static str>>> {
        proptest::collection::vec(
            proptest::sample::subsequence(vec!["a", "b", "c"], 1..=3),
            0..4,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// "A run whose worker dies resumes from its last completed step", wherever it dies:
        /// the run stopped after any number of polls (its future dropped outside any tokio
        /// runtime, so nothing releases its lease) and finished from the store by another
        /// worker once the lease expired has the history of the same run never stopped; a call
        /// that had returned never runs again, one in flight may (once more, with the same
        /// key), and those are of one step; the store holds the run's tombstone at the end.
        #[test]
        fn a_run_stopped_anywhere_ends_as_if_never_stopped(
            script in any_script(),
            polls in 0..12_usize,
        ) {
            futures::executor::block_on(async {
                let reference = {
                    let store = Arc::new(InMemoryCheckpointer::new());
                    let agent = agent(&script, &store, "worker-0", &Effects::memory());
                    let mut thread = agent.thread();
                    agent.run_in(&mut thread, "go").await.unwrap();
                    thread.messages().to_vec()
                };

                let clock = ManualClock::new();
                let store = Arc::new(InMemoryCheckpointer::new().with_clock(clock.clock()));
                let effects = Effects::memory();
                let first = agent(&script, &store, "worker-1", &effects);
                let mut thread = first.thread();
                let stopped = stopped_after(polls, first.run_in(&mut thread, "go")).await;
                // The calls that had returned when the worker stopped.
                let completed: Vec<String> = effects
                    .of("fx-done")
                    .iter()
                    .map(|line| line.trim_start_matches("fx-done ").to_owned())
                    .collect();
                if stopped.is_none() {
                    let second = agent(&script, &store, "worker-2", &effects);
                    let key = thread.id().as_str().to_owned();
                    clock.advance(LEASE);
                    let output = match second.resume_in(&mut thread, ResumeFrom::stored(&key), []).await {
                        // Stopped before its first step was written: it starts again.
                        Err(Error::Resume(error)) if matches!(*error, hookchain::interrupt::ResumeError::NotStored { .. }) => {
                            second.run_in(&mut thread, "go").await
                        }
                        output => output,
                    };
                    prop_assert_eq!(output.unwrap().end, EndReason::Finished);
                }
                prop_assert_eq!(thread.messages(), &reference[..]);
                let stored = store.list().await.unwrap();
                prop_assert!(stored.len() == 1 && stored[0].ended && stored[0].held_by.is_none(), "{:?}", stored);

                let ran = effects.of("fx");
                let calls = script.iter().flatten().count();
                let mut twice = Vec::new();
                for (step, ids) in script.iter().enumerate() {
                    for id in ids {
                        let call = format!(":s{step}_{id}");
                        let times = ran.iter().filter(|line| line.ends_with(&call)).count();
                        prop_assert!((1..=2).contains(&times), "{} ran {} times", call, times);
                        if times == 2 {
                            twice.push(step);
                        }
                    }
                }
                prop_assert!(ran.len() >= calls);
                for key in &completed {
                    let times = ran.iter().filter(|line| line.ends_with(key.as_str())).count();
                    prop_assert_eq!(times, 1, "{} had completed, and ran again", key);
                }
                twice.dedup();
                prop_assert!(twice.len() <= 1, "calls of several steps ran twice: {:?}", twice);
                Ok(())
            })?;
        }
    }
}

/// A run whose lease is lost stops at once (with the store's error), rather than going on
/// beside the worker that took the run over.
#[tokio::test(start_paused = true)]
async fn a_run_that_lost_its_lease_stops() {
    let ran = Effects::memory();
    let agent = Agent::builder(model())
        .tool(EffectTool {
            name: "fast",
            effects: ran.clone(),
            hang: false,
        })
        .tool(EffectTool {
            name: "slow",
            effects: ran.clone(),
            hang: true,
        })
        .checkpointer(Faulty::failing("renew"), Durability::EveryStep)
        .lease(LEASE)
        .build()
        .unwrap();
    let error = agent.run("go").await.unwrap_err();
    assert!(is_claimed(&error, "the other"), "{error:?}");
}

/// `Never` promises none of this: a resume interrupted and retried runs the call again (in a
/// thread too: the thread is left as it was) — with the same idempotency key, so that a tool can
/// tell.
#[tokio::test(start_paused = true)]
async fn never_leaves_a_retried_resume_to_the_idempotency_key() {
    let store = store();
    let ran = Effects::memory();
    let agent = approving(&store, Durability::Never, "w", &ran, true);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "pay").await.unwrap();
    let checkpoint = paused.checkpoint.unwrap();
    for _ in 0..2 {
        let resumed = agent.resume_in(&mut thread, checkpoint.clone(), approve_all(&checkpoint));
        assert!(
            tokio::time::timeout(Duration::from_secs(5), resumed)
                .await
                .is_err()
        );
    }
    let paid = ran.of("pay");
    assert_eq!(paid.len(), 2, "Never runs it again");
    assert_eq!(paid[0], paid[1], "with the same key");
    assert!(store.list().await.unwrap().is_empty());
}

/// A thread whose resume's client went away after the approved call ran is kept by the
/// application as it was (still at the pause); resumed from what the store holds, it goes on
/// from there — the call does not run again — and the thread ends whole.
#[tokio::test(start_paused = true)]
async fn a_threads_retried_resume_goes_on_from_the_store() {
    for durability in [Durability::Pauses, Durability::EveryStep] {
        let store = store();
        let ran = Effects::memory();
        let first = approving(&store, durability, "web-1", &ran, true);
        let mut thread = first.thread();
        let paused = first.run_in(&mut thread, "pay").await.unwrap();
        let checkpoint = paused.checkpoint.unwrap();
        let kept = thread.clone();
        let timed_out = tokio::time::timeout(
            Duration::from_secs(5),
            first.resume_in(&mut thread, checkpoint.clone(), approve_all(&checkpoint)),
        )
        .await;
        assert!(timed_out.is_err());
        settle().await;
        assert_eq!(thread, kept, "{durability:?}: the thread is as it was");

        let retry = approving(&store, durability, "web-2", &ran, false);
        let refused = retry
            .resume_in(&mut thread, checkpoint.clone(), approve_all(&checkpoint))
            .await
            .unwrap_err();
        assert!(matches!(
            resume_error(refused),
            ResumeError::Superseded { .. }
        ));
        let key = thread.id().as_str().to_owned();
        let done = retry
            .resume_in(&mut thread, ResumeFrom::stored(&key), [])
            .await
            .unwrap();
        assert_eq!(done.text().as_deref(), Some("paid"), "{durability:?}");
        assert_eq!(ran.of("pay").len(), 1, "{durability:?}: pay ran twice");
        assert!(!thread.is_paused());
        assert_eq!(thread.runs(), 1);
        assert_no_dangling(thread.messages());
    }
}
