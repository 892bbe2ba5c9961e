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
        /// What the run waits for: its open interrupts.
        interrupts: Vec<InterruptSummary>,
    },
    /// The run is over.
    Done {
        /// A short account of how it ended, the workflow's result.
        summary: String,
    },
}

/// One question a paused run waits on, as its workflow's history and status carry it: enough
/// for an approval screen to show what it approves, and to answer it by its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InterruptSummary {
    /// The id to answer it by (the key of its answer in [`RunClient::answer`](crate::RunClient::answer)).
    pub id: String,
    /// What raised it (a middleware's name, a tool's), if the step said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The tool call it concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What it asks (the calls to approve, say); `null` when it was larger than
    /// [`INTERRUPT_PAYLOAD_LIMIT`] (`payload_omitted` is then set: read it from the agent's
    /// store).
    #[serde(default)]
    pub payload: Value,
    /// Whether `payload` was left out for its size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub payload_omitted: bool,
}

/// The largest interrupt payload (in bytes of JSON) that a [`InterruptSummary`] carries:
/// Temporal keeps each payload in the run's history, which it caps.
pub const INTERRUPT_PAYLOAD_LIMIT: usize = 16 * 1024;

impl InterruptSummary {
    /// An interrupt known by its id alone.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            source: None,
            tool_call_id: None,
            payload: Value::Null,
            payload_omitted: false,
        }
    }

    /// Says what raised it.
    #[must_use]
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Says which tool call it concerns.
    #[must_use]
    pub fn tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// Says what it asks: `payload`, or nothing (`payload_omitted`) when its JSON is larger
    /// than [`INTERRUPT_PAYLOAD_LIMIT`].
    #[must_use]
    pub fn payload(self, payload: Value) -> Self {
        self.payload_of(&payload)
    }

    /// [`payload`](Self::payload) from a borrowed value, copied only when it fits.
    #[must_use]
    pub(crate) fn payload_of(mut self, payload: &Value) -> Self {
        self.payload_omitted = json_len(payload) > INTERRUPT_PAYLOAD_LIMIT;
        self.payload = if self.payload_omitted {
            Value::Null
        } else {
            payload.clone()
        };
        self
    }
}

/// The length of `value`'s JSON, counted as it is written (not kept: a payload may be large).
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
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
        interrupts: Vec<InterruptSummary>,
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
    /// The most steps a run may take; past it the run fails (a loop that never ends). At most
    /// [`MAX_RUN_STEPS`]: a run's workflow history grows with its steps, and Temporal ends a
    /// workflow whose history grows too long.
    pub max_steps: u32,
}

/// The most steps [`StepPolicy::max_steps`] allows. A step writes about ten events to the
/// run's history (its workflow task and activity, a pause's answers), and Temporal terminates a
/// workflow past 51,200 events (its default limit): 4,000 steps stay well within it. A run is
/// one workflow whose length its steps bound, so no run needs to continue as a new workflow.
pub const MAX_RUN_STEPS: u32 = 4_000;

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
    /// [`Error::InvalidPolicy`] when `max_steps` is 0 or more than [`MAX_RUN_STEPS`], when a
    /// timeout or interval is zero, when the backoff coefficient is less than 1 or not a number,
    /// or when the maximum interval is shorter than the initial.
    pub fn validate(&self) -> Result<(), Error> {
        let invalid = |reason: &str| Err(Error::InvalidPolicy(reason.to_owned()));
        if self.max_steps == 0 || self.max_steps > MAX_RUN_STEPS {
            return Err(Error::InvalidPolicy(format!(
                "max_steps is {}: from 1 to {MAX_RUN_STEPS} (a run's workflow history grows \
                 with its steps, and Temporal ends a workflow whose history grows too long)",
                self.max_steps
            )));
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_payload_too_large_for_the_history_is_left_out() {
        let small = InterruptSummary::new("i").payload(json!({ "name": "pay", "amount": 12 }));
        assert_eq!(small.payload, json!({ "name": "pay", "amount": 12 }));
        assert!(!small.payload_omitted);

        let large = InterruptSummary::new("i").payload(json!("x".repeat(INTERRUPT_PAYLOAD_LIMIT)));
        assert_eq!(large.payload, Value::Null);
        assert!(large.payload_omitted);

        // The limit counts the JSON: the quotes make this one two bytes too many.
        let edge = "x".repeat(INTERRUPT_PAYLOAD_LIMIT - 2);
        assert!(
            !InterruptSummary::new("i")
                .payload(json!(edge))
                .payload_omitted
        );
    }

    #[test]
    fn a_summary_reads_back_without_its_optional_fields() {
        let summary: InterruptSummary = serde_json::from_value(json!({ "id": "0/hitl" })).unwrap();
        assert_eq!(summary, InterruptSummary::new("0/hitl"));
        let written = serde_json::to_value(InterruptSummary::new("0/hitl").source("Gate")).unwrap();
        assert_eq!(
            written,
            json!({ "id": "0/hitl", "source": "Gate", "payload": null })
        );
    }
}
