//! `ModelRetry`, rule by rule (DESIGN §11), on tokio's paused clock: the delays are exact.
#![cfg(feature = "tokio")]

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use hookchain::builtin::ModelRetry;
use hookchain::builtin::retry::{Jitter, OnFailure};
use hookchain::prelude::*;
use hookchain::{Model, ModelError, ModelErrorKind, chain, hook};
use tokio::time::Instant;

/// A model that answers from a script and records when each call came (on tokio's clock).
#[derive(Default)]
struct Timed {
    script: Mutex<VecDeque<Result<ModelResponse, ModelError>>>,
    calls: Mutex<Vec<Instant>>,
}

impl Timed {
    fn new(script: impl IntoIterator<Item = Result<ModelResponse, ModelError>>) -> Self {
        Timed {
            script: Mutex::new(script.into_iter().collect()),
            calls: Mutex::default(),
        }
    }

    /// Fails with `error()` `n` times, then answers "done".
    fn failing(n: usize, error: impl Fn() -> ModelError) -> Self {
        Self::new(
            (0..n)
                .map(|_| Err(error()))
                .chain([Ok(ModelResponse::text("done"))]),
        )
    }

    fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    /// The waits between consecutive calls.
    fn waits(&self) -> Vec<Duration> {
        let calls = self.calls.lock().unwrap();
        calls.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

impl Model for Timed {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.lock().unwrap().push(Instant::now());
        let next = self.script.lock().unwrap().pop_front();
        next.unwrap_or_else(|| Ok(ModelResponse::text("done")))
    }
}

fn overloaded() -> ModelError {
    ModelError::overloaded("the provider is overloaded")
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A retry without jitter: the delays are exactly `initial × factor^n`, capped.
fn exact() -> hookchain::builtin::retry::ModelRetryBuilder {
    ModelRetry::builder().jitter(Jitter::None)
}

#[tokio::test(start_paused = true)]
async fn max_retries_defaults_to_two_and_the_error_is_passed_on() {
    let agent = Agent::builder(Timed::failing(10, overloaded))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert_eq!(agent.model().calls(), 3);
    match error {
        Error::Model(error) => assert_eq!(error.kind(), ModelErrorKind::Overloaded),
        other => panic!("expected the model error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_success_after_failures_is_the_answer_and_every_call_counts() {
    let agent = Agent::builder(Timed::failing(2, overloaded))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(agent.model().calls(), 3);
    assert_eq!(output.model_calls, 3, "discarded attempts count too");
}

#[tokio::test(start_paused = true)]
async fn backoff_is_initial_times_factor_to_the_n_capped_at_max_delay() {
    let retry = exact()
        .max_retries(5)
        .initial_delay(secs(1))
        .factor(3.0)
        .max_delay(secs(10))
        .build()
        .unwrap();
    let agent = Agent::builder(Timed::failing(5, overloaded))
        .chain(chain![retry])
        .build()
        .unwrap();
    let start = Instant::now();
    agent.run("hi").await.unwrap();
    assert_eq!(
        agent.model().waits(),
        [secs(1), secs(3), secs(9), secs(10), secs(10)]
    );
    assert_eq!(start.elapsed(), secs(33));
}

#[tokio::test(start_paused = true)]
async fn jitter_is_within_a_quarter_never_negative_and_repeats_with_its_seed() {
    async fn waits(seed: u64) -> Vec<Duration> {
        let retry = ModelRetry::builder()
            .jitter(Jitter::Seeded(seed))
            .max_retries(6)
            .initial_delay(secs(2))
            .factor(2.0)
            .max_delay(secs(16))
            .build()
            .unwrap();
        let agent = Agent::builder(Timed::failing(6, overloaded))
            .chain(chain![retry])
            .build()
            .unwrap();
        agent.run("hi").await.unwrap();
        agent.model().waits()
    }
    let first = waits(7).await;
    let bases = [2.0, 4.0, 8.0, 16.0, 16.0, 16.0];
    for (wait, base) in first.iter().zip(bases) {
        let wait = wait.as_secs_f64();
        assert!(
            (base * 0.75..=base * 1.25).contains(&wait),
            "{wait}s is not within 25 % of {base}s"
        );
    }
    assert_ne!(first, bases.map(Duration::from_secs_f64), "jitter applied");
    assert_eq!(first, waits(7).await, "the same seed, the same waits");
    assert_ne!(first, waits(8).await, "another seed, other waits");
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured() {
    let limited = || ModelError::rate_limited("slow down").with_retry_after(secs(7));
    let retry = exact().initial_delay(secs(1)).build().unwrap();
    let agent = Agent::builder(Timed::failing(2, limited))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    // At least what the provider asked: 7 s, not the backoff's 1 s and 2 s.
    assert_eq!(agent.model().waits(), [secs(7), secs(7)]);

    // A shorter Retry-After than the backoff: the backoff.
    let short =
        || ModelError::rate_limited("slow down").with_retry_after(Duration::from_millis(10));
    let retry = exact().initial_delay(secs(1)).build().unwrap();
    let agent = Agent::builder(Timed::failing(2, short))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().waits(), [secs(1), secs(2)]);

    // Longer than max_delay (within max_retry_after): still honoured.
    let long = || ModelError::rate_limited("slow down").with_retry_after(secs(50));
    let retry = exact().max_delay(secs(5)).build().unwrap();
    let agent = Agent::builder(Timed::failing(1, long))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().waits(), [secs(50)]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_past_the_maximum_gives_up_with_the_original_error() {
    let year = secs(365 * 24 * 3600);
    let far = move || ModelError::rate_limited("come back next year").with_retry_after(year);
    let agent = Agent::builder(Timed::failing(1, far))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    let started = Instant::now();
    let error = agent.run("hi").await.unwrap_err();
    // One call, no wait: the year is not slept through.
    assert_eq!(agent.model().calls(), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
    match error {
        Error::Model(error) => {
            assert_eq!(error.kind(), ModelErrorKind::RateLimited);
            assert_eq!(error.retry_after(), Some(year));
        }
        other => panic!("expected the model error, got {other:?}"),
    }

    // The maximum is a setting: 90 s is waited for under a maximum of 2 minutes, not 3.
    let ninety = || ModelError::rate_limited("slow down").with_retry_after(secs(90));
    let retry = exact().max_retry_after(secs(120)).build().unwrap();
    let agent = Agent::builder(Timed::failing(1, ninety))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().waits(), [secs(90)]);
    let three = || ModelError::rate_limited("slow down").with_retry_after(secs(180));
    let retry = exact().max_retry_after(secs(120)).build().unwrap();
    let agent = Agent::builder(Timed::failing(1, three))
        .chain(chain![retry])
        .build()
        .unwrap();
    assert!(agent.run("hi").await.is_err());
    assert_eq!(agent.model().calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn retry_on_defaults_to_the_retryable_kinds() {
    for error in [
        ModelError::rate_limited("x"),
        ModelError::overloaded("x"),
        ModelError::timeout("x"),
        ModelError::connection("x"),
    ] {
        let kind = error.kind();
        let agent = Agent::builder(Timed::new([Err(error)]))
            .chain(chain![ModelRetry::new()])
            .build()
            .unwrap();
        agent.run("hi").await.unwrap();
        assert_eq!(agent.model().calls(), 2, "{kind:?} is retried");
    }
    let agent = Agent::builder(Timed::new([Err(ModelError::invalid_request("bad"))]))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(error, Error::Model(e) if e.kind() == ModelErrorKind::InvalidRequest));
    assert_eq!(
        agent.model().calls(),
        1,
        "a non-retryable kind is not retried"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_on_is_a_predicate_over_the_classified_error() {
    let retry = exact()
        .retry_on(|error| error.status() == Some(418))
        .build()
        .unwrap();
    let teapot = || ModelError::other("teapot").with_status(418);
    let agent = Agent::builder(Timed::failing(1, teapot))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(agent.model().calls(), 2);

    let retry = exact().retry_on(|_| false).build().unwrap();
    let agent = Agent::builder(Timed::failing(1, overloaded))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap_err();
    assert_eq!(agent.model().calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn on_failure_continue_answers_with_what_failed() {
    let retry = exact().on_failure(OnFailure::Continue).build().unwrap();
    let agent = Agent::builder(Timed::failing(10, overloaded))
        .chain(chain![retry])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("The model call failed (provider overloaded) after 3 attempts.")
    );
    // The provider's own text never reaches the conversation.
    assert!(
        !output
            .text()
            .unwrap()
            .contains("the provider is overloaded")
    );
}

#[tokio::test(start_paused = true)]
async fn on_failure_format_writes_the_message() {
    let retry = exact()
        .max_retries(1)
        .on_failure(OnFailure::format(|error: &ModelError, attempts| {
            format!("gave up after {attempts} ({:?})", error.kind())
        }))
        .build()
        .unwrap();
    let agent = Agent::builder(Timed::failing(10, overloaded))
        .chain(chain![retry])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("gave up after 2 (Overloaded)")
    );
}

/// An inner wrap that raises an interrupt (or an error) instead of calling the model.
#[hook(wrap_model_call)]
async fn interrupting(_request: ModelRequest) -> Result<ModelResponse, Error> {
    Err(Error::interrupt(serde_json::json!({ "ask": "?" })))
}

#[hook(wrap_model_call)]
async fn failing_hook(_request: ModelRequest) -> Result<ModelResponse, Error> {
    Err(Error::hook(std::io::Error::other("the hook broke")))
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_is_never_retried() {
    let agent = Agent::builder(Timed::failing(0, overloaded))
        .chain(chain![ModelRetry::new(), interrupting])
        .build()
        .unwrap();
    let start = Instant::now();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(error, Error::Interrupted(_)), "{error:?}");
    assert_eq!(start.elapsed(), Duration::ZERO, "no wait, no retry");
}

#[tokio::test(start_paused = true)]
async fn a_middleware_error_is_not_retried() {
    let agent = Agent::builder(Timed::failing(0, overloaded))
        .chain(chain![ModelRetry::new(), failing_hook])
        .build()
        .unwrap();
    let start = Instant::now();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(error, Error::Middleware(_)), "{error:?}");
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    let error = ModelRetry::builder().factor(0.5).build().unwrap_err();
    assert_eq!(error.field(), "factor");
    assert!(
        error.to_string().starts_with("invalid `factor`: "),
        "{error}"
    );
    let error = ModelRetry::builder()
        .initial_delay(secs(10))
        .max_delay(secs(1))
        .build()
        .unwrap_err();
    assert_eq!(error.field(), "max_delay");
    assert!(ModelRetry::builder().max_retries(0).build().is_ok());
}

/// A custom model's provider error is `Other`, never retried, unless the model classifies it.
#[tokio::test(start_paused = true)]
async fn a_provider_error_is_retried_only_once_classified_retryable() {
    let opaque = || ModelError::provider(std::io::Error::other("the GPU server restarts"));
    let agent = Agent::builder(Timed::failing(1, opaque))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    assert!(agent.run("hi").await.is_err());
    assert_eq!(agent.model().calls(), 1);

    let classified = move || opaque().with_kind(ModelErrorKind::Overloaded);
    let agent = Agent::builder(Timed::failing(1, classified))
        .chain(chain![ModelRetry::new()])
        .build()
        .unwrap();
    assert_eq!(
        agent.run("hi").await.unwrap().text().as_deref(),
        Some("done")
    );
    assert_eq!(agent.model().calls(), 2);
}
