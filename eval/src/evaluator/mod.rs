//! Deterministic evaluators: checks of one case's outcome (its output, trajectory, duration,
//! token usage, the output expected of it) that pass, fail or score it, and say why.
//!
//! An [`Evaluator`] looks at an [`Outcome`] and returns an [`EvaluationResult`]: an assertion
//! (pass or fail) or a score in `[0, 1]`, with a reason when it fails. The built-ins follow
//! Pydantic Evals' evaluators where it has them ([`EqualsExpected`], [`Equals`], [`Contains`],
//! [`IsInstance`], [`MaxDuration`]; checked against its unit tests in
//! `eval/tests/golden_pydantic_evals.rs`), and add [`Regex`], [`ToolCalled`],
//! [`ToolNotCalled`] and [`MaxTokens`]. Any `Fn(&Outcome) -> R` is an evaluator, where `R` is
//! a `bool`, an `f64` score or an [`EvaluationResult`].
//!
//! The output is a JSON [`Value`]: the run's final text as a string
//! ([`Outcome::from_run`]), or that text parsed as JSON when it is JSON
//! ([`Outcome::from_run_json`], for structured output), or any value you give
//! ([`Outcome::new`]). Values compare as Python compares them (`1 == 1.0`, `true == 1`).
//!
//! ```
//! use std::time::Duration;
//!
//! use hookchain_eval::evaluator::{
//!     Contains, EqualsExpected, Evaluator, MaxDuration, Outcome, ToolCalled,
//! };
//! use hookchain_eval::Trajectory;
//! use serde_json::json;
//!
//! let outcome = Outcome::new("It is 18°C in Paris.")
//!     .expected("It is 18°C in Paris.")
//!     .duration(Duration::from_millis(800))
//!     .trajectory(Trajectory::builder().tool_call("weather", json!({"city": "Paris"})).build());
//!
//! assert!(EqualsExpected::new().evaluate(&outcome).is_pass());
//! assert!(Contains::new("paris").case_sensitive(false).evaluate(&outcome).is_pass());
//! assert!(ToolCalled::new("weather").evaluate(&outcome).is_pass());
//! assert!(MaxDuration::new(Duration::from_secs(1)).evaluate(&outcome).is_pass());
//!
//! // Your own, as a closure.
//! let short = |outcome: &Outcome| outcome.text().len() < 100;
//! assert!(short.evaluate(&outcome).is_pass());
//!
//! let failed = Contains::new("Rome").evaluate(&outcome);
//! assert_eq!(
//!     failed.reason.as_deref(),
//!     Some("Output string 'It is 18°C in Paris.' does not contain expected string 'Rome'"),
//! );
//! ```

mod builtin;
mod python;

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use hookchain_core::{RunOutput, Usage};
use serde_json::Value;

use crate::Trajectory;

pub use builtin::{
    Contains, Equals, EqualsExpected, IsInstance, MaxDuration, MaxTokens, Regex, ToolCalled,
    ToolNotCalled,
};

/// What one case of an eval produced, as evaluators see it: the output, the output expected
/// (if any), the run's trajectory, how long it took, and the tokens it used.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    /// The output: the run's final text as a JSON string, or a structured value.
    pub output: Value,
    /// The output expected of this case, if the case says.
    pub expected: Option<Value>,
    /// The run's steps (empty if not given).
    pub trajectory: Trajectory,
    /// How long the case took (zero if not given).
    pub duration: Duration,
    /// The tokens of the run's model calls (none if not given).
    pub usage: Usage,
}

impl Outcome {
    /// An outcome with this output, and nothing else known yet.
    #[must_use]
    pub fn new(output: impl Into<Value>) -> Self {
        Self {
            output: output.into(),
            ..Self::default()
        }
    }

    /// The outcome of a run: its final text as a JSON string (`null` if the run has no
    /// answer: it paused, or the model never answered), its trajectory and its usage. Add
    /// the [`duration`](Self::duration) you measured.
    #[must_use]
    pub fn from_run(run: &RunOutput) -> Self {
        Self {
            output: run
                .text()
                .map_or(Value::Null, |text| Value::String(text.into_owned())),
            expected: None,
            trajectory: Trajectory::from_output(run),
            duration: Duration::ZERO,
            usage: run.usage,
        }
    }

    /// As [`from_run`](Self::from_run), with the final text parsed as JSON when it is JSON
    /// (structured output); a text that is not JSON stays a string.
    #[must_use]
    pub fn from_run_json(run: &RunOutput) -> Self {
        let mut outcome = Self::from_run(run);
        if let Value::String(text) = &outcome.output
            && let Ok(value) = serde_json::from_str(text)
        {
            outcome.output = value;
        }
        outcome
    }

