//! Exactly once at the edges of the checkpoint (issue 43): each case a way an approved side
//! effect could run twice, or a pause be lost, that the store's rules alone did not catch — a
//! pause given up and resumed from the store, a run on a stale copy of a thread, an answer
//! retried past a later pause.

#[path = "edges/lagging.rs"]
mod lagging;
#[path = "edges/load.rs"]
mod load;
mod support;

use std::sync::Arc;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::{Durability, EndReason, ResumeFrom, Role, UnseenRun};
use lagging::Lagging;
use serde_json::json;
use support::{EffectTool, Effects, approve_all};

/// An agent that pays an invoice once a person approves each payment: asked to pay, it calls
/// `pay` (one call per step, `steps` steps), then says it is done.
fn payer(
    store: &Arc<InMemoryCheckpointer>,
    effects: &Effects,
    steps: usize,
) -> Agent<ScriptedModel, HumanInTheLoop> {
    let model = ScriptedModel::from_rule(move |request| {
        let last = request
            .messages
            .last()
            .map(|message| message.text().into_owned());
        if last.as_deref() == Some("hello?") {
            return Ok(ModelResponse::text("Hi."));
        }
        let paid = request
            .messages
            .iter()
            .filter(|message| message.role == Role::Tool)
            .count();
        Ok(if paid < steps {
            ModelResponse::tool_calls([ToolCall::new(
                format!("call_{paid}"),
                "pay",
                json!({ "invoice": format!("INV-{paid}") }),
            )])
        } else {
            ModelResponse::text("Done.")
        })
    });
    Agent::builder(model)
        .tool(EffectTool {
            name: "pay",
            effects: effects.clone(),
            hang: false,
        })
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .checkpointer(Arc::clone(store), Durability::Pauses)
        .build()
        .unwrap()
}

fn is_refused(error: &Error) -> bool {
    matches!(error, Error::Resume(_))
}

/// A pause given up with `Agent::abandon` is recorded in the store: its approval, sent late
/// with the thread's own copy or a copy taken before, runs nothing.
#[tokio::test]
async fn a_pause_given_up_is_never_resumed_from_the_store() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let agent = payer(&store, &effects, 1);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "Pay INV-0").await.unwrap();
    let approval = approve_all(paused.checkpoint.as_deref().unwrap());
    let before_cancel = thread.clone();

    assert!(agent.abandon(&mut thread).await.unwrap());
    assert!(!thread.is_paused());
    // The store says so.
    let key = thread.id().as_str().to_owned();
    match store.get(&key).await.unwrap() {
        Some(Record::Ended(tombstone)) => assert_eq!(tombstone.how, "abandoned"),
        other => panic!("the store holds {other:?}"),
    }

    // A late approval, from the thread as it is now or as a second tab had it.
    let late = agent
        .resume_in(
            &mut thread,
            ResumeFrom::stored(key.clone()),
            approval.clone(),
        )
        .await
        .unwrap_err();
    assert!(is_refused(&late), "{late}");
    let mut stale = before_cancel;
    let late = agent
        .resume_in(&mut stale, ResumeFrom::stored(key.clone()), approval)
        .await
        .unwrap_err();
    assert!(is_refused(&late), "{late}");
    assert_eq!(
        effects.of("pay").len(),
        0,
        "the cancelled payment never ran"
    );
    // Giving up twice is giving up once.
    assert!(!agent.abandon(&mut thread).await.unwrap());
}

/// `Thread::abandon_pause` alone changes only the thread: a stored resume of the pause with
/// that thread is refused all the same, for the thread no longer waits on it.
#[tokio::test]
async fn a_stored_resume_needs_a_thread_that_still_waits_on_the_pause() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let agent = payer(&store, &effects, 1);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "Pay INV-0").await.unwrap();
    let approval = approve_all(paused.checkpoint.as_deref().unwrap());
    assert!(thread.abandon_pause());
    let key = thread.id().as_str().to_owned();
    let refused = agent
        .resume_in(&mut thread, ResumeFrom::stored(key), approval)
        .await
        .unwrap_err();
    assert!(is_refused(&refused), "{refused}");
    assert_eq!(effects.of("pay").len(), 0);
}

