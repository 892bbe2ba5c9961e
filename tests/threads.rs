//! Threads and checkpoints used the way users will: futures dropped half-way, new runs on a
//! paused thread, checkpoints resumed twice or on the wrong thread, stored checkpoints claimed
//! by several workers at once. Each test is named after the rule it checks.

mod support;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{ApprovalResponse, HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    Checkpointer, Claim, FileCheckpointer, InMemoryCheckpointer, Lease, Record, ResumeError, Stored,
};
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{Checkpoint, EndReason, Model, ModelError, RunOutput, Thread, ThreadError, chain};
use serde_json::json;

use support::{assert_no_dangling, counting_tool, echo_tool, new_log};

/// The `charge` tool's calls: each one is a side effect that must happen at most once.
fn charge_call(id: &str) -> ToolCall {
    ToolCall::new(id, "charge", json!({ "text": "9.99" }))
}

fn ask_call(id: &str) -> ToolCall {
    ToolCall::new(id, "ask_user", json!({ "question": "Which card?" }))
}

/// The [`ResumeError`] of a refused resume.
#[track_caller]
fn resume_error(result: Result<RunOutput, Error>) -> ResumeError {
    match result {
        Err(Error::Resume(error)) => *error,
        other => panic!("expected Error::Resume, got {other:?}"),
    }
}

/// Answers every interrupt of `output` by approving all its actions.
fn approve_all(output: &RunOutput) -> Vec<(hookchain::InterruptId, serde_json::Value)> {
    let answers = ApprovalResponse::approve_every(output.interrupts());
    assert_eq!(answers.len(), output.interrupts().len(), "only approvals");
    answers
}

/// A model that answers its first call and never answers the next ones.
struct AnswersOnce(AtomicUsize);

impl Model for AnswersOnce {
    fn invoke(
        &self,
        _request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        let first = self.0.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if !first {
                std::future::pending::<()>().await;
            }
            Ok(ModelResponse::text("first answer"))
        }
    }
}

/// "A `run_in` future dropped before it ends leaves the thread as it was": before the fix, the
/// thread's history was moved into the run and lost with the dropped future.
#[tokio::test(start_paused = true)]
async fn a_dropped_run_leaves_its_thread_as_it_was() {
    let agent = Agent::builder(AnswersOnce(AtomicUsize::new(0)))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "one").await.unwrap();
    let before = thread.clone();
    assert_eq!(before.messages().len(), 2);

    let dropped = tokio::time::timeout(Duration::from_secs(1), agent.run_in(&mut thread, "two"));
    assert!(dropped.await.is_err(), "the second run never ends");

    assert_eq!(thread, before);
    assert_eq!(thread.messages().len(), 2);
    assert_eq!(thread.runs(), 1);
}

/// An agent whose model charges a card and asks the user which card, in one step; then answers.
fn charging_agent(charges: &Arc<AtomicUsize>) -> Agent<ScriptedModel> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([charge_call("c1"), ask_call("q1")]),
        ModelResponse::text("done"),
        ModelResponse::text("and again"),
    ]);
    Agent::builder(model)
        .tool(counting_tool("charge", charges))
        .tool(AskUser)
        .build()
        .unwrap()
}

/// "`run_in` on a paused thread is refused; giving the pause up keeps the results of calls that
/// completed and answers the others right after their calls": the card is charged once, ever,
/// and the next run's history is valid for a provider (the scripted model checks every request).
#[tokio::test]
async fn a_paused_thread_refuses_a_new_run_and_a_completed_call_never_runs_again() {
    let charges = Arc::new(AtomicUsize::new(0));
    let agent = charging_agent(&charges);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "pay").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(paused.text(), None, "a paused run has no answer");
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    assert!(thread.is_paused());

    let refused = agent.run_in(&mut thread, "pay again").await;
    assert!(
        matches!(&refused, Err(Error::Thread(error)) if matches!(**error, ThreadError::Paused { .. })),
        "{refused:?}"
    );
    assert_eq!(charges.load(Ordering::SeqCst), 1);

    assert!(thread.abandon_pause());
    assert!(!thread.is_paused());
    let history = thread.messages();
    // The call, then its two results right after it: the charge's own, and an error for the
    // question that was never answered.
    assert!(history[1].has_tool_calls());
    assert_eq!(history[2].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(history[2].content, "ran");
    assert_eq!(history[3].tool_call_id.as_deref(), Some("q1"));
    assert!(history[3].is_error);
    assert!(
        history[3].text().contains("abandoned"),
        "{}",
        history[3].content
    );

    let output = agent.run_in(&mut thread, "thanks").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    let request = &agent.model().requests()[1];
    assert_eq!(request.messages[4], Message::user("thanks"));
    assert_no_dangling(&output.messages);
}

