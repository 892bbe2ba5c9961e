//! The built-in evaluators.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::Value;

use super::python::{self, repr, repr_str, truncated};
use super::{EvaluationResult, Evaluator, Outcome};
use crate::matcher::json_eq::json_eq;

/// Passes when the output equals the case's expected output (as Python's `==`: `1 == 1.0`);
/// skipped when the case expects none. Pydantic Evals' `EqualsExpected`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EqualsExpected {}

impl EqualsExpected {
    /// The evaluator.
    #[must_use]
    pub const fn new() -> Self {
        Self {}
    }
}

impl Evaluator for EqualsExpected {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        let Some(expected) = &outcome.expected else {
            return EvaluationResult::skipped("the case has no expected output");
        };
        equals(&outcome.output, expected, "expected output")
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("EqualsExpected")
    }
}

/// Passes when the output equals this value (as Python's `==`: `1 == 1.0`). Pydantic Evals'
/// `Equals`.
#[derive(Debug, Clone, PartialEq)]
pub struct Equals {
    value: Value,
}

impl Equals {
    /// Compares the output with `value` (a `&str` is a JSON string).
    #[must_use]
    pub fn new(value: impl Into<Value>) -> Self {
        Self {
            value: value.into(),
        }
    }
}

impl Evaluator for Equals {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        equals(&outcome.output, &self.value, "value")
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("Equals")
    }
}

fn equals(output: &Value, expected: &Value, what: &str) -> EvaluationResult {
    if json_eq(output, expected) {
        EvaluationResult::pass()
    } else {
        EvaluationResult::fail(format!(
            "Output {} != {what} {}",
            truncated(repr(output), 100),
            truncated(repr(expected), 100)
        ))
    }
}

/// Passes when the output contains this value, with Pydantic Evals' `Contains` semantics:
///
/// - a string in a string output: a substring ([`case_sensitive`](Self::case_sensitive) or
///   not);
/// - in an object output: an object's every key with an equal value, else another value as a
///   key;
/// - in an array output: an equal item;
/// - with [`as_strings`](Self::as_strings), both sides as Python's `str()` (a string as it
///   is, anything else as its repr: `[1, 42, 3]`), then a substring.
///
/// Anything else (a number in a string, anything in a number) fails, with Python's error as
/// the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Contains {
    value: Value,
    case_sensitive: bool,
    as_strings: bool,
}

impl Contains {
    /// Looks for `value` in the output; case-sensitive, not as strings.
    #[must_use]
    pub fn new(value: impl Into<Value>) -> Self {
        Self {
            value: value.into(),
            case_sensitive: true,
            as_strings: false,
        }
    }

    /// Whether a substring's case matters (default `true`); only when both sides are strings
    /// (or [`as_strings`](Self::as_strings)).
    #[must_use]
    pub fn case_sensitive(mut self, case_sensitive: bool) -> Self {
        self.case_sensitive = case_sensitive;
        self
    }

    /// Whether to compare both sides as strings, whatever their types (default `false`).
    #[must_use]
    pub fn as_strings(mut self, as_strings: bool) -> Self {
        self.as_strings = as_strings;
        self
    }

    fn failure(&self, output: &Value) -> Option<String> {
        let as_strings = self.as_strings || (self.value.is_string() && output.is_string());
        if as_strings {
            let mut output = python::str(output);
            let mut expected = python::str(&self.value);
            if !self.case_sensitive {
                output = output.to_lowercase();
                expected = expected.to_lowercase();
            }
            return (!output.contains(&expected)).then(|| {
                format!(
                    "Output string {} does not contain expected string {}",
                    truncated(repr_str(&output), 100),
                    truncated(repr_str(&expected), 100)
                )
            });
        }
        match output {
            Value::Object(map) => match &self.value {
                Value::Object(expected) => expected.iter().find_map(|(key, expected)| {
                    let key_repr = truncated(repr_str(key), 30);
                    match map.get(key) {
                        None => Some(format!("Output does not contain expected key {key_repr}")),
                        Some(actual) if !json_eq(actual, expected) => Some(format!(
                            "Output has different value for key {key_repr}: {} != {}",
                            truncated(repr(actual), 100),
                            truncated(repr(expected), 100)
                        )),
                        Some(_) => None,
                    }
                }),
                Value::Array(_) => Some("Containment check failed: unhashable type: 'list'".into()),
                Value::String(key) if map.contains_key(key) => None,
                _ => Some(format!(
                    "Output {} does not contain provided value as a key",
                    truncated(repr(output), 200)
                )),
            },
            Value::Array(items) => {
                (!items.iter().any(|item| json_eq(item, &self.value))).then(|| {
                    format!(
                        "Output {} does not contain provided value",
                        truncated(repr(output), 200)
                    )
                })
            }
            Value::String(_) => Some(format!(
                "Containment check failed: 'in <string>' requires string as left operand, not {}",
                python::type_name(&self.value)
            )),
            other => Some(format!(
                "Containment check failed: argument of type '{}' is not iterable",
                python::type_name(other)
            )),
        }
    }
}