/// A pause, and an end, that a worker stored and its thread never heard of (the worker died
/// before the thread was kept): `unseen_run` finds each, and a stored resume with no answers
/// hands it back as it stands — nothing runs again.
#[tokio::test]
async fn a_pause_or_an_end_the_thread_never_heard_of_is_handed_back() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let agent = payer(&store, &effects, 1);
    let mut thread = agent.thread();
    let key = thread.id().as_str().to_owned();
    let before = thread.clone();
    agent.run_in(&mut thread, "Pay INV-0").await.unwrap();

    // The thread as saved before the run.
    let mut saved = before;
    let unseen = agent.unseen_run(&saved).await.unwrap();
    assert!(matches!(unseen, Some(UnseenRun::Paused(_))), "{unseen:?}");
    let handed = agent
        .resume_in(&mut saved, ResumeFrom::stored(key.clone()), [])
        .await
        .unwrap();
    assert_eq!(handed.end, EndReason::Interrupted);
    assert!(saved.is_paused());
    assert!(agent.unseen_run(&saved).await.unwrap().is_none());
    assert_eq!(effects.of("pay").len(), 0);

    // Approved, the run ends; the thread as saved at the pause never heard of the end.
    let at_pause = saved.clone();
    let approval = approve_all(handed.checkpoint.as_deref().unwrap());
    agent
        .resume_in(&mut saved, ResumeFrom::stored(key.clone()), approval)
        .await
        .unwrap();
    let mut saved = at_pause;
    let unseen = agent.unseen_run(&saved).await.unwrap();
    assert!(matches!(unseen, Some(UnseenRun::Ended(_))), "{unseen:?}");
    let ended = agent
        .resume_in(&mut saved, ResumeFrom::stored(key.clone()), [])
        .await
        .unwrap();
    assert_eq!(ended.text().as_deref(), Some("Done."));
    assert!(!saved.is_paused());
    assert_eq!(saved.messages().last().unwrap().text(), "Done.");
    assert_eq!(effects.of("pay").len(), 1);

    // Heard of now: nothing is unseen, and a stored resume is refused.
    assert!(agent.unseen_run(&saved).await.unwrap().is_none());
    let refused = agent
        .resume_in(&mut saved, ResumeFrom::stored(key), [])
        .await
        .unwrap_err();
    assert!(is_refused(&refused), "{refused}");
    assert_eq!(effects.of("pay").len(), 1);
}

/// A run on a stale copy of a thread (one that does not know of its pause) writes nothing
/// under `Pauses`: it leaves the key as it found it, and the pause is still there to approve.
#[tokio::test]
async fn a_run_that_wrote_nothing_leaves_the_pause_it_found() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let agent = payer(&store, &effects, 1);
    let mut thread = agent.thread();
    let mut stale = thread.clone();
    let paused = agent.run_in(&mut thread, "Pay INV-0").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);

    // A run on the stale copy that answers in words: it stores nothing.
    let answered = agent.run_in(&mut stale, "hello?").await.unwrap();
    assert_eq!(answered.text().as_deref(), Some("Hi."));

    let key = thread.id().as_str().to_owned();
    assert!(
        matches!(store.get(&key).await.unwrap(), Some(Record::Checkpoint(_))),
        "the pause is still stored"
    );
    let approval = approve_all(paused.checkpoint.as_deref().unwrap());
    let done = agent
        .resume_in(&mut thread, ResumeFrom::stored(key), approval)
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("Done."));
    assert_eq!(effects.of("pay").len(), 1);
}

