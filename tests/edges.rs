//! Exactly once at the edges of the checkpoint (issue 43): each case a way an approved side
//! effect could run twice, or a pause be lost, that the store's rules alone did not catch — a
//! pause given up and resumed from the store, a run on a stale copy of a thread, an answer
//! retried past a later pause.

mod support;

use std::sync::Arc;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer, Record, ResumeError};
use hookchain::prelude::*;
use hookchain::{Durability, EndReason, ResumeFrom, Role};
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
    let refused = agent.step("run-1", []).await.unwrap_err();
    assert!(
        matches!(&refused, Error::Resume(error) if matches!(**error, ResumeError::Ended { .. })),
        "{refused}"
    );
}
