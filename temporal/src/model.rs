//! The values that cross Temporal: what a step is asked and answers, where a run stands, how it
//! ended, and the timeouts and retries of its activities.
//!
//! Each is serialized as JSON by the SDK's default payload converter, and lands in the workflow's
//! history: renaming a field or a variant breaks the replay of runs already under way.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;

/// What the step activity is asked: which run, which step, and what the run was given since the
/// last step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRequest {
    /// The run's key: the workflow id (one agent thread, say).
    pub key: String,
    /// The number of this step in the run, from 1.
    pub step: u32,
    /// The run's input on its first step; the answers of the signal that resumed a paused run on
    /// the step after the pause; `None` otherwise.
    pub input: Option<Value>,
}

/// What one step of a run answers: go on, wait for answers, or stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum StepReply {
    /// Run the next step at once.
    Next,
    /// Wait for a signal with answers (a human's approval, say), then run the next step with them.
    Paused {
        /// What the run waits for: the ids (or descriptions) of its open interrupts.
        interrupts: Vec<String>,
    },
    /// The run is over.
    Done {
        /// A short account of how it ended, the workflow's result.
        summary: String,
    },
}

/// Where a run stands, as the `status` query answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RunStatus {
    /// Started, and no step has run yet.
    Starting,
    /// Running (or about to run) this step.
    Running {
        /// The number of the step, from 1.
        step: u32,
    },
    /// Waiting for answers after this step.
    Paused {
        /// The step that paused.
        step: u32,
        /// What the run waits for, as the step said.
        interrupts: Vec<String>,
    },
    /// Done after this step.
    Done {
        /// The number of steps that ran.
        steps: u32,
    },
    /// Cancelled; the cleanup activity runs or ran.
    Cancelled,
}

/// The result of a run that ended with [`StepReply::Done`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// The summary of the last step.
    pub summary: String,
    /// The number of steps that ran (retries of one step count once).
    pub steps: u32,
}

/// How a run ended, as [`RunClient::result`](crate::RunClient::result) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunResult {
    /// The last step answered [`StepReply::Done`].
    Completed(RunOutcome),
    /// The run was cancelled (by [`RunClient::cancel`](crate::RunClient::cancel) or any other
    /// client of the server).
    Cancelled,
}

/// The timeouts and retries of a run's step activities.
///
/// It travels in the workflow's input, so that every worker that replays the run schedules its
/// activities alike; a change applies to runs started after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StepPolicy {
    /// How long one attempt of a step may take (Temporal's start-to-close timeout).
    pub start_to_close: Duration,
    /// How long an attempt may go without a heartbeat before the server deems its worker lost
    /// and retries it; `None`: no heartbeat is required.
    pub heartbeat_timeout: Option<Duration>,
    /// The number of attempts of a step, the first included; 0 is unlimited.
    pub maximum_attempts: u32,
    /// The wait before the first retry.
    pub initial_interval: Duration,
    /// The factor of each next wait; at least 1.
    pub backoff_coefficient: f64,
    /// The longest wait between attempts; `None`: the server's default (100 × the initial).
    pub maximum_interval: Option<Duration>,
    /// The most steps a run may take; past it the run fails (a loop that never ends). 0 is
    /// unlimited.
    pub max_steps: u32,
}

impl Default for StepPolicy {
    /// Ten minutes an attempt, a heartbeat every minute, three attempts one second apart then
    /// twice as long each time up to a minute, a thousand steps.
    fn default() -> Self {
        Self {
            start_to_close: Duration::from_secs(600),
            heartbeat_timeout: Some(Duration::from_secs(60)),
            maximum_attempts: 3,
            initial_interval: Duration::from_secs(1),
            backoff_coefficient: 2.0,
            maximum_interval: Some(Duration::from_secs(60)),
            max_steps: 1000,
        }
    }
}

impl StepPolicy {
    /// Checks what the server would refuse when the workflow schedules a step (a workflow task
    /// that fails on every attempt rather than an error to its client).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPolicy`] when a timeout or interval is zero, when the backoff coefficient
    /// is less than 1 or not a number, or when the maximum interval is shorter than the initial.
    pub fn validate(&self) -> Result<(), Error> {
        let invalid = |reason: &str| Err(Error::InvalidPolicy(reason.to_owned()));
        if self.start_to_close.is_zero() {
            return invalid("start_to_close is zero");
        }
        if self.heartbeat_timeout.is_some_and(|t| t.is_zero()) {
            return invalid("heartbeat_timeout is zero (None for no heartbeat)");
        }
        if self.initial_interval.is_zero() {
            return invalid("initial_interval is zero");
        }
        if !(self.backoff_coefficient >= 1.0 && self.backoff_coefficient.is_finite()) {
            return invalid("backoff_coefficient is not a finite number of at least 1");
        }
        if self
            .maximum_interval
            .is_some_and(|max| max < self.initial_interval)
        {
            return invalid("maximum_interval is shorter than initial_interval");
        }
        Ok(())
    }
}

/// The workflow's input: the run's first input and the policy of its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunInput {
    pub(crate) input: Value,
    pub(crate) policy: StepPolicy,
}