/// "A checkpoint resumes only on its own thread": another thread, or a resume outside any
/// thread, is refused before anything runs.
#[tokio::test]
async fn a_checkpoint_resumes_only_on_its_own_thread() {
    let charges = Arc::new(AtomicUsize::new(0));
    let agent = charging_agent(&charges);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "pay").await.unwrap();
    let checkpoint = paused.checkpoint.clone().unwrap();
    assert_eq!(checkpoint.thread(), Some(thread.id()));
    let answers = vec![(paused.interrupts()[0].id.clone(), json!("the blue one"))];

    let mut other: Thread<()> = agent.thread();
    other.abandon_pause();
    let error = resume_error(
        agent
            .resume_in(&mut other, checkpoint.clone(), answers.clone())
            .await,
    );
    assert!(matches!(error, ResumeError::WrongThread { .. }), "{error}");
    assert!(other.messages().is_empty(), "the other thread is untouched");

    let error = resume_error(agent.resume(checkpoint.clone(), answers.clone()).await);
    assert!(
        matches!(error, ResumeError::ThreadCheckpoint { .. }),
        "{error}"
    );

    let output = agent
        .resume_in(&mut thread, checkpoint, answers)
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(charges.load(Ordering::SeqCst), 1);
}

/// An agent whose model wants to charge a card, behind human approval.
fn approved_charging_agent(charges: &Arc<AtomicUsize>) -> Agent<ScriptedModel, HumanInTheLoop> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([charge_call("c1")]),
        ModelResponse::text("charged"),
        ModelResponse::text("a second answer"),
    ]);
    Agent::builder(model)
        .tool(counting_tool("charge", charges))
        .chain(HumanInTheLoop::new().interrupt_on("charge", ToolPolicy::always()))
        .build()
        .unwrap()
}

/// "A checkpoint resumes at most once": resumed a second time on its thread, it is refused, the
/// approved charge does not happen again, and the thread's later history is not rewound.
#[tokio::test]
async fn a_spent_checkpoint_is_refused_and_the_approved_tool_runs_once() {
    let charges = Arc::new(AtomicUsize::new(0));
    let agent = approved_charging_agent(&charges);
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "pay").await.unwrap();
    let checkpoint = paused.checkpoint.clone().unwrap();
    assert_eq!(charges.load(Ordering::SeqCst), 0);

    let done = agent
        .resume_in(&mut thread, checkpoint.clone(), approve_all(&paused))
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("charged"));
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    let after = thread.clone();

    for _ in 0..3 {
        let error = resume_error(
            agent
                .resume_in(&mut thread, checkpoint.clone(), approve_all(&paused))
                .await,
        );
        assert!(matches!(error, ResumeError::Spent { .. }), "{error}");
    }
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    assert_eq!(thread, after, "the thread is not rewound");
}

