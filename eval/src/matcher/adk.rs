//! Google ADK's tool trajectory (`TrajectoryEvaluator` with a `ToolTrajectoryCriterion`,
//! google-adk 2.15.0, `google/adk/evaluation/trajectory_evaluator.py`): the tool calls of
//! each invocation against the expected ones, scored 1 or 0, averaged over the invocations.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::json_eq::json_eq;
use super::{Mismatch, TrajectoryMatcher};
use crate::{ToolCallStep, Trajectory};

/// How the actual tool calls must relate to the expected ones (ADK's `match_type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolTrajectoryMatch {
    /// The same calls in the same order, none extra or missing.
    #[default]
    Exact,
    /// The expected calls in their order, others allowed in between.
    InOrder,
    /// The expected calls in any order (a call expected twice must be there twice), others
    /// allowed.
    AnyOrder,
}

impl ToolTrajectoryMatch {
    /// Its name in ADK: `EXACT`, `IN_ORDER`, `ANY_ORDER`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolTrajectoryMatch::Exact => "EXACT",
            ToolTrajectoryMatch::InOrder => "IN_ORDER",
            ToolTrajectoryMatch::AnyOrder => "ANY_ORDER",
        }
    }
}

/// Reads a name as ADK does (`_to_tool_trajectory_match_type`): trimmed, any case, `-` or a
/// space for `_` (`"in order"`, `"In-Order"`, `" exact "`).
impl FromStr for ToolTrajectoryMatch {
    type Err = UnknownMatchType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalized = s.trim().to_uppercase().replace(['-', ' '], "_");
        match normalized.as_str() {
            "EXACT" => Ok(ToolTrajectoryMatch::Exact),
            "IN_ORDER" => Ok(ToolTrajectoryMatch::InOrder),
            "ANY_ORDER" => Ok(ToolTrajectoryMatch::AnyOrder),
            _ => Err(UnknownMatchType(s.to_owned())),
        }
    }
}

impl fmt::Display for ToolTrajectoryMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ToolTrajectoryMatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ToolTrajectoryMatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A match type ADK does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMatchType(String);

impl fmt::Display for UnknownMatchType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown tool trajectory match type `{}`: expected EXACT, IN_ORDER or ANY_ORDER",
            self.0
        )
    }
}

impl std::error::Error for UnknownMatchType {}

/// ADK's tool trajectory criterion: a match type, whether arguments are ignored, and the
/// threshold an average score must reach to pass.
///
/// As a [`TrajectoryMatcher`] it compares one invocation (one trajectory);
/// [`evaluate`](Self::evaluate) scores several, as ADK's `evaluate_invocations`.
///
/// ```
/// use hookchain_eval::{ToolTrajectory, ToolTrajectoryMatch, Trajectory, TrajectoryMatcher};
/// use serde_json::json;
///
/// let actual = Trajectory::builder()
///     .tool_call("search", json!({"q": "flights"}))
///     .tool_call("log", json!({}))
///     .tool_call("book", json!({"id": 7}))
///     .build();
/// let expected = Trajectory::builder()
///     .tool_call("search", json!({"q": "flights"}))
///     .tool_call("book", json!({"id": 7}))
///     .build();
/// assert!(!ToolTrajectory::new(ToolTrajectoryMatch::Exact).matches(&actual, &expected));
/// assert!(ToolTrajectory::new(ToolTrajectoryMatch::InOrder).matches(&actual, &expected));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub struct ToolTrajectory {
    match_type: ToolTrajectoryMatch,
    ignore_args: bool,
    threshold: f64,
}

impl ToolTrajectory {
    /// A criterion of `match_type`, arguments compared, threshold 1 (every invocation must
    /// match).
    pub fn new(match_type: ToolTrajectoryMatch) -> Self {
        Self {
            match_type,
            ignore_args: false,
            threshold: 1.0,
        }
    }

    /// Whether arguments are ignored (ADK's `ignore_args`): names alone decide.
    pub fn ignore_args(mut self, ignore: bool) -> Self {
        self.ignore_args = ignore;
        self
    }

    /// The score an invocation, and the average, must reach to pass.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// Scores each invocation (an actual trajectory against the expected one at the same
    /// place), 1 if its tool calls match and 0 if not, and their average. No invocation: no
    /// score, [`EvalStatus::NotEvaluated`].
    ///
    /// # Errors
    ///
    /// [`ToolTrajectoryError::InvocationCount`] when the two lists differ in length (ADK
    /// refuses them too).
    pub fn evaluate(
        &self,
        actual: &[Trajectory],
        expected: &[Trajectory],
    ) -> Result<ToolTrajectoryResult, ToolTrajectoryError> {
        if actual.len() != expected.len() {
            return Err(ToolTrajectoryError::InvocationCount {
                actual: actual.len(),
                expected: expected.len(),
            });
        }
        let per_invocation: Vec<InvocationResult> = actual
            .iter()
            .zip(expected)
            .map(|(actual, expected)| {
                let mismatch = self.check(actual, expected).err();
                let score = if mismatch.is_none() { 1.0 } else { 0.0 };
                InvocationResult {
                    score,
                    status: self.status(score),
                    mismatch,
                }
            })
            .collect();
        if per_invocation.is_empty() {
            return Ok(ToolTrajectoryResult {
                overall_score: None,
                overall_status: EvalStatus::NotEvaluated,
                per_invocation,
            });
        }
        #[allow(clippy::cast_precision_loss)] // invocations are counted in the thousands at most
        let overall =
            per_invocation.iter().map(|r| r.score).sum::<f64>() / per_invocation.len() as f64;
        Ok(ToolTrajectoryResult {
            overall_score: Some(overall),
            overall_status: self.status(overall),
            per_invocation,
        })
    }

