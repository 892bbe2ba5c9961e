//! LangChain agentevals' trajectory match (`create_trajectory_match_evaluator`, agentevals
//! 0.0.9, `agentevals/trajectory/{strict,unordered,subset,superset,utils}.py`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ArgsComparator, ArgsMatch, ArgsOverride, Mismatch, TrajectoryMatcher};
use crate::{Step, ToolCallStep, Trajectory};

/// How the actual trajectory must relate to the expected one (agentevals'
/// `trajectory_match_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MatchMode {
    /// The same messages in the same order: as many, each of the same role; an assistant
    /// message calls tools exactly when its counterpart does, as many, and each of its calls
    /// matches one of the counterpart's (in any order within the message). Texts are not
    /// compared.
    #[default]
    Strict,
    /// The same tool calls, in any order and whichever messages carry them.
    Unordered,
    /// Every actual tool call is among the expected ones.
    Subset,
    /// Every expected tool call is among the actual ones.
    Superset,
}

impl MatchMode {
    /// Its name in agentevals.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Strict => "strict",
            MatchMode::Unordered => "unordered",
            MatchMode::Subset => "subset",
            MatchMode::Superset => "superset",
        }
    }
}

impl FromStr for MatchMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "strict" => Ok(MatchMode::Strict),
            "unordered" => Ok(MatchMode::Unordered),
            "subset" => Ok(MatchMode::Subset),
            "superset" => Ok(MatchMode::Superset),
            other => Err(UnknownMode::new(
                other,
                "`strict`, `unordered`, `subset` or `superset`",
            )),
        }
    }
}

/// A mode name that is not one of agentevals'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode {
    name: String,
    expected: &'static str,
}

impl UnknownMode {
    pub(crate) fn new(name: &str, expected: &'static str) -> Self {
        Self {
            name: name.to_owned(),
            expected,
        }
    }
}

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown mode `{}`: expected {}",
            self.name, self.expected
        )
    }
}

impl std::error::Error for UnknownMode {}

/// agentevals' trajectory match: a [`MatchMode`], how tool arguments compare
/// ([`ArgsMatch`]), and per-tool overrides.
///
/// Steps that are not messages (interrupts, sub-agents' runs) are not part of the comparison,
/// as agentevals compares message lists.
///
/// ```
/// use hookchain_eval::{ArgsMatch, Trajectory, TrajectoryMatch, TrajectoryMatcher};
/// use serde_json::json;
///
/// let actual = Trajectory::builder()
///     .user("Weather in SF?")
///     .tool_call("weather", json!({"city": "SF", "units": "F"}))
///     .tool_result("weather", "80°F")
///     .model("80°F and sunny.")
///     .build();
/// let expected = Trajectory::builder()
///     .user("What is the weather in San Francisco?")
///     .tool_call("weather", json!({"city": "SF"}))
///     .tool_result("weather", "It is 80 degrees.")
///     .model("Sunny.")
///     .build();
///
/// // Extra arguments fail an exact comparison, not a superset one.
/// assert!(!TrajectoryMatch::strict().matches(&actual, &expected));
/// TrajectoryMatch::strict()
///     .tool_args(ArgsMatch::Superset)
///     .check(&actual, &expected)?;
/// # Ok::<(), hookchain_eval::Mismatch>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TrajectoryMatch {
    mode: MatchMode,
    args: ArgsMatch,
    overrides: BTreeMap<String, ArgsOverride>,
}

