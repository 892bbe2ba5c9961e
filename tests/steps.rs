//! Runs that go one step at a time (`Agent::start_step`, `Agent::step`): what an engine or a
//! queue drives, a step per task, possibly each on another worker. A stepped run is the same
//! run as one in one go; a step is one model call and its tool calls; a retried step never
//! starts the run over nor runs a completed call again.

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{Checkpointer, Clock, InMemoryCheckpointer, Record, ResumeError};
use hookchain::prelude::*;
use hookchain::{AgentBuilder, Durability, EndReason, Role, RunOutput, chain};
use serde_json::json;
use support::{EffectTool, Effects, Recorder, approve_all, assert_no_dangling, events, new_log};

const LEASE: Duration = Duration::from_secs(30);

/// A model that calls `a`, then `b` and `c` at once, then answers.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let results = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        Ok(match results {
            0 => ModelResponse::tool_calls([ToolCall::new("call_a", "a", json!({}))]),
            1 => ModelResponse::tool_calls([
                ToolCall::new("call_b", "b", json!({})),
                ToolCall::new("call_c", "c", json!({})),
            ]),
            _ => ModelResponse::text("all done").with_usage(hookchain::Usage::new(3, 2)),
        })
    })
}

/// An agent of the model and its tools `a`, `b`, `c` (which hangs if `hang`), recording in
/// `ran`.
fn builder(ran: &Effects, hang: bool) -> AgentBuilder<ScriptedModel> {
    let tool = |name, hang| EffectTool {
        name,
        effects: ran.clone(),
        hang,
    };
    Agent::builder(model())
        .tool(tool("a", false))
        .tool(tool("b", false))
        .tool(tool("c", hang))
}

/// Worker `worker`'s agent on `store`; its tool `c` hangs if `hang`.
fn agent(
    store: &Arc<InMemoryCheckpointer>,
    worker: &str,
    ran: &Effects,
    hang: bool,
) -> Agent<ScriptedModel> {
    builder(ran, hang)
        .checkpointer(store.clone(), Durability::Pauses)
        .worker(worker)
        .lease(LEASE)
        .build()
        .unwrap()
}

fn store() -> Arc<InMemoryCheckpointer> {
    Arc::new(InMemoryCheckpointer::new().with_clock(Clock::tokio()))
}

/// Steps the run under `key` to its end (or pause) with `agents` in turn, one step each.
async fn step_through<C: Middleware>(
    agents: &[&Agent<ScriptedModel, C>],
    key: &str,
) -> Vec<RunOutput> {
    let mut outputs = vec![agents[0].start_step(key, "go").await.unwrap()];
    for turn in 1.. {
        if outputs.last().unwrap().end != EndReason::Stepped {
            break;
        }
        let agent = agents[turn % agents.len()];
        outputs.push(agent.step(key, []).await.unwrap());
    }
    outputs
}

#[tokio::test(start_paused = true)]
async fn a_stepped_run_is_the_run_in_one_go_one_model_call_per_step() {
    let ran = Effects::memory();
    let whole = agent(&store(), "w", &Effects::memory(), false)
        .run("go")
        .await
        .unwrap();

    let store = store();
    let agent = agent(&store, "worker-1", &ran, false);
    let outputs = step_through(&[&agent], "order-1").await;
    let ends: Vec<_> = outputs.iter().map(|output| output.end).collect();
    assert_eq!(
        ends,
        [EndReason::Stepped, EndReason::Stepped, EndReason::Finished]
    );
    let calls: Vec<_> = outputs.iter().map(|output| output.model_calls).collect();
    assert_eq!(calls, [1, 2, 3], "one model call per step");
    let last = outputs.last().unwrap();
    assert_eq!(last.messages, whole.messages);
    assert_eq!(
        (last.steps, last.tool_calls, last.usage),
        (whole.steps, whole.tool_calls, whole.usage)
    );
    assert_eq!(last.text().as_deref(), Some("all done"));
    assert_no_dangling(&last.messages);
    // Each tool ran once, under its own idempotency key.
    assert_eq!(ran.lines().len(), 3, "{:?}", ran.lines());
    // Between steps the key was free; the run's end leaves its tombstone.
    let stored = store.list().await.unwrap();
    assert!(stored[0].ended && stored[0].held_by.is_none(), "{stored:?}");
}

