//! [`CircuitBreaker`]: after repeated failures of a model, its calls fail at once for a while.
//!
//! # The rules
//!
//! - **Closed** (normal): calls go through. A failure counts when it is a model error of a
//!   [retryable kind](crate::ModelErrorKind::is_retryable) (the provider failing: rate limited,
//!   overloaded, timed out, connection); a success resets the count. Other errors (a bad
//!   request, a middleware's error) neither count nor reset.
//! - **Open**: after `failure_threshold` consecutive failures, every call fails at once for
//!   `cool_down`, without reaching the model: a [`ModelError`] of kind
//!   [`Other`](crate::ModelErrorKind::Other) (not retryable, so a retry outside does not hammer
//!   the open circuit, and a fallback outside moves on to the next model at once), with the
//!   time left as its `retry_after` and a [`CircuitOpen`] as its source.
//! - **Half-open**: the first call after the cool-down is a trial; calls meanwhile fail at once.
//!   A trial that succeeds (or that the provider answers, even with a non-retryable error)
//!   closes the circuit; one that fails opens it for another cool-down. A trial whose future is
//!   dropped lets the next call try.
//! - **Scope: the middleware value, per model.** The state is kept in the middleware behind a
//!   mutex (held only to read and update it, never across the model call), one circuit per
//!   model name ([`request.model`](crate::ModelRequest::model); the agent's model has its own).
//!   Every run and every thread of an agent built with it shares it: an outage is the
//!   provider's, not one conversation's, and a per-run state would forget it at every run. It
//!   is not part of checkpoints (it describes the provider now, not the conversation).
//! - Time runs on tokio's clock. Opening is a `tracing` warning; failing fast, the trial and
//!   closing are debug events.
//!
//! ```
//! use std::time::Duration;
//! use hookchain::builtin::CircuitBreaker;
//!
//! let breaker = CircuitBreaker::builder()
//!     .failure_threshold(5)
//!     .cool_down(Duration::from_secs(30))
//!     .build()?;
//! # let _ = hookchain::chain![breaker];
//! # Ok::<(), hookchain::builtin::ConfigError>(())
//! ```

use std::sync::Mutex;
use std::time::Duration;

use hookchain_macros::middleware;
use tokio::time::Instant;

use crate::builtin::ConfigError;
use crate::context::Context;
use crate::error::{Error, ModelError};
use crate::lock::lock;
use crate::middleware::ModelNext;
use crate::model::{ModelRequest, ModelResponse};

/// Fails model calls at once after repeated failures, for a cool-down (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct CircuitBreaker {
    failure_threshold: u32,
    cool_down: Duration,
    /// One circuit per model name; entries are never removed, so an index stays valid.
    circuits: Mutex<Vec<(Option<String>, Circuit)>>,
}

/// The state of one model's circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Circuit {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// The trial call is under way.
    HalfOpen,
}

/// What the circuit lets a call do.
enum Admission {
    Call,
    Trial,
    Refuse(ModelError),
}

impl CircuitBreaker {
    /// A builder: 5 failures open the circuit for 30 s.
    #[must_use]
    pub fn builder() -> CircuitBreakerBuilder {
        CircuitBreakerBuilder {
            failure_threshold: 5,
            cool_down: Duration::from_secs(30),
        }
    }

    /// The circuit of `model` (made on first use: one allocation per model name, ever), and
    /// whether a call may go through.
    fn admit(&self, model: Option<&str>) -> (usize, Admission) {
        let mut circuits = lock(&self.circuits);
        let index = match circuits
            .iter()
            .position(|(name, _)| name.as_deref() == model)
        {
            Some(index) => index,
            None => {
                circuits.push((model.map(str::to_owned), Circuit::Closed { failures: 0 }));
                circuits.len() - 1
            }
        };
        let circuit = &mut circuits[index].1;
        let admission = match *circuit {
            Circuit::Closed { .. } => Admission::Call,
            Circuit::Open { until } => {
                let now = Instant::now();
                if now >= until {
                    *circuit = Circuit::HalfOpen;
                    tracing::debug!(
                        model = model.unwrap_or("the agent's model"),
                        "CircuitBreaker: the cool-down is over; a trial call"
                    );
                    Admission::Trial
                } else {
                    Admission::Refuse(self.refusal(model, Some(until - now)))
                }
            }
            Circuit::HalfOpen => Admission::Refuse(self.refusal(model, None)),
        };
        (index, admission)
    }

    fn refusal(&self, model: Option<&str>, left: Option<Duration>) -> ModelError {
        tracing::debug!(
            model = model.unwrap_or("the agent's model"),
            "CircuitBreaker: the circuit is open; failing fast"
        );
        let open = CircuitOpen {
            model: model.map(str::to_owned),
            failure_threshold: self.failure_threshold,
            retry_in: left,
        };
        let error = ModelError::other("the circuit breaker is open: the model is not called");
        match left {
            Some(left) => error.with_retry_after(left),
            None => error,
        }
        .with_source(open)
    }

