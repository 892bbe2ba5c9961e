//! Runs against a real Temporal dev server (`tests/support`): steps, a pause answered by a
//! signal, a cancellation, a retried step.

mod support;

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

use hookchain_temporal::{
    BoxFuture, Error, InterruptSummary, RunClient, RunOutcome, RunResult, RunStatus, StepContext,
    StepFailure, StepHandler, StepPolicy, StepReply, StepRequest, StepWorker, connect, step_fn,
};
use serde_json::{Value, json};
use support::{SCENARIO_TIMEOUT, quick_policy, start_server, wait_for_status, with_worker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_next_done() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let handler = step_fn(move |ctx: StepContext, request: StepRequest| {
        let log = log.clone();
        async move {
            ctx.heartbeat(json!({ "step": request.step })).await?;
            log.lock()
                .unwrap()
                .push((request.step, request.input.clone()));
            Ok::<_, Error>(if request.step < 3 {
                StepReply::Next
            } else {
                StepReply::Done {
                    summary: format!("{} done", request.key),
                }
            })
        }
    });
    with_worker(handler, |runs| async move {
        runs.start("run-a", json!({ "prompt": "hi" }), &quick_policy())
            .await
            .expect("started");
        let again = runs.start("run-a", json!({}), &quick_policy()).await;
        assert!(
            matches!(again, Err(Error::AlreadyRunning { .. })),
            "{again:?}"
        );
        let result = runs.result("run-a").await.expect("a result");
        assert_eq!(
            result,
            RunResult::Completed(RunOutcome {
                summary: "run-a done".to_owned(),
                steps: 3
            })
        );
        let status = runs
            .status("run-a")
            .await
            .expect("the status of a closed run");
        assert_eq!(status, RunStatus::Done { steps: 3 });
    })
    .await;
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1, Some(json!({ "prompt": "hi" }))), (2, None), (3, None)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_then_answered() {
    let handler = step_fn(|_ctx: StepContext, request: StepRequest| async move {
        Ok::<_, Error>(match request.step {
            1 => StepReply::Paused {
                interrupts: vec![InterruptSummary::new("approve-payment")],
            },
            _ => StepReply::Done {
                summary: format!("answers: {}", request.input.unwrap_or(Value::Null)),
            },
        })
    });
    with_worker(handler, |runs| async move {
        runs.start("run-b", json!(null), &quick_policy())
            .await
            .expect("started");
        let status =
            wait_for_status(&runs, "run-b", |s| matches!(s, RunStatus::Paused { .. })).await;
        assert_eq!(
            status,
            RunStatus::Paused {
                step: 1,
                interrupts: vec![InterruptSummary::new("approve-payment")]
            }
        );
        // Still paused a moment later: nothing runs without answers.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(runs.status("run-b").await.expect("status"), status);
        runs.answer("run-b", json!({ "approve-payment": true }))
            .await
            .expect("answered");
        let result = runs.result("run-b").await.expect("a result");
        assert_eq!(
            result,
            RunResult::Completed(RunOutcome {
                summary: r#"answers: {"approve-payment":true}"#.to_owned(),
                steps: 2,
            })
        );
    })
    .await;
}

/// Pauses on the first step; counts cleanups.
struct PausingHandler {
    cleanups: Arc<Mutex<Vec<String>>>,
}

