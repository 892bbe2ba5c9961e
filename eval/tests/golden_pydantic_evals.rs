//! Pydantic Evals' deterministic evaluators, checked against its own unit tests.
//!
//! Source: the Python package `pydantic-evals` 2.71.0 (PyPI), module
//! `pydantic_evals/evaluators/common.py` (the semantics, the reasons' wording), and its unit
//! tests, `tests/evals/test_evaluator_common.py` of pydantic/pydantic-ai at commit
//! `45c4f3ba5ab640faf1a337f9ed9e983d6ffd7f68` (whose reasons match 2.71.0's source). Each test
//! below names the Python test it ports; Python values are the JSON values `json.loads` reads
//! back into them (a `BaseModel` or dataclass output is the dict Pydantic dumps it to).

use std::time::Duration;

use hookchain_eval::evaluator::{
    Contains, Equals, EqualsExpected, EvaluationResult, EvaluationValue, Evaluator, IsInstance,
    MaxDuration, Outcome,
};
use serde_json::{Value, json};

fn out(output: Value) -> Outcome {
    Outcome::new(output)
}

fn fails_with(result: &EvaluationResult, reason: &str) {
    assert!(result.is_fail(), "{result}");
    assert_eq!(result.reason.as_deref(), Some(reason));
}

/// `test_equals`.
#[test]
fn equals() {
    let evaluator = Equals::new(42);
    assert!(evaluator.evaluate(&out(json!(42))).is_pass());
    assert!(evaluator.evaluate(&out(json!(43))).is_fail());
}

/// `test_equals_expected`; with no expected output Python returns `{}` (no result): skipped.
#[test]
fn equals_expected() {
    let evaluator = EqualsExpected::new();
    assert!(evaluator.evaluate(&out(json!(42)).expected(42)).is_pass());
    assert!(evaluator.evaluate(&out(json!(42)).expected(43)).is_fail());
    assert_eq!(
        evaluator.evaluate(&out(json!(42))).value,
        EvaluationValue::Skipped
    );
}

/// `test_contains_string`.
#[test]
fn contains_string() {
    let evaluator = Contains::new("test");
    assert_eq!(
        evaluator.evaluate(&out(json!("this is a test"))),
        EvaluationResult::pass()
    );
    fails_with(
        &evaluator.evaluate(&out(json!("no match"))),
        "Output string 'no match' does not contain expected string 'test'",
    );
    let case_insensitive = Contains::new("TEST").case_sensitive(false);
    assert_eq!(
        case_insensitive.evaluate(&out(json!("this is a test"))),
        EvaluationResult::pass()
    );
}

/// `test_contains_dict`.
#[test]
fn contains_dict() {
    let evaluator = Contains::new(json!({"key": "value"}));
    assert_eq!(
        evaluator.evaluate(&out(json!({"key": "value", "extra": "data"}))),
        EvaluationResult::pass()
    );
    fails_with(
        &evaluator.evaluate(&out(json!({"different": "value"}))),
        "Output does not contain expected key 'key'",
    );
    fails_with(
        &evaluator.evaluate(&out(json!({"key": "different"}))),
        "Output has different value for key 'key': 'different' != 'value'",
    );
    // A value that is not a dict, in a dict: a key.
    assert_eq!(
        Contains::new("key").evaluate(&out(json!({"key": "value"}))),
        EvaluationResult::pass()
    );
}

/// `test_contains_basemodel` and `test_contains_dataclass`: the model dumped to a dict, its
/// unset fields `None`.
#[test]
fn contains_model_dumped_to_a_dict() {
    let evaluator = Contains::new(json!({"key": "value"}));
    assert_eq!(
        evaluator.evaluate(&out(json!({"key": "value", "extra": "data"}))),
        EvaluationResult::pass()
    );
    fails_with(
        &evaluator.evaluate(&out(json!({"key": null, "extra": "data"}))),
        "Output has different value for key 'key': None != 'value'",
    );
    fails_with(
        &evaluator.evaluate(&out(json!({"key": "different", "extra": null}))),
        "Output has different value for key 'key': 'different' != 'value'",
    );
}

/// `test_contains_list`.
#[test]
fn contains_list() {
    let evaluator = Contains::new(42);
    assert_eq!(
        evaluator.evaluate(&out(json!([1, 42, 3]))),
        EvaluationResult::pass()
    );
    fails_with(
        &evaluator.evaluate(&out(json!([1, 2, 3]))),
        "Output [1, 2, 3] does not contain provided value",
    );
}

/// `test_contains_as_strings`.
#[test]
fn contains_as_strings() {
    let evaluator = Contains::new(42).as_strings(true);
    assert!(
        evaluator
            .evaluate(&out(json!("The answer is 42")))
            .is_pass()
    );
    assert!(evaluator.evaluate(&out(json!([1, 42, 3]))).is_pass());
}

/// `test_contains_invalid_type`: Python's `TypeError` becomes the reason. JSON has no
/// unhashable class; a number is the value that is not iterable (Python 3.12's wording).
#[test]
fn contains_invalid_type() {
    let evaluator = Contains::new(42);
    fails_with(
        &evaluator.evaluate(&out(json!(7))),
        "Containment check failed: argument of type 'int' is not iterable",
    );
    fails_with(
        &evaluator.evaluate(&out(json!("42"))),
        "Containment check failed: 'in <string>' requires string as left operand, not int",
    );
    fails_with(
        &Contains::new(json!([1])).evaluate(&out(json!({"a": 1}))),
        "Containment check failed: unhashable type: 'list'",
    );
}

/// `test_is_instance` (a nested class has no JSON counterpart; `bool` is an `int`, as its MRO
/// says).
#[test]
fn is_instance() {
    let evaluator = IsInstance::new("str");
    assert!(evaluator.evaluate(&out(json!("test"))).is_pass());
    fails_with(
        &evaluator.evaluate(&out(json!(42))),
        "output is of type int",
    );
    assert!(IsInstance::new("int").evaluate(&out(json!(true))).is_pass());
    assert!(
        IsInstance::new("object")
            .evaluate(&out(json!(null)))
            .is_pass()
    );
    fails_with(
        &IsInstance::new("int").evaluate(&out(json!(1.5))),
        "output is of type float",
    );
}

/// `test_max_duration` (seconds as a float or a `timedelta` are both a `Duration` here).
#[test]
fn max_duration() {
    let evaluator = MaxDuration::new(Duration::from_secs(1));
    let took = |seconds: f64| Outcome::new(Value::Null).duration(Duration::from_secs_f64(seconds));
    assert!(evaluator.evaluate(&took(0.5)).is_pass());
    assert!(evaluator.evaluate(&took(1.5)).is_fail());
    assert!(evaluator.evaluate(&took(1.0)).is_pass());
}

/// Python's `==`, which `Equals` and `Contains` use: `1 == 1.0`, `True == 1`.
#[test]
fn values_compare_as_python_compares_them() {
    assert!(Equals::new(1.0).evaluate(&out(json!(1))).is_pass());
    assert!(Contains::new(1).evaluate(&out(json!([true]))).is_pass());
    assert!(
        Contains::new(json!({"a": 1}))
            .evaluate(&out(json!({"a": 1.0, "b": 2})))
            .is_pass()
    );
}