impl Evaluator for Contains {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        match self.failure(&outcome.output) {
            None => EvaluationResult::pass(),
            Some(reason) => EvaluationResult::fail(reason),
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("Contains")
    }
}

/// Passes when the output is of this Python type, or a subclass, as `json.loads` would give it:
/// `str`, `int`, `float`, `bool` (also an `int`), `NoneType`, `list`, `dict`, `object`.
/// Pydantic Evals' `IsInstance`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsInstance {
    type_name: String,
}

impl IsInstance {
    /// Checks the output's type against `type_name`.
    #[must_use]
    pub fn new(type_name: impl Into<String>) -> Self {
        Self {
            type_name: type_name.into(),
        }
    }
}

impl Evaluator for IsInstance {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        if python::mro(&outcome.output).contains(&self.type_name.as_str()) {
            EvaluationResult::pass()
        } else {
            EvaluationResult::fail(format!(
                "output is of type {}",
                python::type_name(&outcome.output)
            ))
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("IsInstance")
    }
}

/// Passes when the output, as text ([`Outcome::text`]), matches this regular expression
/// somewhere (anchor it with `^…$` to match all of it).
#[derive(Debug, Clone)]
pub struct Regex {
    regex: regex::Regex,
}

impl Regex {
    /// The evaluator of this pattern ([`regex`](https://docs.rs/regex) syntax); an error if
    /// it is not a valid one.
    pub fn new(pattern: &str) -> Result<Self, regex::Error> {
        regex::Regex::new(pattern).map(|regex| Self { regex })
    }
}

impl From<regex::Regex> for Regex {
    fn from(regex: regex::Regex) -> Self {
        Self { regex }
    }
}

impl Evaluator for Regex {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        let text = outcome.text();
        if self.regex.is_match(&text) {
            EvaluationResult::pass()
        } else {
            EvaluationResult::fail(format!(
                "Output {} does not match /{}/",
                truncated(repr_str(&text), 100),
                self.regex.as_str()
            ))
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("Regex")
    }
}

/// Passes when the model called this tool at least once in the trajectory (sub-agents' calls
/// are theirs, not counted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCalled {
    name: String,
}

impl ToolCalled {
    /// Checks that the tool `name` was called.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

impl Evaluator for ToolCalled {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        let mut called: Vec<&str> = Vec::new();
        for call in outcome.trajectory.tool_calls() {
            if call.name == self.name {
                return EvaluationResult::pass();
            }
            if !called.contains(&call.name.as_str()) {
                called.push(&call.name);
            }
        }
        let mut reason = format!("tool {} was not called", self.name);
        if called.is_empty() {
            reason.push_str(" (no tool was)");
        } else {
            let _ = write!(reason, " (called: {})", called.join(", "));
        }
        EvaluationResult::fail(reason)
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("ToolCalled")
    }
}

/// Passes when the model never called this tool in the trajectory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNotCalled {
    name: String,
}

impl ToolNotCalled {
    /// Checks that the tool `name` was not called.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

impl Evaluator for ToolNotCalled {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        let times = outcome
            .trajectory
            .tool_calls()
            .filter(|call| call.name == self.name)
            .count();
        match times {
            0 => EvaluationResult::pass(),
            1 => EvaluationResult::fail(format!("tool {} was called once", self.name)),
            n => EvaluationResult::fail(format!("tool {} was called {n} times", self.name)),
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("ToolNotCalled")
    }
}

/// Passes when the case took at most this long. Pydantic Evals' `MaxDuration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxDuration {
    max: Duration,
}

impl MaxDuration {
    /// At most `max`.
    #[must_use]
    pub const fn new(max: Duration) -> Self {
        Self { max }
    }
}

impl Evaluator for MaxDuration {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        if outcome.duration <= self.max {
            EvaluationResult::pass()
        } else {
            EvaluationResult::fail(format!(
                "took {:?}, more than {:?}",
                outcome.duration, self.max
            ))
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("MaxDuration")
    }
}

/// Passes when the run's model calls used at most this many tokens, input and output
/// together ([`Usage`](hookchain_core::Usage); cached tokens are part of the input). Calls
/// whose provider reported no usage count nothing: the reason then says how many there were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxTokens {
    max: u64,
}

impl MaxTokens {
    /// At most `max` tokens.
    #[must_use]
    pub const fn new(max: u64) -> Self {
        Self { max }
    }
}

impl Evaluator for MaxTokens {
    fn evaluate(&self, outcome: &Outcome) -> EvaluationResult {
        let usage = &outcome.usage;
        let total = usage.total();
        let mut result = if total <= self.max {
            EvaluationResult::pass()
        } else {
            EvaluationResult::fail(format!(
                "used {total} tokens ({} input, {} output), more than {}",
                usage.input_tokens, usage.output_tokens, self.max
            ))
        };
        if usage.unreported_calls > 0 {
            let note = format!(
                "{} model call(s) reported no usage and count nothing",
                usage.unreported_calls
            );
            result.reason = Some(match result.reason {
                Some(reason) => format!("{reason}; {note}"),
                None => note,
            });
        }
        result
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("MaxTokens")
    }
}