impl StepHandler for PausingHandler {
    fn step(
        &self,
        _ctx: StepContext,
        _request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>> {
        Box::pin(async {
            Ok(StepReply::Paused {
                interrupts: vec![InterruptSummary::new("question")],
            })
        })
    }

    fn cleanup(&self, key: String) -> BoxFuture<Result<(), StepFailure>> {
        self.cleanups.lock().unwrap().push(key);
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_while_paused() {
    let cleanups = Arc::new(Mutex::new(Vec::new()));
    let handler = PausingHandler {
        cleanups: cleanups.clone(),
    };
    with_worker(handler, |runs| async move {
        runs.start("run-c", json!(null), &quick_policy())
            .await
            .expect("started");
        wait_for_status(&runs, "run-c", |s| matches!(s, RunStatus::Paused { .. })).await;
        runs.cancel("run-c", "the user left")
            .await
            .expect("cancel requested");
        assert_eq!(
            runs.result("run-c").await.expect("a result"),
            RunResult::Cancelled
        );
        assert_eq!(
            runs.status("run-c").await.expect("status"),
            RunStatus::Cancelled
        );
        let late = runs.answer("run-c", json!({})).await;
        assert!(matches!(late, Err(Error::Interaction { .. })), "{late:?}");
    })
    .await;
    assert_eq!(*cleanups.lock().unwrap(), vec!["run-c".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempt_is_retried() {
    let attempts = Arc::new(AtomicU32::new(0));
    let resumed_from = Arc::new(Mutex::new(None));
    let (count, resumed) = (attempts.clone(), resumed_from.clone());
    let handler = step_fn(move |ctx: StepContext, request: StepRequest| {
        let (count, resumed) = (count.clone(), resumed.clone());
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            if ctx.attempt() == 1 {
                ctx.heartbeat(json!({ "tool_calls_done": 2 })).await?;
                return Err(StepFailure::retryable("the model's server answered 503"));
            }
            *resumed.lock().unwrap() = Some(ctx.last_heartbeat::<Value>()?);
            Ok(StepReply::Done {
                summary: format!("{} after {} attempts", request.key, ctx.attempt()),
            })
        }
    });
    with_worker(handler, |runs| async move {
        runs.start("run-d", json!(null), &quick_policy())
            .await
            .expect("started");
        assert_eq!(
            runs.result("run-d").await.expect("a result"),
            RunResult::Completed(RunOutcome {
                summary: "run-d after 2 attempts".to_owned(),
                steps: 1
            })
        );
    })
    .await;
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    eprintln!(
        "heartbeat details seen by attempt 2: {:?}",
        resumed_from.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_retryable_failure_fails_the_run() {
    let attempts = Arc::new(AtomicU32::new(0));
    let count = attempts.clone();
    let handler = step_fn(move |_ctx: StepContext, _request: StepRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Err::<StepReply, _>(StepFailure::non_retryable("the request is malformed")) }
    });
    with_worker(handler, |runs| async move {
        runs.start("run-e", json!(null), &quick_policy())
            .await
            .expect("started");
        let result = runs.result("run-e").await;
        assert!(matches!(result, Err(Error::Run { .. })), "{result:?}");
    })
    .await;
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

/// Heartbeats until told to stop; records how long the news took.
struct LongStep {
    stopped_after: Arc<Mutex<Option<Duration>>>,
    cleanups: Arc<AtomicU32>,
}

impl StepHandler for LongStep {
    fn step(
        &self,
        ctx: StepContext,
        _request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>> {
        let stopped_after = self.stopped_after.clone();
        Box::pin(async move {
            let started = Instant::now();
            for done in 0..200 {
                ctx.heartbeat(json!({ "tool_calls_done": done })).await?;
                if ctx.is_cancelled() {
                    *stopped_after.lock().unwrap() = Some(started.elapsed());
                    return Err(StepFailure::cancelled());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(StepReply::Done {
                summary: "never cancelled".to_owned(),
            })
        })
    }

    fn cleanup(&self, _key: String) -> BoxFuture<Result<(), StepFailure>> {
        self.cleanups.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_mid_step() {
    let stopped_after = Arc::new(Mutex::new(None));
    let cleanups = Arc::new(AtomicU32::new(0));
    let handler = LongStep {
        stopped_after: stopped_after.clone(),
        cleanups: cleanups.clone(),
    };
    let stopped = stopped_after.clone();
    with_worker(handler, |runs| async move {
        // Heartbeats are throttled to 80% of the timeout: the cancellation reaches the step
        // within about that.
        let policy = StepPolicy {
            heartbeat_timeout: Some(Duration::from_secs(1)),
            ..quick_policy()
        };
        runs.start("run-f", json!(null), &policy)
            .await
            .expect("started");
        wait_for_status(&runs, "run-f", |s| {
            matches!(s, RunStatus::Running { step: 1 })
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        runs.cancel("run-f", "the user left")
            .await
            .expect("cancel requested");
        assert_eq!(
            runs.result("run-f").await.expect("a result"),
            RunResult::Cancelled
        );
        // The workflow does not wait for the step (cancellation type TryCancel): the step learns
        // of it at its next heartbeat.
        let deadline = Instant::now() + Duration::from_secs(5);
        while stopped.lock().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the step was never told of the cancellation"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let stopped_after = stopped_after.lock().unwrap().expect("stopped");
    eprintln!("the step stopped {stopped_after:?} after it started");
    assert!(stopped_after < Duration::from_secs(10), "{stopped_after:?}");
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_steps_fail_the_run() {
    let steps = Arc::new(AtomicU32::new(0));
    let count = steps.clone();
    let handler = step_fn(move |_ctx: StepContext, _request: StepRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Error>(StepReply::Next) }
    });
    with_worker(handler, |runs| async move {
        let policy = StepPolicy {
            max_steps: 3,
            ..quick_policy()
        };
        runs.start("run-g", json!(null), &policy)
            .await
            .expect("started");
        let result = runs.result("run-g").await;
        assert!(matches!(result, Err(Error::Run { .. })), "{result:?}");
    })
    .await;
    assert_eq!(steps.load(Ordering::SeqCst), 3);
}

/// Answers every step with `Done`, naming the worker; pauses on the first.
fn named_handler(name: &'static str) -> impl StepHandler {
    step_fn(move |_ctx: StepContext, request: StepRequest| async move {
        Ok::<_, Error>(match request.step {
            1 => StepReply::Paused {
                interrupts: vec![InterruptSummary::new("question")],
            },
            _ => StepReply::Done {
                summary: format!("resumed by {name}"),
            },
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_worker_resumes_the_run() {
    let server = start_server();
    let client = connect(server.address(), server.namespace())
        .await
        .expect("a client of the dev server");
    let runs = RunClient::new(client.clone(), "handoff");

    // Worker A runs the first step, which pauses; then A stops.
    let a = StepWorker::new(client.clone(), "handoff", named_handler("A")).expect("worker A");
    let stop_a = a.shutdown_handle();
    let a_run = a.run();
    tokio::pin!(a_run);
    tokio::select! {
        result = &mut a_run => panic!("worker A stopped early: {result:?}"),
        _ = async {
            runs.start("run-h", json!(null), &quick_policy()).await.expect("started");
            wait_for_status(&runs, "run-h", |s| matches!(s, RunStatus::Paused { .. })).await;
        } => {}
    }
    stop_a.shutdown();
    a_run.await.expect("worker A shut down cleanly");

    // Worker B, which never saw the run, resumes it from its history.
    let b = StepWorker::new(client, "handoff", named_handler("B")).expect("worker B");
    let stop_b = b.shutdown_handle();
    let b_run = b.run();
    tokio::pin!(b_run);
    tokio::select! {
        result = &mut b_run => panic!("worker B stopped early: {result:?}"),
        _ = async {
            let answered = Instant::now();
            runs.answer("run-h", json!({ "question": "yes" })).await.expect("answered");
            let result = tokio::time::timeout(SCENARIO_TIMEOUT, runs.result("run-h"))
                .await
                .expect("worker B finished the run in time")
                .expect("a result");
            eprintln!("worker B finished the run {:?} after the answer", answered.elapsed());
            assert_eq!(
                result,
                RunResult::Completed(RunOutcome { summary: "resumed by B".to_owned(), steps: 2 })
            );
        } => {}
    }
    stop_b.shutdown();
    b_run.await.expect("worker B shut down cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_by_an_update() {
    let handler = step_fn(|_ctx: StepContext, request: StepRequest| async move {
        Ok::<_, Error>(match request.step {
            1 => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                StepReply::Next
            }
            2 => StepReply::Paused {
                interrupts: vec![InterruptSummary::new("question")],
            },
            _ => StepReply::Done {
                summary: format!("answers: {}", request.input.unwrap_or(Value::Null)),
            },
        })
    });
    with_worker(handler, |runs| async move {
        runs.start("run-i", json!(null), &quick_policy())
            .await
            .expect("started");
        // Not paused yet: refused, and the run goes on.
        let early = runs.resume("run-i", json!("too early")).await;
        assert!(matches!(early, Err(Error::Rejected { .. })), "{early:?}");
        wait_for_status(&runs, "run-i", |s| matches!(s, RunStatus::Paused { .. })).await;
        // Not an answer to the pause's interrupt: refused, and the run still waits.
        let elsewhere = runs.resume("run-i", json!("yes")).await;
        assert!(
            matches!(&elsewhere, Err(Error::Rejected { reason, .. }) if reason.contains("[question]")),
            "{elsewhere:?}"
        );
        assert_eq!(
            runs.resume("run-i", json!({ "question": "yes" }))
                .await
                .expect("taken"),
            2
        );
        assert_eq!(
            runs.result("run-i").await.expect("a result"),
            RunResult::Completed(RunOutcome {
                summary: r#"answers: {"question":"yes"}"#.to_owned(),
                steps: 3
            })
        );
        let late = runs.resume("run-i", json!("too late")).await;
        assert!(matches!(late, Err(Error::Update { .. })), "{late:?}");
    })
    .await;
}