    /// Records the outcome of a call on circuit `index`: `counted` if it is a failure that
    /// counts, `answered` if the provider answered (success or an error that does not count).
    fn record(&self, index: usize, trial: bool, counted: bool, answered: bool) {
        let mut circuits = lock(&self.circuits);
        let (name, circuit) = &mut circuits[index];
        let model = name.as_deref().unwrap_or("the agent's model");
        let failures = match *circuit {
            Circuit::Closed { failures } => failures,
            _ => 0,
        };
        if counted {
            if trial || failures + 1 >= self.failure_threshold {
                tracing::warn!(
                    model,
                    failures = failures + 1,
                    cool_down = ?self.cool_down,
                    trial,
                    "CircuitBreaker: the circuit opens"
                );
                *circuit = Circuit::Open {
                    until: Instant::now() + self.cool_down,
                };
            } else {
                *circuit = Circuit::Closed {
                    failures: failures + 1,
                };
            }
        } else if answered {
            if trial {
                tracing::debug!(
                    model,
                    "CircuitBreaker: the trial call passed; the circuit closes"
                );
            }
            *circuit = Circuit::Closed { failures: 0 };
        } else if trial {
            // Neither a success nor the model's failure: another call may try.
            *circuit = Circuit::Open {
                until: Instant::now(),
            };
        }
    }
}

#[middleware(crate = crate, live_stream)]
impl CircuitBreaker {
    /// Fails fast while the circuit is open; records the outcome of the calls it lets through.
    #[hook(wrap_model_call)]
    async fn guard(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let (index, admission) = self.admit(request.model.as_deref());
        let trial = match admission {
            Admission::Call => false,
            Admission::Trial => true,
            Admission::Refuse(error) => return Err(error.into()),
        };
        let mut pending = PendingTrial {
            breaker: self,
            index,
            armed: trial,
        };
        let outcome = next.call(cx, request).await;
        pending.armed = false;
        let (counted, answered) = match &outcome {
            Ok(_) => (false, true),
            Err(Error::Model(error)) => (error.is_retryable(), !error.is_retryable()),
            Err(_) => (false, false),
        };
        self.record(index, trial, counted, answered);
        outcome
    }
}

/// Reopens a half-open circuit for another trial if the trial's future is dropped.
struct PendingTrial<'a> {
    breaker: &'a CircuitBreaker,
    index: usize,
    armed: bool,
}

impl Drop for PendingTrial<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.breaker.record(self.index, true, false, false);
        }
    }
}

/// Builds a [`CircuitBreaker`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
pub struct CircuitBreakerBuilder {
    failure_threshold: u32,
    cool_down: Duration,
}

impl CircuitBreakerBuilder {
    /// The consecutive failures that open the circuit (default 5; at least 1).
    #[must_use]
    pub fn failure_threshold(mut self, failures: u32) -> Self {
        self.failure_threshold = failures;
        self
    }

    /// How long an open circuit fails calls before a trial (default 30 s; not zero).
    #[must_use]
    pub fn cool_down(mut self, cool_down: Duration) -> Self {
        self.cool_down = cool_down;
        self
    }

    /// The breaker, or the first setting that cannot work: a threshold of 0, a zero cool-down.
    pub fn build(self) -> Result<CircuitBreaker, ConfigError> {
        if self.failure_threshold == 0 {
            return Err(ConfigError::new(
                "failure_threshold",
                "is 0: the circuit would open before any failure",
            ));
        }
        if self.cool_down.is_zero() {
            return Err(ConfigError::new(
                "cool_down",
                "is zero: the circuit would never stay open",
            ));
        }
        Ok(CircuitBreaker {
            failure_threshold: self.failure_threshold,
            cool_down: self.cool_down,
            circuits: Mutex::new(Vec::new()),
        })
    }
}

/// The source of the error of a call refused by an open [`CircuitBreaker`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the circuit of {} is open after {failure_threshold} consecutive failures{}",
    model.as_deref().map_or("the agent's model".to_owned(), |m| format!("`{m}`")),
    retry_in.map_or(" (a trial call is under way)".to_owned(), |d| format!("; retry in {d:?}"))
)]
pub struct CircuitOpen {
    model: Option<String>,
    failure_threshold: u32,
    retry_in: Option<Duration>,
}

impl CircuitOpen {
    /// The model whose circuit is open; `None` for the agent's model.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// How long until a trial call may go through; `None` while a trial is under way.
    #[must_use]
    pub fn retry_in(&self) -> Option<Duration> {
        self.retry_in
    }
}