#[tokio::test(start_paused = true)]
async fn each_step_may_run_on_another_worker() {
    let store = store();
    let ran = Effects::memory();
    let (one, two) = (
        agent(&store, "worker-1", &ran, false),
        agent(&store, "worker-2", &ran, false),
    );
    let outputs = step_through(&[&one, &two], "order-2").await;
    assert_eq!(outputs.last().unwrap().end, EndReason::Finished);
    assert_eq!(one.model().calls() + two.model().calls(), 3);
    assert_eq!(two.model().calls(), 1, "the second step ran on worker-2");
    assert_eq!(ran.lines().len(), 3);
}

/// `before_agent` runs once, at the first step; `after_agent` once, at the last.
#[tokio::test(start_paused = true)]
async fn the_run_hooks_run_once_not_per_step() {
    let log = new_log();
    let store = store();
    let ran = Effects::memory();
    let agent = builder(&ran, false)
        .chain(chain![Recorder::new("r", &log)])
        .checkpointer(store, Durability::Pauses)
        .build()
        .unwrap();
    let outputs = step_through(&[&agent], "order-3").await;
    assert_eq!(outputs.len(), 3);
    let log = events(&log);
    let count = |event: &str| log.iter().filter(|e| *e == event).count();
    assert_eq!(count("r:before_agent"), 1, "{log:?}");
    assert_eq!(count("r:after_agent"), 1, "{log:?}");
    assert_eq!(count("r:before_model"), 3, "{log:?}");
    assert_eq!(log.last().map(String::as_str), Some("r:after_agent"));
}

/// A retried first step (its answer lost) goes on from what the first attempt stored; a start
/// or a step of a run that ended hands its end back (kept with its tombstone): never a second
/// run under one key.
#[tokio::test(start_paused = true)]
async fn a_retried_start_never_starts_the_run_over() {
    let store = store();
    let ran = Effects::memory();
    let agent = agent(&store, "worker-1", &ran, false);
    let first = agent.start_step("order-4", "go").await.unwrap();
    assert_eq!(first.end, EndReason::Stepped);
    let again = agent.start_step("order-4", "go").await.unwrap();
    assert_eq!(again.model_calls, 2, "the retry ran the second step");
    let done = agent.step("order-4", []).await.unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(agent.model().calls(), 3);

    for again in [
        agent.start_step("order-4", "go").await.unwrap(),
        agent.step("order-4", []).await.unwrap(),
    ] {
        assert_eq!(again.end, EndReason::Finished);
        assert_eq!(again.text(), done.text());
        assert_eq!(again.messages.len(), done.messages.len());
    }
    assert_eq!(agent.model().calls(), 3, "nothing ran");
}

/// A pause is where a step stops: the next step carries the answers. A step asked without
/// them reports the pause and runs nothing.
#[tokio::test(start_paused = true)]
async fn a_paused_run_goes_on_with_the_answers_of_the_next_step() {
    let store = store();
    let ran = Effects::memory();
    let agent = builder(&ran, false)
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("b", ToolPolicy::always())
        ])
        .checkpointer(store.clone(), Durability::Pauses)
        .build()
        .unwrap();
    assert_eq!(
        agent.start_step("order-5", "go").await.unwrap().end,
        EndReason::Stepped
    );
    let paused = agent.step("order-5", []).await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(paused.interrupts().len(), 1);
    let checkpoint = paused.checkpoint.clone().unwrap();
    // Asked again without answers (a duplicated task): the pause, as it stands.
    let same = agent.step("order-5", []).await.unwrap();
    assert_eq!(same.end, EndReason::Interrupted);
    assert_eq!(
        same.checkpoint.as_ref().map(|c| c.id()),
        Some(checkpoint.id())
    );
    assert_eq!(ran.of("b").len(), 0);
    // Also on a retried start.
    let restarted = agent.start_step("order-5", "go").await.unwrap();
    assert_eq!(restarted.end, EndReason::Interrupted);

    let approved = agent
        .step("order-5", approve_all(&checkpoint))
        .await
        .unwrap();
    assert_eq!(
        approved.end,
        EndReason::Stepped,
        "the approved step ran its calls"
    );
    assert_eq!((ran.of("b").len(), ran.of("c").len()), (1, 1));
    let done = agent.step("order-5", []).await.unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(agent.model().calls(), 3);
}

