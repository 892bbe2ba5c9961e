//! `CircuitBreaker`, rule by rule (DESIGN §11), on tokio's paused clock.
#![cfg(feature = "tokio")]

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::builtin::circuit_breaker::CircuitOpen;
use hookchain::builtin::{CircuitBreaker, ModelFallback};
use hookchain::model::ModelRouter;
use hookchain::prelude::*;
use hookchain::{Model, ModelError, ModelErrorKind, chain};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A model that answers from a script of (time taken, outcome), "ok" after it; counts calls.
#[derive(Default)]
struct Script {
    steps: Mutex<VecDeque<(Duration, Result<ModelResponse, ModelError>)>>,
    calls: AtomicUsize,
}

impl Script {
    fn new(steps: impl IntoIterator<Item = Result<ModelResponse, ModelError>>) -> Self {
        Self::timed(steps.into_iter().map(|step| (Duration::ZERO, step)))
    }

    fn timed(
        steps: impl IntoIterator<Item = (Duration, Result<ModelResponse, ModelError>)>,
    ) -> Self {
        Script {
            steps: Mutex::new(steps.into_iter().collect()),
            calls: AtomicUsize::new(0),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Model for Script {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let step = self.steps.lock().unwrap().pop_front();
        let (time, outcome) = step.unwrap_or((Duration::ZERO, Ok(ModelResponse::text("ok"))));
        tokio::time::sleep(time).await;
        outcome
    }
}

fn down() -> Result<ModelResponse, ModelError> {
    Err(ModelError::overloaded("the provider is down"))
}

fn ok() -> Result<ModelResponse, ModelError> {
    Ok(ModelResponse::text("ok"))
}

fn breaker(threshold: u32, cool_down: Duration) -> CircuitBreaker {
    CircuitBreaker::builder()
        .failure_threshold(threshold)
        .cool_down(cool_down)
        .build()
        .unwrap()
}

/// The `CircuitOpen` of a refused call's error.
#[track_caller]
fn refusal(result: Result<hookchain::RunOutput, Error>) -> (ModelError, CircuitOpen) {
    match result {
        Err(Error::Model(error)) => {
            let open = std::error::Error::source(&error)
                .and_then(|s| s.downcast_ref::<CircuitOpen>())
                .expect("a CircuitOpen source")
                .clone();
            (*error, open)
        }
        other => panic!("expected a refused call, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn after_n_consecutive_failures_calls_fail_fast_for_the_cool_down() {
    let agent = Agent::builder(Script::new([down(), down(), down()]))
        .chain(chain![breaker(3, secs(30))])
        .build()
        .unwrap();
    for _ in 0..3 {
        let error = agent.run("hi").await.unwrap_err();
        assert!(matches!(error, Error::Model(e) if e.kind() == ModelErrorKind::Overloaded));
    }
    assert_eq!(agent.model().calls(), 3);

    // Open: the model is not called; the error says how long is left, and is not retryable.
    tokio::time::sleep(secs(10)).await;
    let (error, open) = refusal(agent.run("hi").await);
    assert_eq!(agent.model().calls(), 3);
    assert_eq!(error.kind(), ModelErrorKind::Other);
    assert!(!error.is_retryable());
    assert_eq!(error.retry_after(), Some(secs(20)));
    assert_eq!(open.retry_in(), Some(secs(20)));
    assert_eq!(open.model(), None);
    assert_eq!(
        open.to_string(),
        "the circuit of the agent's model is open after 3 consecutive failures; retry in 20s"
    );
}

#[tokio::test(start_paused = true)]
async fn a_success_resets_the_count() {
    let agent = Agent::builder(Script::new([down(), down(), ok(), down(), down(), ok()]))
        .chain(chain![breaker(3, secs(30))])
        .build()
        .unwrap();
    for _ in 0..6 {
        let _ = agent.run("hi").await;
    }
    assert_eq!(agent.model().calls(), 6, "never three failures in a row");
}

#[tokio::test(start_paused = true)]
async fn errors_of_non_retryable_kinds_do_not_count() {
    let bad = || Err(ModelError::invalid_request("bad request"));
    let agent = Agent::builder(Script::new([bad(), bad(), bad(), bad()]))
        .chain(chain![breaker(2, secs(30))])
        .build()
        .unwrap();
    for _ in 0..4 {
        let error = agent.run("hi").await.unwrap_err();
        assert!(matches!(error, Error::Model(e) if e.kind() == ModelErrorKind::InvalidRequest));
    }
    assert_eq!(agent.model().calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn after_the_cool_down_a_trial_call_that_succeeds_closes_the_circuit() {
    let agent = Agent::builder(Script::new([down(), down()]))
        .chain(chain![breaker(2, secs(30))])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap_err();
    agent.run("hi").await.unwrap_err();
    refusal(agent.run("hi").await);
    tokio::time::sleep(secs(30)).await;
    // The trial passes; the circuit is closed again.
    assert_eq!(agent.run("hi").await.unwrap().text().as_deref(), Some("ok"));
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_trial_call_that_fails_opens_the_circuit_for_another_cool_down() {
    let agent = Agent::builder(Script::new([down(), down(), down()]))
        .chain(chain![breaker(2, secs(30))])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap_err();
    agent.run("hi").await.unwrap_err();
    tokio::time::sleep(secs(30)).await;
    let trial = agent.run("hi").await.unwrap_err();
    assert!(matches!(trial, Error::Model(e) if e.kind() == ModelErrorKind::Overloaded));
    assert_eq!(agent.model().calls(), 3);
    // One failed trial is enough to open it again, for a full cool-down.
    let (error, _) = refusal(agent.run("hi").await);
    assert_eq!(error.retry_after(), Some(secs(30)));
    tokio::time::sleep(secs(30)).await;
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn calls_during_the_trial_fail_fast() {
    let agent = Agent::builder(Script::timed([(Duration::ZERO, down()), (secs(5), ok())]))
        .chain(chain![breaker(1, secs(30))])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap_err();
    tokio::time::sleep(secs(30)).await;
    // The trial takes 5 s; a call one second into it is refused without waiting.
    let trial = agent.run("trial");
    let other = async {
        tokio::time::sleep(secs(1)).await;
        agent.run("other").await
    };
    let (trial, other) = tokio::join!(trial, other);
    assert_eq!(trial.unwrap().text().as_deref(), Some("ok"));
    let (_, open) = refusal(other);
    assert_eq!(open.retry_in(), None, "a trial is under way");
    assert!(open.to_string().ends_with("(a trial call is under way)"));
    assert_eq!(agent.model().calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_trial_lets_the_next_call_try() {
    let agent = Agent::builder(Script::timed([(Duration::ZERO, down()), (secs(100), ok())]))
        .chain(chain![breaker(1, secs(30))])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap_err();
    tokio::time::sleep(secs(30)).await;
    // The trial's future is dropped after 1 s.
    assert!(
        tokio::time::timeout(secs(1), agent.run("hi"))
            .await
            .is_err()
    );
    // The next call is a trial again: it reaches the model.
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn each_model_has_its_own_circuit() {
    let main = Script::new([down(), down()]);
    let backup = Script::new([]);
    let router = ModelRouter::new(main).route("backup", backup);
    let agent = Agent::builder(router)
        .chain(chain![
            ModelFallback::builder().model("backup").build().unwrap(),
            breaker(2, secs(30)),
        ])
        .build()
        .unwrap();
    // Two runs: the main model fails, the backup answers.
    for _ in 0..2 {
        assert_eq!(agent.run("hi").await.unwrap().text().as_deref(), Some("ok"));
    }
    // The main model's circuit is open; the backup's is closed: the fallback goes on at once.
    let start = tokio::time::Instant::now();
    for _ in 0..3 {
        let output = agent.run("hi").await.unwrap();
        assert_eq!(output.model_calls, 1, "only the backup was called");
    }
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    let error = CircuitBreaker::builder()
        .failure_threshold(0)
        .build()
        .unwrap_err();
    assert_eq!(error.field(), "failure_threshold");
    let error = CircuitBreaker::builder()
        .cool_down(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(error.field(), "cool_down");
}