/// An answer to a pause the run is past, retried (a duplicated webhook, a step's retry whose
/// first attempt got further), is dropped whatever the store holds — also when the run waits
/// at a later pause — and nothing runs twice.
#[tokio::test]
async fn answers_to_an_earlier_pause_are_dropped_at_a_later_pause() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let agent = payer(&store, &effects, 2);
    let first = agent.start_step("run-1", "Pay twice").await.unwrap();
    assert_eq!(first.end, EndReason::Interrupted);
    let first_answers = approve_all(first.checkpoint.as_deref().unwrap());
    let mut second = agent.step("run-1", first_answers.clone()).await.unwrap();
    while second.end == EndReason::Stepped {
        second = agent.step("run-1", []).await.unwrap();
    }
    assert_eq!(
        second.end,
        EndReason::Interrupted,
        "paused at the second payment"
    );
    assert_eq!(effects.of("pay").len(), 1);

    // The first pause's answers again: dropped, the run still waits at its second pause.
    let again = agent.step("run-1", first_answers).await.unwrap();
    assert_eq!(again.end, EndReason::Interrupted);
    assert_eq!(
        again.checkpoint.as_deref().unwrap().id(),
        second.checkpoint.as_deref().unwrap().id()
    );
    assert_eq!(effects.of("pay").len(), 1, "nothing ran again");

    let mut done = agent
        .step("run-1", approve_all(second.checkpoint.as_deref().unwrap()))
        .await
        .unwrap();
    while done.end == EndReason::Stepped {
        done = agent.step("run-1", []).await.unwrap();
    }
    assert_eq!(done.text().as_deref(), Some("Done."));
    assert_eq!(effects.of("pay").len(), 2);
    // A step asked again after the end (its first attempt's outcome lost): the end, handed
    // back from the tombstone; nothing runs.
    let again = agent.step("run-1", []).await.unwrap();
    assert_eq!(again.end, EndReason::Finished);
    assert_eq!(again.text().as_deref(), Some("Done."));
    assert_eq!(effects.of("pay").len(), 2);
}

/// A tool that blocks its thread for `for_` (a synchronous SDK, CPU work), recording its run.
struct Blocking {
    effects: Effects,
    for_: std::time::Duration,
}

impl hookchain::Tool for Blocking {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new("charge", "Charges a card.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: hookchain::ToolContext<'_>,
        _: serde_json::Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        self.effects
            .record(format!("charge {}", cx.idempotency_key()));
        std::thread::sleep(self.for_);
        Ok("charged".into())
    }
}

/// An agent that charges once (`EveryStep`, a short lease), as worker `worker`.
fn charger(
    store: &Arc<InMemoryCheckpointer>,
    effects: &Effects,
    worker: &str,
) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        let charged = request
            .messages
            .iter()
            .any(|message| message.role == Role::Tool);
        Ok(if charged {
            ModelResponse::text("Done.")
        } else {
            ModelResponse::tool_calls([ToolCall::new("c1", "charge", json!({}))])
        })
    });
    Agent::builder(model)
        .tool(Blocking {
            effects: effects.clone(),
            for_: std::time::Duration::from_millis(1_200),
        })
        .checkpointer(Arc::clone(store), Durability::EveryStep)
        .worker(worker)
        .lease(std::time::Duration::from_millis(300))
        .build()
        .unwrap()
}