/// A step whose worker died mid-way is taken over once its lease expired: its completed call
/// does not run again, the one in flight runs again with the same idempotency key.
#[tokio::test(start_paused = true)]
async fn a_step_whose_worker_died_is_finished_by_the_next_without_running_a_call_twice() {
    let store = store();
    let ran = Effects::memory();
    let dying = agent(&store, "worker-1", &ran, true);
    assert_eq!(
        dying.start_step("order-6", "go").await.unwrap().end,
        EndReason::Stepped
    );
    // The second step runs `b` and `c`; `c` hangs, and the worker dies there.
    let mut step = Box::pin(dying.step("order-6", []));
    assert!(
        tokio::time::timeout(Duration::from_millis(1), &mut step)
            .await
            .is_err()
    );
    std::mem::forget(step);

    let other = agent(&store, "worker-2", &ran, false);
    let busy = other.step("order-6", []).await.unwrap_err();
    assert!(matches!(busy, Error::Checkpoint(_)), "{busy:?}");
    tokio::time::advance(LEASE + Duration::from_secs(1)).await;
    let finished = other.step("order-6", []).await.unwrap();
    assert_eq!(
        finished.end,
        EndReason::Stepped,
        "the step it took over ended"
    );
    let done = other.step("order-6", []).await.unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(ran.of("a").len(), 1);
    assert_eq!(ran.of("b").len(), 1, "the completed call did not run again");
    let c = ran.of("c");
    assert_eq!(c.len(), 2, "the call in flight ran again");
    assert_eq!(c[0], c[1], "with the same idempotency key");
    assert_no_dangling(&done.messages);
}

#[tokio::test]
async fn a_stepped_run_streams_its_events_on_the_side() {
    let store = store();
    let ran = Effects::memory();
    let agent = agent(&store, "worker-1", &ran, false);
    let events: Vec<AgentEvent> = agent
        .stream_start_step("order-7", "go")
        .try_collect()
        .await
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCallFinished(_)))
    );
    let Some(AgentEvent::Output(output)) = events.last() else {
        panic!("the stream ends with the output");
    };
    assert_eq!(output.end, EndReason::Stepped);
    let events: Vec<AgentEvent> = agent
        .stream_step("order-7", [])
        .try_collect()
        .await
        .unwrap();
    let started = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCallStarted(_)))
        .count();
    assert_eq!(started, 2, "the second step's calls: b and c");
}

#[tokio::test]
async fn max_steps_holds_across_steps_and_a_store_is_needed() {
    let store = store();
    let agent = Agent::builder(model())
        .checkpointer(store.clone(), Durability::Pauses)
        .max_steps(2)
        .build()
        .unwrap();
    assert_eq!(
        agent.start_step("order-8", "go").await.unwrap().end,
        EndReason::Stepped
    );
    assert_eq!(
        agent.step("order-8", []).await.unwrap().end,
        EndReason::Stepped
    );
    let error = agent.step("order-8", []).await.unwrap_err();
    assert!(
        matches!(error, Error::MaxStepsExceeded { max_steps: 2 }),
        "{error:?}"
    );
    // A failed step leaves the run where its last step left it (an error is not an end: a step
    // that failed on a provider's outage is tried again), and runs nothing more.
    assert!(matches!(
        store.get("order-8").await.unwrap(),
        Some(Record::Checkpoint(_))
    ));
    assert!(agent.step("order-8", []).await.is_err());
    assert_eq!(agent.model().calls(), 2);

    let without = Agent::builder(model()).build().unwrap();
    let error = without.start_step("order-9", "go").await.unwrap_err();
    assert!(
        matches!(&error, Error::Resume(error) if matches!(**error, ResumeError::NoCheckpointer)),
        "{error:?}"
    );
}

