//! Durable runs in one process: what an agent writes to its checkpointer in each durability
//! mode, and a run whose worker stops mid-way (its future dropped, as a crash would) resumed
//! by another worker from its last step: no completed tool call runs again, the call that was
//! in flight runs again with the same idempotency key. (`durable_kill.rs` kills a real
//! process.)

mod store_rules;
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::interrupt::{CheckpointError, Checkpointer, InMemoryCheckpointer, Position, Stored};
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{Durability, EndReason, Role, Thread};
use serde_json::json;
use support::{EffectTool, Effects, assert_no_dangling};

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
        .build()
}

/// Runs `agent` in `thread` until its `slow` call hangs, then drops the run (the worker stops
/// there). Time is paused: the timeout fires once every task is idle.
async fn run_until_it_hangs(agent: &Agent<ScriptedModel>, thread: &mut Thread<()>) {
    let run = agent.run_in(thread, "go");
    let stopped = tokio::time::timeout(Duration::from_secs(60), run).await;
    assert!(stopped.is_err(), "the run ended: {stopped:?}");
}

/// "A run whose process dies resumes from its last completed step: every tool call that
/// completed is never executed again; a tool call that was in flight may run again, and the
/// tool receives an idempotency key (run id + call id) so it can tell."
#[tokio::test(start_paused = true)]
async fn a_stopped_run_resumes_from_its_last_step_in_another_worker() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let mut thread = first.thread();
    let before = thread.clone();
    run_until_it_hangs(&first, &mut thread).await;
    assert_eq!(thread, before, "a dropped run leaves its thread as it was");

    // The key is the thread's, held by the worker that stopped; its checkpoint has the model's
    // answer and the completed call.
    let key = thread.id().as_str().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.clone(), Some("worker-1".to_owned()))]
    );
    let second = agent(&store, Durability::EveryStep, "worker-2", &ran, false);
    assert_eq!(store.claim(&key, "worker-2").await.unwrap(), None, "held");
    // Its supervisor knows worker-1 is gone.
    assert!(store.release(&key, "worker-1").await.unwrap());
    let checkpoint = store.claim(&key, "worker-2").await.unwrap().unwrap();
    assert!(!checkpoint.is_pause());
    let Position::Tools { results, .. } = checkpoint.position() else {
        panic!("{:?}", checkpoint.position());
    };
    assert_eq!(results[0].as_ref().unwrap().content, "fast done");
    assert!(results[1].is_none());

    let done = second.resume_in(&mut thread, checkpoint, []).await.unwrap();
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
    assert!(slow[0].ends_with(":call_slow"), "{}", slow[0]);
    // The thread has the whole run, valid for any provider, and the store nothing.
    assert_eq!(thread.messages().len(), 5);
    assert_eq!(thread.runs(), 1);
    assert_no_dangling(thread.messages());
    assert_eq!(store.list().await.unwrap(), []);
}

/// Outside a thread the run's id is the key; `resume` takes a step checkpoint with no answers.
#[tokio::test(start_paused = true)]
async fn a_run_outside_a_thread_is_kept_under_its_run_id() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let ran = Effects::memory();
    let first = agent(&store, Durability::EveryStep, "worker-1", &ran, true);
    let stopped = tokio::time::timeout(Duration::from_secs(60), first.run("go")).await;
    assert!(stopped.is_err());
    let stored = store.list().await.unwrap();
    assert_eq!(stored.len(), 1);
    let key = stored[0].key.clone();
    let checkpoint = store.claim(&key, "worker-1").await.unwrap().unwrap();
    assert_eq!(checkpoint.run_id(), key);

    // The same worker, restarted, takes its own key back.
    let restarted = agent(&store, Durability::EveryStep, "worker-1", &ran, false);
    let done = restarted.resume(checkpoint, []).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
    assert_eq!(store.list().await.unwrap(), []);
}