/// A tool that blocks its thread for four times its run's lease does not lose the lease: the
/// renewals go on in a task of their own, so a second worker recovering the run the documented
/// way (`ResumeFrom::stored`) is refused the whole time, and the card is charged once. (Real
/// time, on a runtime of two threads: a blocked thread cannot be shown on tokio's paused clock,
/// which runs on one.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_tool_keeps_its_lease_while_it_blocks() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let first = Arc::new(charger(&store, &effects, "first"));
    let second = charger(&store, &effects, "second");
    let thread = first.thread();
    let key = thread.id().as_str().to_owned();
    let copy = thread.clone();
    let running = tokio::spawn({
        let first = Arc::clone(&first);
        async move {
            let mut thread = thread;
            first.run_in(&mut thread, "Charge it").await
        }
    });
    // The second worker tries to recover the run while the first one's tool blocks — not
    // before the first has claimed the thread: a recovery that finds nothing holds the key for
    // the moment it takes to look, and a run beginning in that moment is refused (rightly).
    while effects.of("charge").is_empty() {
        assert!(
            !running.is_finished(),
            "the first run ended before charging"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut tries = 0;
    while !running.is_finished() {
        let mut copy = copy.clone();
        match second
            .resume_in(&mut copy, ResumeFrom::stored(key.clone()), [])
            .await
        {
            Ok(output) => {
                panic!("the second worker ran the run while the first held it: {output:?}")
            }
            Err(_refused) => tries += 1,
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let output = running.await.unwrap().unwrap();
    assert_eq!(output.text().as_deref(), Some("Done."));
    assert!(tries > 10, "the second worker tried ({tries} times)");
    assert_eq!(effects.of("charge").len(), 1, "{:?}", effects.lines());
}

/// A checkpointer whose renewals fail while `failing` is set (a store that cannot be reached
/// for a while), otherwise the memory one.
struct FlakyRenewals {
    inner: Arc<InMemoryCheckpointer>,
    failing: std::sync::atomic::AtomicBool,
}

impl Checkpointer for FlakyRenewals {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: std::time::Duration,
    ) -> Result<hookchain::interrupt::Claim, hookchain::interrupt::CheckpointError> {
        self.inner.claim(key, worker, ttl).await
    }

    async fn get(
        &self,
        key: &str,
    ) -> Result<Option<Record>, hookchain::interrupt::CheckpointError> {
        self.inner.get(key).await
    }

    async fn list(
        &self,
    ) -> Result<Vec<hookchain::interrupt::Stored>, hookchain::interrupt::CheckpointError> {
        self.inner.list().await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &hookchain::Checkpoint,
        lease: &hookchain::interrupt::Lease,
    ) -> Result<(), hookchain::interrupt::CheckpointError> {
        self.inner.put(key, checkpoint, lease).await
    }

    async fn renew(
        &self,
        key: &str,
        lease: &hookchain::interrupt::Lease,
    ) -> Result<std::time::SystemTime, hookchain::interrupt::CheckpointError> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(hookchain::interrupt::CheckpointError::Store {
                what: "renew",
                source: "the database is unreachable".into(),
            });
        }
        self.inner.renew(key, lease).await
    }

    async fn release(
        &self,
        key: &str,
        lease: &hookchain::interrupt::Lease,
    ) -> Result<bool, hookchain::interrupt::CheckpointError> {
        self.inner.release(key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &hookchain::interrupt::Lease,
        tombstone: Option<&hookchain::interrupt::Tombstone>,
    ) -> Result<(), hookchain::interrupt::CheckpointError> {
        self.inner.end(key, lease, tombstone).await
    }
}

/// A tool that waits `for_` on tokio's clock.
struct Slow(std::time::Duration);

impl hookchain::Tool for Slow {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new("prepare", "Prepares.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        _: hookchain::ToolContext<'_>,
        _: serde_json::Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        tokio::time::sleep(self.0).await;
        Ok("prepared".into())
    }
}

/// While the store cannot renew a run's lease, no tool call starts once less than a third of
/// it is left: the run stops before paying (its key let go, its step kept), and a worker that
/// resumes it when the store is back pays once.
#[tokio::test(start_paused = true)]
async fn no_tool_call_starts_on_a_lease_about_to_run_out() {
    let store = Arc::new(FlakyRenewals {
        inner: Arc::new(InMemoryCheckpointer::new()),
        failing: std::sync::atomic::AtomicBool::new(true),
    });
    let effects = Effects::memory();
    let model = ScriptedModel::from_rule(|request| {
        let results = support::tool_texts(&request.messages);
        Ok(match results.len() {
            0 => ModelResponse::tool_calls([ToolCall::new("c1", "prepare", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("c2", "pay", json!({}))]),
            _ => ModelResponse::text("Done."),
        })
    });
    let agent = Agent::builder(model)
        .tool(Slow(std::time::Duration::from_secs(25)))
        .tool(EffectTool {
            name: "pay",
            effects: effects.clone(),
            hang: false,
        })
        .checkpointer(Arc::clone(&store), Durability::EveryStep)
        .lease(std::time::Duration::from_secs(30))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let before = thread.clone();
    let stopped = agent
        .run_in(&mut thread, "Prepare, then pay")
        .await
        .unwrap_err();
    assert!(
        matches!(&stopped, Error::Checkpoint(error)
            if matches!(**error, hookchain::interrupt::CheckpointError::LeaseRunningOut { .. })),
        "{stopped}"
    );
    assert!(effects.of("pay").is_empty(), "the payment did not start");

    // The store is back: the run is resumed from its last step (with the thread as it was
    // before the run, as for a worker that died), and pays once.
    store
        .failing
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let mut thread = before;
    let key = thread.id().as_str().to_owned();
    let done = agent
        .resume_in(&mut thread, ResumeFrom::stored(key), [])
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("Done."));
    assert_eq!(effects.of("pay").len(), 1);
}

/// Logs: a point where its worker can die (it yields once).
struct Log;

impl hookchain::Tool for Log {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new("log", "Logs.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        _: hookchain::ToolContext<'_>,
        _: serde_json::Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        support::YieldOnce::new().await;
        Ok("logged".into())
    }
}

/// A sub-agent run again after its parent's worker died in the middle of the child's run: the
/// child has the same run id, so its tools get the same idempotency keys, and its steps are in
/// the parent's store, so it goes on from its last completed call — its payment, once kept,
/// does not run again; one in flight at the death runs again with its key. At every point of
/// the first worker's run. (Outside a runtime: the dropped parent releases nothing, as a worker
/// that died.)
#[test]
fn a_sub_agent_run_again_never_runs_a_kept_call_again_and_keeps_its_keys() {
    futures::executor::block_on(async {
        let mut kept_deaths = 0;
        for polls in 1..200 {
            let clock = support::ManualClock::new();
            let store = Arc::new(InMemoryCheckpointer::new().with_clock(clock.clock()));
            let effects = Effects::memory();
            let first = payer_team(&store, &effects, "first");
            let thread = first.thread();
            let mut running = thread.clone();
            let stopped =
                support::stopped_after(polls, first.run_in(&mut running, "Pay INV-7")).await;
            if stopped.is_some() {
                assert!(kept_deaths > 0, "no death found the payment kept");
                return;
            }
            if effects.of("pay").is_empty() {
                continue;
            }
            let kept = holds(&store, "pay done").await;
            kept_deaths += usize::from(kept);
            clock.advance(std::time::Duration::from_secs(31));
            let second = payer_team(&store, &effects, "second");
            let mut thread = thread;
            let key = thread.id().as_str().to_owned();
            let done = second
                .resume_in(&mut thread, ResumeFrom::stored(key), [])
                .await
                .unwrap();
            assert_eq!(done.text().as_deref(), Some("Done."));
            let paid = effects.of("pay");
            if kept {
                assert_eq!(paid.len(), 1, "kept at the death, run once: {paid:?}");
            } else {
                assert_eq!(paid.len(), 2, "in flight at the death: {paid:?}");
                assert_eq!(paid[0], paid[1], "the same idempotency key both times");
            }
        }
        panic!("the first worker's run never ended");
    });
}

/// Whether any key of `store` holds a checkpoint with `text` in it.
async fn holds(store: &InMemoryCheckpointer, text: &str) -> bool {
    for stored in store.list().await.unwrap() {
        if let Some(Record::Checkpoint(checkpoint)) = store.get(&stored.key).await.unwrap()
            && checkpoint.to_json().unwrap().contains(text)
        {
            return true;
        }
    }
    false
}

/// A lead whose sub-agent (`accounts`) pays, then logs (a point where its worker can die), as
/// worker `worker`, its runs kept after every step.
fn payer_team(
    store: &Arc<InMemoryCheckpointer>,
    effects: &Effects,
    worker: &str,
) -> Agent<ScriptedModel> {
    let child = Agent::builder(ScriptedModel::from_rule(|request| {
        Ok(match support::tool_texts(&request.messages).len() {
            0 => ModelResponse::tool_calls([ToolCall::new("p1", "pay", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("l1", "log", json!({}))]),
            _ => ModelResponse::text("paid"),
        })
    }))
    .name("accountant")
    .tool(EffectTool {
        name: "pay",
        effects: effects.clone(),
        hang: false,
    })
    .tool(Log)
    .build()
    .unwrap();
    Agent::builder(ScriptedModel::from_rule(|request| {
        Ok(if support::tool_texts(&request.messages).is_empty() {
            ModelResponse::tool_calls([ToolCall::new(
                "c1",
                "accounts",
                json!({"task": "Pay INV-7"}),
            )])
        } else {
            ModelResponse::text("Done.")
        })
    }))
    .tool(child.into_tool("accounts", "Pays.").unwrap())
    .checkpointer(Arc::clone(store), Durability::EveryStep)
    .worker(worker)
    .lease(std::time::Duration::from_secs(30))
    .build()
    .unwrap()
}

/// A sub-agent that signs its checkpoints (it resumes only signed ones from its callers) is
/// resumed by its parent: the child's checkpoint comes from the parent's, which the parent
/// vouches for.
#[tokio::test]
async fn a_sub_agent_that_signs_its_checkpoints_is_resumed_by_its_parent() {
    use hookchain::builtin::human_in_the_loop::ApprovalResponse;
    use hookchain::interrupt::SigningKey;
    use hookchain::subagent::SubAgentPause;

    let effects = Effects::memory();
    let child = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("p1", "pay", json!({}))]),
        ModelResponse::text("paid"),
    ]))
    .name("accountant")
    .tool(EffectTool {
        name: "pay",
        effects: effects.clone(),
        hang: false,
    })
    .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
    .checkpoint_signing([SigningKey::new("k1", [7_u8; 32]).unwrap()])
    .build()
    .unwrap();
    let lead = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "accounts", json!({"task": "Pay"}))]),
        ModelResponse::text("Done."),
    ]))
    .tool(child.into_tool("accounts", "Pays.").unwrap())
    .build()
    .unwrap();
    let paused = lead.run("Pay").await.unwrap();
    let interrupt = paused.interrupts()[0].clone();
    let pause = SubAgentPause::from_interrupt(&interrupt).unwrap();
    let answers = ApprovalResponse::approve_every(pause.interrupts());
    let done = lead
        .resume(
            paused.checkpoint.unwrap(),
            [(interrupt.id, pause.answer(answers))],
        )
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("Done."));
    assert_eq!(effects.of("pay").len(), 1, "the child paid once");
    assert!(
        !done.messages.iter().any(|message| message.is_error),
        "{:?}",
        done.messages
    );
}