/// "`Checkpointer::claim` hands a stored checkpoint to one worker": two tasks (in memory) or two
/// claimers of one file race to claim it; exactly one gets it, and the approved tool runs once.
#[tokio::test]
async fn a_stored_checkpoint_is_taken_by_one_caller_only() {
    let dir = std::env::temp_dir().join(format!("hookchain-take-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    resume_what_one_caller_takes(&InMemoryCheckpointer::new()).await;
    resume_what_one_caller_takes(&FileCheckpointer::new(&dir)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pauses a run, stores its checkpoint in `store`, claims it twice at once, and resumes what the
/// one successful claimer got.
async fn resume_what_one_caller_takes(store: &impl Checkpointer) {
    let charges = Arc::new(AtomicUsize::new(0));
    let agent = approved_charging_agent(&charges);
    let paused = agent.run("pay").await.unwrap();
    let answers = approve_all(&paused);
    let ttl = std::time::Duration::from_secs(30);
    let Claim::Granted { lease, .. } = store.claim("run-1", "api", ttl).await.unwrap() else {
        panic!("free");
    };
    store
        .put("run-1", &paused.checkpoint.unwrap(), &lease)
        .await
        .unwrap();
    let (first, second) = futures::join!(
        store.claim("run-1", "a", ttl),
        store.claim("run-1", "b", ttl)
    );
    let granted: Vec<(&str, Lease, Box<Checkpoint>)> =
        [("a", first.unwrap()), ("b", second.unwrap())]
            .into_iter()
            .filter_map(|(worker, claim)| match claim {
                Claim::Granted {
                    lease,
                    record: Ok(Some(Record::Checkpoint(checkpoint))),
                } => Some((worker, lease, checkpoint)),
                _ => None,
            })
            .collect();
    assert_eq!(granted.len(), 1, "exactly one caller gets it");
    let (holder, lease, checkpoint) = granted.into_iter().next().unwrap();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("run-1", Some(holder.to_owned()), false)]
    );
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("charged"));
    assert_eq!(charges.load(Ordering::SeqCst), 1);
    store.end("run-1", &lease, None).await.unwrap();
}

/// "`RunOutput::text` is this run's answer": after a pause there is none, even in a thread
/// whose earlier run answered.
#[tokio::test]
async fn text_after_a_pause_is_none_even_in_a_thread_with_an_earlier_answer() {
    let log = new_log();
    let model = ScriptedModel::new([
        ModelResponse::text("hello"),
        ModelResponse::tool_calls([ask_call("q1")]),
    ]);
    let agent = Agent::builder(model)
        .tool(AskUser)
        .tool(echo_tool(&log))
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let first = agent.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(first.text().as_deref(), Some("hello"));
    let second = agent.run_in(&mut thread, "ask me").await.unwrap();
    assert_eq!(second.end, EndReason::Interrupted);
    assert_eq!(second.text(), None);
    assert_eq!(second.final_message(), None);
}

/// Keeps the last two messages of the history: a trimmer of the user's own, as a custom
/// middleware would write one.
#[hookchain::hook(before_model)]
fn keep_last_two(cx: &mut Context, request: &mut ModelRequest) {
    let edit = cx.edit_history(|messages| {
        let old = messages.len().saturating_sub(2);
        messages.drain(..old);
    });
    edit.expect("a shorter history stays valid");
    request.messages = cx.messages().to_vec().into();
}

/// "`RunOutput::text` is this run's answer" after a hook removed older messages: the run's
/// start moves back with them (before the fix it stayed past the end, and the answer was lost).
#[tokio::test]
async fn text_is_the_answer_after_a_hook_trimmed_older_messages() {
    let model = ScriptedModel::new([
        ModelResponse::text("one"),
        ModelResponse::text("two"),
        ModelResponse::text("three"),
    ]);
    let agent = Agent::builder(model)
        .chain(chain![keep_last_two])
        .build()
        .unwrap();
    let mut thread = agent.thread();
    for (input, answer) in [("a", "one"), ("b", "two"), ("c", "three")] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        assert_eq!(output.text().as_deref(), Some(answer));
    }
}

/// A thread stored before threads had ids (its JSON has none) still loads, with a fresh id.
#[test]
fn a_thread_stored_without_an_id_still_loads() {
    let old = r#"{"messages":[{"role":"user","content":"hi"}],"state":null,"runs":1}"#;
    let thread: Thread<()> = serde_json::from_str(old).unwrap();
    assert_eq!(thread.runs(), 1);
    assert_eq!(thread.id().as_str().len(), 32);
    assert!(!thread.is_paused());
}

/// A stored thread says its format; one of a newer format is refused when read (never
/// misread), and one stored before the field existed reads as format 1.
#[test]
fn a_stored_thread_is_versioned() {
    let thread: Thread<()> = Thread::new();
    let mut json = serde_json::to_value(&thread).unwrap();
    assert_eq!(
        json["format"],
        serde_json::json!(hookchain::agent::THREAD_FORMAT)
    );
    let back: Thread<()> = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, thread);

    json["format"] = serde_json::json!(hookchain::agent::THREAD_FORMAT + 1);
    let error = serde_json::from_value::<Thread<()>>(json).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is newer than this version reads"),
        "{error}"
    );

    let old = r#"{"id":"t1","messages":[],"state":null,"runs":0}"#;
    let old: Thread<()> = serde_json::from_str(old).unwrap();
    assert_eq!(
        serde_json::to_value(&old).unwrap()["format"],
        serde_json::json!(1)
    );
}
