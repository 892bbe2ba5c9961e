//! Exactly once, at random (DESIGN §13): a paused run whose approval reaches several workers —
//! duplicated, late, replayed with the old checkpoint or by key — while workers crash at any
//! poll (their futures dropped outside any tokio runtime, so nothing releases their leases) and
//! leases expire, in `Pauses` and `EveryStep`. Whatever the interleaving: the approved call's effect happens under one
//! idempotency key, a call that had returned never runs again, it runs again only if a worker
//! died while it was in flight, and the run ends exactly once.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    CheckpointError, Checkpointer, InMemoryCheckpointer, Record, ResumeError,
};
use hookchain::prelude::*;
use hookchain::{Content, Durability, EndReason, ResumeFrom, Role, Tool, ToolError, ToolSpec};
use proptest::prelude::*;
use serde_json::json;
use support::{Effects, ManualClock, YieldOnce, approve_all, stopped_after};

const LEASE: Duration = Duration::from_secs(30);

/// The approved tool: records `pay <key>`, yields once (a point where its worker can die, the
/// effect done and its result not kept), records `pay-done <key>`, answers.
struct Pay(Effects);

impl Tool for Pay {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("pay", "Pays.", json!({ "type": "object" }))
    }

    async fn call(&self, cx: ToolContext<'_>, _: serde_json::Value) -> Result<Content, ToolError> {
        let key = cx.idempotency_key();
        self.0.record(format!("pay {key}"));
        YieldOnce::new().await;
        self.0.record(format!("pay-done {key}"));
        Ok("paid".into())
    }
}

/// A later step's tool: yields once (a point where its worker can die after `pay` returned and
/// its result was kept), then answers.
struct Log;

impl Tool for Log {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("log", "Logs.", json!({ "type": "object" }))
    }

    async fn call(&self, _: ToolContext<'_>, _: serde_json::Value) -> Result<Content, ToolError> {
        YieldOnce::new().await;
        Ok("logged".into())
    }
}

fn agent(
    store: &Arc<InMemoryCheckpointer>,
    durability: Durability,
    worker: &str,
    effects: &Effects,
) -> Agent<ScriptedModel, HumanInTheLoop> {
    let model = ScriptedModel::from_rule(|request| {
        let results = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        Ok(match results {
            0 => ModelResponse::tool_calls([ToolCall::new("call_pay", "pay", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("call_log", "log", json!({}))]),
            _ => ModelResponse::text("paid"),
        })
    });
    Agent::builder(model)
        .tool(Pay(effects.clone()))
        .tool(Log)
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .checkpointer(store.clone(), durability)
        .worker(worker)
        .lease(LEASE)
        .build()
        .unwrap()
}

#[derive(Debug, Clone)]
enum Act {
    /// Worker `worker` resumes with the approval: the original pause checkpoint (a duplicated
    /// or late approval) or what the store holds; it dies after `polls` polls if given.
    Resume {
        worker: usize,
        stored: bool,
        polls: Option<usize>,
    },
    /// Every lease expires.
    Expire,
}

fn any_act() -> impl Strategy<Value = Act> {
    prop_oneof![
        3 => (0..3_usize, any::<bool>(), proptest::option::of(0..12_usize))
            .prop_map(|(worker, stored, polls)| Act::Resume { worker, stored, polls }),
        1 => Just(Act::Expire),
    ]
}

/// A refusal a resume may meet in a race: the key is held, the run went on or ended, or the
/// answers are for a pause the store no longer holds.
fn refused(error: &Error) -> bool {
    match error {
        Error::Checkpoint(error) => matches!(**error, CheckpointError::Claimed { .. }),
        Error::Resume(error) => matches!(
            **error,
            ResumeError::Superseded { .. }
                | ResumeError::Ended { .. }
                | ResumeError::UnknownInterrupt { .. }
        ),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn an_approved_call_runs_once_whoever_retries_crashes_or_replays(
        acts in proptest::collection::vec(any_act(), 1..10),
        every_step in any::<bool>(),
    ) {
        let durability = if every_step { Durability::EveryStep } else { Durability::Pauses };
        futures::executor::block_on(async {
            let clock = ManualClock::new();
            let store = Arc::new(InMemoryCheckpointer::new().with_clock(clock.clock()));
            let effects = Effects::memory();
            let workers: Vec<_> = (0..3)
                .map(|i| agent(&store, durability, &format!("w{i}"), &effects))
                .collect();
            let paused = workers[0].run("pay the bill").await.unwrap();
            prop_assert_eq!(paused.end, EndReason::Interrupted);
            let pause = paused.checkpoint.unwrap();
            let key = pause.run_id().to_owned();

            let (mut finished, mut deaths_in_flight) = (0, 0);
            let resume = |worker: usize, stored: bool| {
                let (store, pause, key, agent) = (&store, &pause, &key, &workers[worker]);
                async move {
                    if !stored {
                        return agent.resume(pause.clone(), approve_all(pause)).await;
                    }
                    let answers = match store.get(key).await.unwrap() {
                        Some(Record::Checkpoint(held)) if held.is_pause() => approve_all(&held),
                        _ => Vec::new(),
                    };
                    agent.resume(ResumeFrom::stored(key), answers).await
                }
            };
            for act in acts {
                match act {
                    Act::Expire => clock.advance(LEASE),
                    Act::Resume { worker, stored, polls } => {
                        let started = effects.of("pay").len();
                        let done_before = effects.of("pay-done").len();
                        let outcome = match polls {
                            Some(polls) => stopped_after(polls, resume(worker, stored)).await,
                            None => Some(resume(worker, stored).await),
                        };
                        match outcome {
                            None => {
                                let in_flight = effects.of("pay").len() > started
                                    && effects.of("pay-done").len() == done_before;
                                deaths_in_flight += usize::from(in_flight);
                            }
                            Some(Ok(output)) => {
                                prop_assert_eq!(output.end, EndReason::Finished);
                                finished += 1;
                            }
                            Some(Err(error)) => prop_assert!(refused(&error), "{}", error),
                        }
                    }
                }
            }
            // Whatever is left is finished by a worker once every lease expired.
            for _ in 0..4 {
                clock.advance(LEASE);
                match store.get(&key).await.unwrap() {
                    Some(Record::Ended(_)) => break,
                    _ => {
                        if let Ok(output) = resume(0, true).await {
                            prop_assert_eq!(output.end, EndReason::Finished);
                            finished += 1;
                        }
                    }
                }
            }
            prop_assert!(matches!(store.get(&key).await.unwrap(), Some(Record::Ended(_))));
            prop_assert_eq!(finished, 1, "the run ended {} times", finished);

            let ran = effects.of("pay");
            let mut keys: Vec<&String> = ran.iter().collect();
            keys.dedup();
            prop_assert_eq!(keys.len(), 1, "the call ran under several keys: {:?}", ran);
            prop_assert!(ran.len() <= 1 + deaths_in_flight, "ran {:?} with {} deaths in flight", ran, deaths_in_flight);
            // A call that had returned never runs again: nothing starts after a `pay-done`.
            let lines = effects.lines();
            if let Some(done) = lines.iter().position(|line| line.starts_with("pay-done")) {
                prop_assert!(
                    !lines[done..].iter().any(|line| line.starts_with("pay ")),
                    "the call ran again after it had returned: {:?}", lines
                );
            }
            Ok(())
        })?;
    }
}