/// A renewal sent before the run wrote its end, answered after it (the key then holds the
/// run's tombstone, and refuses the renewal): the run still reports its real outcome, never a
/// lost lease.
#[tokio::test(start_paused = true)]
async fn a_renewal_answered_after_the_runs_end_does_not_make_it_lost() {
    // A renewal reaches the store 50 ms after it is sent; an end is written at once, and
    // its answer comes 50 ms later.
    let store = Arc::new(Lagging {
        inner: InMemoryCheckpointer::new(),
        renewal_sent: std::time::Duration::from_millis(50),
        end_answered: std::time::Duration::from_millis(50),
        writes_answered: std::time::Duration::ZERO,
    });
    let model = ScriptedModel::from_rule(|request| {
        Ok(if support::tool_texts(&request.messages).is_empty() {
            ModelResponse::tool_calls([ToolCall::new("c1", "prepare", json!({}))])
        } else {
            ModelResponse::text("Done.")
        })
    });
    let agent = Agent::builder(model)
        // Ends at 30 ms: after the first renewal is sent (at 10 ms), before it is answered (60).
        .tool(Slow(std::time::Duration::from_millis(30)))
        .checkpointer(Arc::clone(&store), Durability::EveryStep)
        .lease(std::time::Duration::from_millis(30))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "Prepare").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("Done."));
    // The run's tombstone is there: its end was stored.
    let key = thread.id().as_str().to_owned();
    assert!(matches!(
        store.inner.get(&key).await.unwrap(),
        Some(Record::Ended(_))
    ));
}