    fn status(&self, score: f64) -> EvalStatus {
        if score >= self.threshold {
            EvalStatus::Passed
        } else {
            EvalStatus::Failed
        }
    }

    /// ADK's `_are_tool_calls_equal`: the same name and, unless ignored, equal arguments,
    /// none (`null`) being equal to `{}`.
    fn same_call(&self, actual: &ToolCallStep, expected: &ToolCallStep) -> bool {
        actual.name == expected.name
            && (self.ignore_args
                || json_eq(or_empty(&actual.arguments), or_empty(&expected.arguments)))
    }

    fn mismatch(
        &self,
        reason: String,
        actual: &[&ToolCallStep],
        expected: &[&ToolCallStep],
    ) -> Mismatch {
        let label = format!(
            "ADK tool trajectory {}{}",
            self.match_type,
            if self.ignore_args {
                ", arguments ignored"
            } else {
                ""
            }
        );
        let lines = |calls: &[&ToolCallStep]| calls.iter().map(ToString::to_string).collect();
        Mismatch::new(label, reason, lines(expected), lines(actual))
    }

    fn exact(&self, actual: &[&ToolCallStep], expected: &[&ToolCallStep]) -> Result<(), Mismatch> {
        if actual.len() != expected.len() {
            return Err(self.mismatch(
                format!("{} tool calls, expected {}", actual.len(), expected.len()),
                actual,
                expected,
            ));
        }
        match actual
            .iter()
            .zip(expected)
            .position(|(a, e)| !self.same_call(a, e))
        {
            None => Ok(()),
            Some(i) => Err(self
                .mismatch(format!("call {i} differs"), actual, expected)
                .actual_at(i)
                .expected_at(i)),
        }
    }

    /// Each expected call, in order, matched by a later actual call than the one before.
    fn in_order(
        &self,
        actual: &[&ToolCallStep],
        expected: &[&ToolCallStep],
    ) -> Result<(), Mismatch> {
        let mut next = 0;
        for call in actual {
            if expected.get(next).is_some_and(|e| self.same_call(call, e)) {
                next += 1;
            }
        }
        match expected.get(next) {
            None => Ok(()),
            Some(missing) => Err(self
                .mismatch(
                    format!("expected call {next}, {missing}, not found in order after the calls before it"),
                    actual,
                    expected,
                )
                .expected_at(next)),
        }
    }

    /// Each expected call takes the first actual call not yet taken that equals it.
    fn any_order(
        &self,
        actual: &[&ToolCallStep],
        expected: &[&ToolCallStep],
    ) -> Result<(), Mismatch> {
        let mut taken = vec![false; actual.len()];
        for (k, call) in expected.iter().enumerate() {
            let found = actual
                .iter()
                .enumerate()
                .position(|(i, a)| !taken[i] && self.same_call(a, call));
            match found {
                Some(i) => taken[i] = true,
                None => {
                    return Err(self
                        .mismatch(
                            format!("expected call {k}, {call}, has no match among the actual calls left"),
                            actual,
                            expected,
                        )
                        .expected_at(k));
                }
            }
        }
        Ok(())
    }
}

impl TrajectoryMatcher for ToolTrajectory {
    /// Compares the tool calls of one invocation ([`Trajectory::tool_calls`]).
    fn check(&self, actual: &Trajectory, expected: &Trajectory) -> Result<(), Mismatch> {
        let actual: Vec<&ToolCallStep> = actual.tool_calls().collect();
        let expected: Vec<&ToolCallStep> = expected.tool_calls().collect();
        match self.match_type {
            ToolTrajectoryMatch::Exact => self.exact(&actual, &expected),
            ToolTrajectoryMatch::InOrder => self.in_order(&actual, &expected),
            ToolTrajectoryMatch::AnyOrder => self.any_order(&actual, &expected),
        }
    }
}

fn or_empty(arguments: &Value) -> &Value {
    static EMPTY: Value = Value::Null;
    match arguments {
        Value::Object(map) if map.is_empty() => &EMPTY,
        Value::Null => &EMPTY,
        other => other,
    }
}

/// Whether a score passed ADK's threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EvalStatus {
    /// At or above the threshold.
    Passed,
    /// Below it.
    Failed,
    /// Nothing was scored.
    NotEvaluated,
}

/// The scores of [`ToolTrajectory::evaluate`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolTrajectoryResult {
    /// The average of the invocations' scores; `None` without invocations.
    pub overall_score: Option<f64>,
    /// Whether the average passed.
    pub overall_status: EvalStatus,
    /// Each invocation's, in order.
    pub per_invocation: Vec<InvocationResult>,
}

/// One invocation's score.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InvocationResult {
    /// 1 if its tool calls matched, else 0.
    pub score: f64,
    /// Whether it passed the threshold.
    pub status: EvalStatus,
    /// What differed, when it did not match.
    pub mismatch: Option<Mismatch>,
}

/// Invocations that cannot be scored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolTrajectoryError {
    /// Not as many actual invocations as expected ones.
    InvocationCount {
        /// The actual invocations.
        actual: usize,
        /// The expected ones.
        expected: usize,
    },
}

impl fmt::Display for ToolTrajectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolTrajectoryError::InvocationCount { actual, expected } => write!(
                f,
                "{actual} actual invocations for {expected} expected: each actual invocation is scored against the expected one at its place"
            ),
        }
    }
}

impl std::error::Error for ToolTrajectoryError {}