impl TrajectoryMatch {
    /// A matcher of `mode`, arguments compared exactly.
    pub fn new(mode: MatchMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// [`MatchMode::Strict`].
    pub fn strict() -> Self {
        Self::new(MatchMode::Strict)
    }

    /// [`MatchMode::Unordered`].
    pub fn unordered() -> Self {
        Self::new(MatchMode::Unordered)
    }

    /// [`MatchMode::Subset`].
    pub fn subset() -> Self {
        Self::new(MatchMode::Subset)
    }

    /// [`MatchMode::Superset`].
    pub fn superset() -> Self {
        Self::new(MatchMode::Superset)
    }

    /// How arguments compare (agentevals' `tool_args_match_mode`; `Exact` unless set).
    pub fn tool_args(mut self, args: ArgsMatch) -> Self {
        self.args = args;
        self
    }

    /// How the arguments of the tool `name` compare (an entry of agentevals'
    /// `tool_args_match_overrides`).
    pub fn tool_override(mut self, name: impl Into<String>, args: ArgsOverride) -> Self {
        self.overrides.insert(name.into(), args);
        self
    }

    /// The arguments of the tool `name` compared by `f(left, right)` (see [`ArgsMatch`] for
    /// which is which).
    pub fn tool_comparator(
        self,
        name: impl Into<String>,
        f: impl Fn(&Value, &Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.tool_override(name, ArgsOverride::Custom(ArgsComparator::new(f)))
    }

    /// Whether the arguments of two calls of `name` match (`_get_matcher_for_tool_name`).
    fn args_match(&self, name: &str, left: &Value, right: &Value) -> bool {
        self.overrides
            .get(name)
            .and_then(|o| o.compare(left, right))
            .unwrap_or_else(|| self.args.compare(left, right))
    }

    fn label(&self) -> String {
        let mut label = format!(
            "agentevals {}, tool arguments {}",
            self.mode.as_str(),
            self.args
        );
        if !self.overrides.is_empty() {
            let names: Vec<&str> = self.overrides.keys().map(String::as_str).collect();
            label.push_str(&format!(" (overridden for {})", names.join(", ")));
        }
        label
    }

    fn mismatch(&self, reason: String, actual: &Trajectory, expected: &Trajectory) -> Mismatch {
        Mismatch::new(self.label(), reason, lines(expected), lines(actual))
    }

    fn check_strict(&self, actual: &Trajectory, expected: &Trajectory) -> Result<(), Mismatch> {
        let actual_messages: Vec<(usize, &Step)> = actual.messages().collect();
        let expected_messages: Vec<(usize, &Step)> = expected.messages().collect();
        if actual_messages.len() != expected_messages.len() {
            return Err(self.mismatch(
                format!(
                    "{} messages, expected {}",
                    actual_messages.len(),
                    expected_messages.len()
                ),
                actual,
                expected,
            ));
        }
        for (k, (&(ai, a), &(ei, e))) in actual_messages.iter().zip(&expected_messages).enumerate()
        {
            let at = |reason: String| {
                self.mismatch(format!("message {k}: {reason}"), actual, expected)
                    .actual_at(ai)
                    .expected_at(ei)
            };
            if a.role() != e.role() {
                return Err(at(format!(
                    "role {}, expected {}",
                    a.role().unwrap_or_default(),
                    e.role().unwrap_or_default()
                )));
            }
            let (a_calls, e_calls) = (calls_of(a), calls_of(e));
            match (a_calls.is_empty(), e_calls.is_empty()) {
                (true, true) => continue,
                (true, false) => return Err(at("calls no tool, expected tool calls".into())),
                (false, true) => return Err(at("calls tools, expected no tool call".into())),
                (false, false) => {}
            }
            if a_calls.len() != e_calls.len() {
                return Err(at(format!(
                    "{} tool calls, expected {}",
                    a_calls.len(),
                    e_calls.len()
                )));
            }
            // Each actual call takes the first expected call of the message not yet taken
            // with its name and matching arguments (agentevals' greedy pairing).
            let mut taken = vec![false; e_calls.len()];
            for call in a_calls {
                let found = e_calls.iter().enumerate().position(|(i, expected)| {
                    !taken[i]
                        && call.name == expected.name
                        && self.args_match(&call.name, &call.arguments, &expected.arguments)
                });
                match found {
                    Some(i) => taken[i] = true,
                    None => {
                        return Err(at(format!(
                            "call {call} matches no expected call of this message"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// agentevals' `_is_trajectory_superset(outputs, reference)`: each call of `reference`,
    /// in order, takes the first call of `outputs` not yet taken with its name and matching
    /// arguments, compared `(output's, reference's)`. `Err` holds the step and call of
    /// `reference` left without one.
    fn is_superset<'a>(
        &self,
        outputs: &Trajectory,
        reference: &'a Trajectory,
    ) -> Result<(), (usize, &'a ToolCallStep)> {
        let outputs: Vec<&ToolCallStep> = outputs.tool_calls().collect();
        let mut taken = vec![false; outputs.len()];
        for (step, call) in calls_with_steps(reference) {
            let found = outputs.iter().enumerate().position(|(i, out)| {
                !taken[i]
                    && out.name == call.name
                    && self.args_match(&call.name, &out.arguments, &call.arguments)
            });
            match found {
                Some(i) => taken[i] = true,
                None => return Err((step, call)),
            }
        }
        Ok(())
    }

    fn expected_within_actual(
        &self,
        actual: &Trajectory,
        expected: &Trajectory,
    ) -> Result<(), Mismatch> {
        self.is_superset(actual, expected).map_err(|(step, call)| {
            self.mismatch(
                format!("expected call {call} (step {step}) has no match among the actual calls"),
                actual,
                expected,
            )
            .expected_at(step)
        })
    }

    fn actual_within_expected(
        &self,
        actual: &Trajectory,
        expected: &Trajectory,
    ) -> Result<(), Mismatch> {
        self.is_superset(expected, actual).map_err(|(step, call)| {
            self.mismatch(
                format!("actual call {call} (step {step}) has no match among the expected calls"),
                actual,
                expected,
            )
            .actual_at(step)
        })
    }
}

impl TrajectoryMatcher for TrajectoryMatch {
    fn check(&self, actual: &Trajectory, expected: &Trajectory) -> Result<(), Mismatch> {
        match self.mode {
            MatchMode::Strict => self.check_strict(actual, expected),
            MatchMode::Superset => self.expected_within_actual(actual, expected),
            MatchMode::Subset => self.actual_within_expected(actual, expected),
            MatchMode::Unordered => {
                self.expected_within_actual(actual, expected)?;
                self.actual_within_expected(actual, expected)
            }
        }
    }
}

fn calls_of(step: &Step) -> &[ToolCallStep] {
    match step {
        Step::Model(model) => &model.tool_calls,
        _ => &[],
    }
}

fn calls_with_steps(trajectory: &Trajectory) -> impl Iterator<Item = (usize, &ToolCallStep)> {
    trajectory
        .steps()
        .iter()
        .enumerate()
        .flat_map(|(i, step)| calls_of(step).iter().map(move |call| (i, call)))
}

fn lines(trajectory: &Trajectory) -> Vec<String> {
    trajectory.steps().iter().map(ToString::to_string).collect()
}