    /// With the output expected of this case.
    #[must_use]
    pub fn expected(mut self, expected: impl Into<Value>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    /// With the run's trajectory.
    #[must_use]
    pub fn trajectory(mut self, trajectory: Trajectory) -> Self {
        self.trajectory = trajectory;
        self
    }

    /// With how long the case took.
    #[must_use]
    pub fn duration(mut self, duration: Duration) -> Self {
        self.duration = duration;
        self
    }

    /// With the tokens the run used.
    #[must_use]
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The output as text: a string as it is, another value as compact JSON, `null` as the
    /// empty string.
    #[must_use]
    pub fn text(&self) -> Cow<'_, str> {
        match &self.output {
            Value::String(text) => Cow::Borrowed(text),
            Value::Null => Cow::Borrowed(""),
            other => Cow::Owned(other.to_string()),
        }
    }
}

/// What an evaluator concluded.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum EvaluationValue {
    /// Passed (`true`) or failed (`false`).
    Assertion(bool),
    /// A score in `[0, 1]`.
    Score(f64),
    /// Nothing to evaluate (for instance [`EqualsExpected`] on a case without an expected
    /// output): neither a pass nor a failure.
    Skipped,
}

/// An evaluator's result: its [`EvaluationValue`], and why (always given on a failure by the
/// built-ins).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EvaluationResult {
    /// Pass, fail, a score, or skipped.
    pub value: EvaluationValue,
    /// Why, readable.
    pub reason: Option<String>,
}

impl EvaluationResult {
    /// A pass.
    #[must_use]
    pub const fn pass() -> Self {
        Self {
            value: EvaluationValue::Assertion(true),
            reason: None,
        }
    }

    /// A failure, and why.
    #[must_use]
    pub fn fail(reason: impl Into<String>) -> Self {
        Self {
            value: EvaluationValue::Assertion(false),
            reason: Some(reason.into()),
        }
    }

    /// A score, clamped to `[0, 1]` (NaN is `0`).
    #[must_use]
    pub fn score(score: f64) -> Self {
        let score = if score.is_nan() {
            0.0
        } else {
            score.clamp(0.0, 1.0)
        };
        Self {
            value: EvaluationValue::Score(score),
            reason: None,
        }
    }

    /// Nothing to evaluate, and why.
    #[must_use]
    pub fn skipped(reason: impl Into<String>) -> Self {
        Self {
            value: EvaluationValue::Skipped,
            reason: Some(reason.into()),
        }
    }

    /// With this reason.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Whether this is a passed assertion.
    #[must_use]
    pub fn is_pass(&self) -> bool {
        self.value == EvaluationValue::Assertion(true)
    }

    /// Whether this is a failed assertion.
    #[must_use]
    pub fn is_fail(&self) -> bool {
        self.value == EvaluationValue::Assertion(false)
    }

    /// The result as a score: a score as it is, a pass `1`, a failure `0`; `None` if skipped.
    #[must_use]
    pub fn as_score(&self) -> Option<f64> {
        match self.value {
            EvaluationValue::Assertion(passed) => Some(if passed { 1.0 } else { 0.0 }),
            EvaluationValue::Score(score) => Some(score),
            EvaluationValue::Skipped => None,
        }
    }
}

impl From<bool> for EvaluationResult {
    fn from(passed: bool) -> Self {
        if passed {
            Self::pass()
        } else {
            Self {
                value: EvaluationValue::Assertion(false),
                reason: None,
            }
        }
    }
}

impl From<f64> for EvaluationResult {
    fn from(score: f64) -> Self {
        Self::score(score)
    }
}

impl fmt::Display for EvaluationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            EvaluationValue::Assertion(true) => f.write_str("pass")?,
            EvaluationValue::Assertion(false) => f.write_str("fail")?,
            EvaluationValue::Score(score) => write!(f, "score {score}")?,
            EvaluationValue::Skipped => f.write_str("skipped")?,
        }
        match &self.reason {
            Some(reason) => write!(f, ": {reason}"),
            None => Ok(()),
        }
    }
}

/// A check of one case's [`Outcome`]. Implemented by the built-ins of this module and by any
/// `Fn(&Outcome) -> R` where `R` is a `bool`, an `f64` score or an [`EvaluationResult`].
pub trait Evaluator {
    /// Evaluates the outcome; never panics on any output.
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult;

    /// The evaluator's name, for reports: the built-ins' type names; `"custom"` by default.
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("custom")
    }
}

impl<F, R> Evaluator for F
where
    F: Fn(&Outcome) -> R,
    R: Into<EvaluationResult>,
{
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        self(outcome).into()
    }
}