/// A cancelled run ends where its last step left it: a paused one without answers, its waiting
/// calls answered as not executed, `after_agent` once, its key holding its tombstone.
#[tokio::test(start_paused = true)]
async fn a_cancelled_run_ends_at_once_and_is_never_stepped_again() {
    let log = new_log();
    let store = store();
    let ran = Effects::memory();
    let agent = builder(&ran, false)
        .chain(chain![
            Recorder::new("r", &log),
            HumanInTheLoop::new().interrupt_on("a", ToolPolicy::always())
        ])
        .checkpointer(store.clone(), Durability::Pauses)
        .build()
        .unwrap();
    let paused = agent.start_step("order-10", "go").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let cancelled = agent.cancel_step("order-10").await.unwrap();
    assert_eq!(cancelled.end, EndReason::Cancelled);
    assert_no_dangling(&cancelled.messages);
    // The answer waiting for approval never passed `after_model`: it never entered the
    // history (as a rejected one would not).
    let roles: Vec<_> = cancelled.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User]);
    assert!(ran.lines().is_empty(), "the waiting call never ran");
    assert_eq!(
        events(&log)
            .iter()
            .filter(|e| *e == "r:after_agent")
            .count(),
        1
    );
    let Some(Record::Ended(tombstone)) = store.get("order-10").await.unwrap() else {
        panic!("a tombstone");
    };
    assert_eq!(tombstone.how, "cancelled");
    // A step asked after: the cancelled end, handed back; a second cancel: refused.
    let again = agent.step("order-10", []).await.unwrap();
    assert_eq!(again.end, EndReason::Cancelled);
    let error = agent.cancel_step("order-10").await.unwrap_err();
    assert!(
        matches!(&error, Error::Resume(error) if matches!(**error, ResumeError::Ended { .. })),
        "{error:?}"
    );
}

/// Cancelled after its worker died mid-step: the completed call keeps its result, the one in
/// flight is answered as not executed.
#[tokio::test(start_paused = true)]
async fn a_run_cancelled_mid_step_keeps_its_completed_results() {
    let store = store();
    let ran = Effects::memory();
    let dying = agent(&store, "worker-1", &ran, true);
    dying.start_step("order-11", "go").await.unwrap();
    let mut step = Box::pin(dying.step("order-11", []));
    assert!(
        tokio::time::timeout(Duration::from_millis(1), &mut step)
            .await
            .is_err()
    );
    std::mem::forget(step);
    let other = agent(&store, "worker-2", &ran, false);
    assert!(
        other.cancel_step("order-11").await.is_err(),
        "a step holds the key"
    );
    tokio::time::advance(LEASE + Duration::from_secs(1)).await;
    let cancelled = other.cancel_step("order-11").await.unwrap();
    assert_eq!(cancelled.end, EndReason::Cancelled);
    assert_no_dangling(&cancelled.messages);
    let results = support::tool_results(&cancelled.messages);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[1].1, "b done");
    assert!(
        results[2].2,
        "the call in flight is an error result: {results:?}"
    );
    assert_eq!(ran.of("c").len(), 1, "and it did not run again");
}

/// The retry of a step that carried the answers to a pause, whose first attempt took them and
/// died further on: the same answers again are to a pause the run is past, and the step goes on
/// from the store without them (it used to be refused: the interrupts were no longer pending).
#[tokio::test(start_paused = true)]
async fn a_retried_step_with_answers_already_taken_goes_on_without_them() {
    let store = store();
    let ran = Effects::memory();
    let worker = |name, hang| {
        builder(&ran, hang)
            .chain(chain![
                HumanInTheLoop::new().interrupt_on("b", ToolPolicy::always())
            ])
            .checkpointer(store.clone(), Durability::Pauses)
            .worker(name)
            .lease(LEASE)
            .build()
            .unwrap()
    };
    let dying = worker("worker-1", true);
    dying.start_step("order-12", "go").await.unwrap();
    let paused = dying.step("order-12", []).await.unwrap();
    let answers = approve_all(paused.checkpoint.as_ref().unwrap());
    // The approved step runs `b`, then `c` hangs: the worker dies there.
    let mut step = Box::pin(dying.step("order-12", answers.clone()));
    assert!(
        tokio::time::timeout(Duration::from_millis(1), &mut step)
            .await
            .is_err()
    );
    std::mem::forget(step);
    tokio::time::advance(LEASE + Duration::from_secs(1)).await;

    let other = worker("worker-2", false);
    let retried = other.step("order-12", answers.clone()).await.unwrap();
    assert_eq!(retried.end, EndReason::Stepped);
    assert_eq!(ran.of("b").len(), 1, "the approved call ran once");
    assert_eq!(ran.of("c").len(), 2, "the call in flight ran again");
    // Answers to no pause of this run are still refused, and nothing runs.
    let wrong = [(
        hookchain::InterruptId::new("7/1:after_model:0:X"),
        json!(true),
    )];
    let error = other.step("order-12", wrong).await.unwrap_err();
    assert!(
        matches!(&error, Error::Resume(error) if matches!(**error, ResumeError::UnknownInterrupt { .. })),
        "{error:?}"
    );
    let done = other.step("order-12", []).await.unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(other.model().calls() + dying.model().calls(), 3);
}