/// `Pauses` writes a paused run's checkpoint, its key free for whoever has the answers; the
/// run resumed by another worker ends, and its key goes. Nothing is written between steps.
#[tokio::test]
async fn pauses_are_written_free_and_the_end_deletes_them() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let ran = Effects::memory();
    let asking = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("q", "ask_user", json!({ "question": "?" }))]),
        ModelResponse::text("thanks"),
    ]))
    .tool(AskUser)
    .checkpointer(store.clone(), Durability::Pauses)
    .worker("api")
    .build();
    let paused = asking.run("hi").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let stored = store.list().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].held_by, None);
    assert_eq!(
        store.get(&stored[0].key).await.unwrap().as_ref(),
        paused.checkpoint.as_ref()
    );

    let checkpoint = store.claim(&stored[0].key, "api").await.unwrap().unwrap();
    let answers: Vec<_> = checkpoint
        .pending()
        .map(|id| (id.clone(), json!("Ada")))
        .collect();
    let done = asking.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("thanks"));
    assert_eq!(store.list().await.unwrap(), []);
    assert!(ran.lines().is_empty());
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
    .build();
    let paused = asking.run("hi").await.unwrap();
    assert!(paused.checkpoint.is_some());
    assert_eq!(store.list().await.unwrap(), []);
}

/// Every step of a run is written as the run goes: before each model call, when the model's
/// answer is kept, as each tool call completes; the key held by the worker throughout.
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
        let checkpoint = futures::executor::block_on(store.get(&stored[0].key))
            .unwrap()
            .unwrap();
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
        .build();
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
    assert_eq!(store.list().await.unwrap(), []);
}

/// A worker that does not hold the key cannot write it: its run fails at its first write
/// (`CheckpointError::Claimed`), and the holder's checkpoint is left as it was.
#[tokio::test]
async fn a_run_on_a_key_another_worker_holds_is_refused() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let ran = Effects::memory();
    let agent = agent(&store, Durability::EveryStep, "intruder", &ran, false);
    let mut thread = agent.thread();
    let holder = store_rules::step("the owner's").await;
    store
        .put(thread.id().as_str(), &holder, "owner")
        .await
        .unwrap();
    let error = agent.run_in(&mut thread, "go").await.unwrap_err();
    let hookchain::Error::Checkpoint(error) = error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(&*error, CheckpointError::Claimed { by, .. } if by == "owner"),
        "{error:?}"
    );
    assert!(ran.lines().is_empty());
    assert_eq!(store.get(thread.id().as_str()).await.unwrap(), Some(holder));
}

/// A run that fails releases its key and leaves its last checkpoint: another worker resumes it
/// from there (the completed call does not run again).
#[tokio::test]
async fn a_failed_run_leaves_its_last_step_for_another_worker() {
    let store = Arc::new(InMemoryCheckpointer::new());
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
    .build();
    // The script has no second answer: the second model call fails.
    let error = failing.run("go").await.unwrap_err();
    assert!(matches!(error, hookchain::Error::Model(_)), "{error:?}");
    let stored = store.list().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].held_by, None, "released");

    let working = agent(&store, Durability::EveryStep, "w2", &ran, false);
    let checkpoint = store.claim(&stored[0].key, "w2").await.unwrap().unwrap();
    assert!(matches!(checkpoint.position(), Position::Step));
    let done = working.resume(checkpoint, []).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
    assert_eq!(store.list().await.unwrap(), []);
}

/// A stored checkpoint another worker holds does not resume on this agent: refused before
/// anything runs (not after the run, when its end cannot be written).
#[tokio::test]
async fn a_checkpoint_another_worker_holds_does_not_resume() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let asking = |worker: &str| {
        Agent::builder(ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("q", "ask_user", json!({ "question": "?" }))]),
            ModelResponse::text("thanks"),
        ]))
        .tool(AskUser)
        .checkpointer(store.clone(), Durability::Pauses)
        .worker(worker)
        .build()
    };
    let paused = asking("a").run("hi").await.unwrap();
    let key = store.list().await.unwrap().remove(0).key;
    let checkpoint = store.claim(&key, "someone-else").await.unwrap().unwrap();
    assert_eq!(checkpoint, paused.checkpoint.unwrap());
    let answers: Vec<_> = checkpoint
        .pending()
        .map(|id| (id.clone(), json!("Ada")))
        .collect();
    let other = asking("b");
    let error = other.resume(checkpoint, answers).await.unwrap_err();
    let hookchain::Error::Checkpoint(error) = error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(&*error, CheckpointError::Claimed { by, .. } if by == "someone-else"),
        "{error:?}"
    );
    assert!(other.model().requests().is_empty(), "something ran");
}

/// A streamed run keeps its steps as an unstreamed one: a stopped stream leaves its last step in
/// the store, and another worker finishes it.
#[tokio::test(start_paused = true)]
async fn a_streamed_run_keeps_its_steps() {
    use futures::StreamExt;
    let store = Arc::new(InMemoryCheckpointer::new());
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
    let key = thread.id().as_str().to_owned();
    assert!(store.release(&key, "worker-1").await.unwrap());
    let second = agent(&store, Durability::EveryStep, "worker-2", &ran, false);
    let checkpoint = store.claim(&key, "worker-2").await.unwrap().unwrap();
    let done = second.resume_in(&mut thread, checkpoint, []).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("all done"));
    assert_eq!(ran.of("fast").len(), 1);
    assert_eq!(store.list().await.unwrap(), []);
}

// ---------------------------------------------------------------------------------------------
// A worker stopped anywhere
// ---------------------------------------------------------------------------------------------

mod stopped_anywhere {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context as TaskContext, Poll};

    use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer};
    use hookchain::prelude::*;
    use hookchain::{Durability, EndReason, Role, Tool, ToolError, ToolSpec};
    use proptest::prelude::*;
    use serde_json::json;

    use crate::support::Effects;

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
        ) -> Result<String, ToolError> {
            let key = cx.idempotency_key();
            self.0.record(format!("fx {key}"));
            let yields = match key.chars().last() {
                Some('a') => 1,
                Some('b') => 2,
                _ => 3,
            };
            for _ in 0..yields {
                YieldOnce(false).await;
            }
            self.0.record(format!("fx-done {key}"));
            Ok("fx done".to_owned())
        }
    }

    /// Pending once (waking itself), then ready.
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// `future`, polled at most `polls` times: `None` if it was still running then (its
    /// worker stopped there, and the future is dropped).
    async fn stopped_after<F: Future>(polls: usize, future: F) -> Option<F::Output> {
        let mut future = std::pin::pin!(future);
        let mut left = polls;
        std::future::poll_fn(move |cx| {
            if left == 0 {
                return Poll::Ready(None);
            }
            left -= 1;
            future.as_mut().poll(cx).map(Some)
        })
        .await
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
            .build()
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
        /// the run stopped after any number of polls and finished by another worker from the
        /// store has the history of the same run never stopped; a call that had returned never
        /// runs again, one in flight may (once more, with the same key), and those are of one
        /// step; the store is empty at the end.
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

                let store = Arc::new(InMemoryCheckpointer::new());
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
                    store.release(&key, "worker-1").await.unwrap();
                    let output = match store.claim(&key, "worker-2").await.unwrap() {
                        Some(checkpoint) => second.resume_in(&mut thread, checkpoint, []).await,
                        // Stopped before its first step was written: it starts again.
                        None => second.run_in(&mut thread, "go").await,
                    };
                    prop_assert_eq!(output.unwrap().end, EndReason::Finished);
                }
                prop_assert_eq!(thread.messages(), &reference[..]);
                prop_assert!(store.list().await.unwrap().is_empty());

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
