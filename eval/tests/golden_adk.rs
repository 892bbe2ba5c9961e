//! Google ADK's own trajectory-evaluator test vectors, run against [`ToolTrajectory`].
//!
//! Source: github.com/google/adk-python, `tests/unittests/evaluation/test_trajectory_evaluator.py`
//! at commit 76b99146f3007d76370c22243422527a36fb24b2. The semantics were read from
//! `google/adk/evaluation/trajectory_evaluator.py` of the PyPI wheel google-adk 2.15.0, which
//! differs from that commit's file in two places no vector here reaches: it refuses lists of
//! invocations of different lengths (the commit's `zip` cut the longer one), and it takes a
//! call without arguments (`None`) as equal to one with `{}`. Both are this crate's behaviour,
//! tested at the end.
//!
//! Each test keeps its source's name. An `Invocation` is a trajectory here (a user message
//! and the model's tool calls); `TrajectoryEvaluator(eval_metric=…threshold=0.5…)` is
//! `ToolTrajectory::new(…).threshold(0.5)`.

use hookchain_eval::{
    EvalStatus, ToolCallStep, ToolTrajectory, ToolTrajectoryError, ToolTrajectoryMatch, Trajectory,
    TrajectoryMatcher,
};
use serde_json::{Value, json};

/// `genai_types.FunctionCall(name=…, args=…)`.
fn call(name: &str, args: Value) -> ToolCallStep {
    ToolCallStep::new(name, args)
}

/// An `Invocation` with `_USER_CONTENT` and these `tool_uses`.
fn invocation(calls: Vec<ToolCallStep>) -> Trajectory {
    let builder = Trajectory::builder().user("User input here.");
    if calls.is_empty() {
        return builder.build();
    }
    builder.tool_calls(calls).build()
}

/// The fixtures `evaluator`, `in_order_evaluator`, `any_order_evaluator`.
fn evaluator(match_type: ToolTrajectoryMatch) -> ToolTrajectory {
    ToolTrajectory::new(match_type).threshold(0.5)
}

/// Asserts one invocation's score and status, and the overall ones (equal for one).
fn assert_single(
    evaluator: ToolTrajectory,
    actual: &Trajectory,
    expected: &Trajectory,
    score: f64,
) {
    let result = evaluator
        .evaluate(std::slice::from_ref(actual), std::slice::from_ref(expected))
        .expect("as many invocations");
    let status = if score >= 0.5 {
        EvalStatus::Passed
    } else {
        EvalStatus::Failed
    };
    assert_eq!(result.overall_score, Some(score));
    assert_eq!(result.overall_status, status);
    assert_eq!(result.per_invocation.len(), 1);
    assert_eq!(result.per_invocation[0].score, score);
    assert_eq!(result.per_invocation[0].status, status);
}

#[test]
fn test_tool_trajectory_criterion_accepts_string_match_type() {
    assert_eq!("in_order".parse(), Ok(ToolTrajectoryMatch::InOrder));
}

#[test]
fn test_tool_trajectory_criterion_normalizes_string_match_type() {
    use ToolTrajectoryMatch::{AnyOrder, Exact, InOrder};
    for (name, expected) in [
        ("exact", Exact),
        ("EXACT", Exact),
        (" exact ", Exact),
        ("in order", InOrder),
        ("IN ORDER", InOrder),
        ("In OrDeR", InOrder),
        ("in-order", InOrder),
        ("IN-ORDER", InOrder),
        ("in_order", InOrder),
        ("any order", AnyOrder),
        ("ANY ORDER", AnyOrder),
        ("any-order", AnyOrder),
        ("ANY-ORDER", AnyOrder),
        ("any_order", AnyOrder),
    ] {
        assert_eq!(
            name.parse::<ToolTrajectoryMatch>(),
            Ok(expected),
            "{name:?}"
        );
    }
}

#[test]
fn test_tool_trajectory_criterion_rejects_unknown_string_match_type() {
    assert!("random string".parse::<ToolTrajectoryMatch>().is_err());
    assert!(serde_json::from_value::<ToolTrajectoryMatch>(json!("random string")).is_err());
}

#[test]
fn test_trajectory_evaluator_accepts_string_match_type_from_eval_metric_dict() {
    // The criterion comes from a dict: the match type is read from data.
    let match_type: ToolTrajectoryMatch = serde_json::from_value(json!("ANY_ORDER")).unwrap();
    let (t1, t2) = (call("test_func1", json!({})), call("test_func2", json!({})));
    let actual = invocation(vec![t1.clone(), t2.clone()]);
    let expected = invocation(vec![t2, t1]);
    let result = evaluator(match_type)
        .evaluate(&[actual], &[expected])
        .unwrap();
    assert_eq!(result.overall_score, Some(1.0));
}

#[test]
fn test_evaluate_invocations_equal_tool_calls() {
    let inv = invocation(vec![call("test_func", json!({"arg1": "val1"}))]);
    assert_single(evaluator(ToolTrajectoryMatch::Exact), &inv, &inv, 1.0);
}

#[test]
fn test_evaluate_invocations_different_tool_call_names() {
    let inv1 = invocation(vec![call("test_func1", json!({"arg1": "val1"}))]);
    let inv2 = invocation(vec![call("test_func2", json!({"arg1": "val1"}))]);
    assert_single(evaluator(ToolTrajectoryMatch::Exact), &inv1, &inv2, 0.0);
}

#[test]
fn test_evaluate_invocations_different_tool_call_args() {
    let inv1 = invocation(vec![call("test_func", json!({"arg1": "val1"}))]);
    let inv2 = invocation(vec![call("test_func", json!({"arg1": "val2"}))]);
    assert_single(evaluator(ToolTrajectoryMatch::Exact), &inv1, &inv2, 0.0);
}

#[test]
fn test_evaluate_invocations_different_number_of_tool_calls() {
    let c = call("test_func", json!({"arg1": "val1"}));
    let inv1 = invocation(vec![c.clone()]);
    let inv2 = invocation(vec![c.clone(), c]);
    assert_single(evaluator(ToolTrajectoryMatch::Exact), &inv1, &inv2, 0.0);
}

#[test]
fn test_evaluate_invocations_no_tool_calls() {
    let inv = invocation(vec![]);
    assert_single(evaluator(ToolTrajectoryMatch::Exact), &inv, &inv, 1.0);
}

#[test]
fn test_evaluate_invocations_multiple_invocations() {
    let t1 = call("test_func1", json!({"arg1": "val1"}));
    let t2 = call("test_func2", json!({"arg1": "val1"}));
    let actual = [invocation(vec![t1.clone()]), invocation(vec![t1.clone()])];
    let expected = [invocation(vec![t1]), invocation(vec![t2])];
    let result = evaluator(ToolTrajectoryMatch::Exact)
        .evaluate(&actual, &expected)
        .unwrap();
    assert_eq!(result.overall_score, Some(0.5));
    assert_eq!(result.overall_status, EvalStatus::Passed);
    assert_eq!(result.per_invocation.len(), 2);
    assert_eq!(result.per_invocation[0].score, 1.0);
    assert_eq!(result.per_invocation[0].status, EvalStatus::Passed);
    assert_eq!(result.per_invocation[1].score, 0.0);
    assert_eq!(result.per_invocation[1].status, EvalStatus::Failed);
}

/// `t1`, `t1_1`, … of the in-order and any-order tests: calls without arguments.
fn t(name: &str) -> ToolCallStep {
    call(name, json!({}))
}

#[test]
fn test_evaluate_invocations_in_order_match_with_extra_tool_calls() {
    let actual = invocation(vec![
        t("t1"),
        t("t1_1"),
        t("t2"),
        t("t2_1"),
        t("t3"),
        t("t3_1"),
    ]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t3")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::InOrder),
        &actual,
        &expected,
        1.0,
    );
}

#[test]
fn test_evaluate_invocations_in_order_match_fails_with_missing_tool_call() {
    let actual = invocation(vec![t("t1"), t("t1_1"), t("t2"), t("t2_1"), t("t3_1")]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t4")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::InOrder),
        &actual,
        &expected,
        0.0,
    );
}

#[test]
fn test_evaluate_invocations_in_order_match_fails_with_wrong_order() {
    let actual = invocation(vec![t("t1"), t("t3"), t("t2")]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t3")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::InOrder),
        &actual,
        &expected,
        0.0,
    );
}

#[test]
fn test_evaluate_invocations_any_order_match_with_extra_tool_calls_different_order() {
    let actual = invocation(vec![
        t("t2"),
        t("t2_1"),
        t("t1"),
        t("t1_1"),
        t("t3"),
        t("t3_1"),
    ]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t3")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::AnyOrder),
        &actual,
        &expected,
        1.0,
    );
}

#[test]
fn test_evaluate_invocations_any_order_match_fails_with_missing_tool_call() {
    let actual = invocation(vec![t("t1"), t("t1_1"), t("t2"), t("t2_1"), t("t3_1")]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t4")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::AnyOrder),
        &actual,
        &expected,
        0.0,
    );
}

#[test]
fn test_evaluate_invocations_any_order_match_with_duplicates() {
    let actual = invocation(vec![t("t1"), t("t2"), t("t3"), t("t1")]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t1")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::AnyOrder),
        &actual,
        &expected,
        1.0,
    );
}

#[test]
fn test_evaluate_invocations_any_order_match_fails_with_duplicates_missing() {
    let actual = invocation(vec![t("t1"), t("t2"), t("t3")]);
    let expected = invocation(vec![t("t1"), t("t2"), t("t1")]);
    assert_single(
        evaluator(ToolTrajectoryMatch::AnyOrder),
        &actual,
        &expected,
        0.0,
    );
}

#[test]
fn test_evaluate_invocations_no_invocations() {
    let result = evaluator(ToolTrajectoryMatch::Exact)
        .evaluate(&[], &[])
        .unwrap();
    assert_eq!(result.overall_score, None);
    assert_eq!(result.overall_status, EvalStatus::NotEvaluated);
    assert!(result.per_invocation.is_empty());
}

#[test]
fn test_exact_match_ignore_args() {
    let actual = invocation(vec![call("search", json!({"query": "cats"}))]);
    let expected = invocation(vec![call("search", json!({"query": "dogs"}))]);
    let matcher = ToolTrajectory::new(ToolTrajectoryMatch::Exact).ignore_args(true);
    assert!(matcher.matches(&actual, &expected));
}

#[test]
fn test_in_order_match_ignore_args() {
    let actual = invocation(vec![
        call("search", json!({"query": "cats"})),
        call("lookup", json!({"id": "123"})),
    ]);
    let expected = invocation(vec![
        call("search", json!({"query": "dogs"})),
        call("lookup", json!({"id": "999"})),
    ]);
    let matcher = ToolTrajectory::new(ToolTrajectoryMatch::InOrder).ignore_args(true);
    assert!(matcher.matches(&actual, &expected));
}

#[test]
fn test_any_order_match_ignore_args() {
    let actual = invocation(vec![
        call("lookup", json!({"id": "123"})),
        call("search", json!({"query": "cats"})),
    ]);
    let expected = invocation(vec![
        call("search", json!({"query": "dogs"})),
        call("lookup", json!({"id": "999"})),
    ]);
    let matcher = ToolTrajectory::new(ToolTrajectoryMatch::AnyOrder).ignore_args(true);
    assert!(matcher.matches(&actual, &expected));
}

// `test_trajectory_evaluator_loads_ignore_args_from_criterion` checks that ADK's pydantic
// criterion hands `ignore_args` to the evaluator's private field: this port has no separate
// criterion object (`ignore_args` is set on the matcher itself), so there is nothing to load.

/// google-adk 2.15.0: invocation lists of different lengths are refused.
#[test]
fn invocations_of_different_counts_are_refused() {
    let inv = invocation(vec![]);
    let error = evaluator(ToolTrajectoryMatch::Exact)
        .evaluate(&[inv.clone(), inv.clone()], &[inv])
        .unwrap_err();
    assert_eq!(
        error,
        ToolTrajectoryError::InvocationCount {
            actual: 2,
            expected: 1
        }
    );
}

/// google-adk 2.15.0: a call without arguments equals one with `{}`.
#[test]
fn no_arguments_equal_empty_arguments() {
    let actual = invocation(vec![call("ping", Value::Null)]);
    let expected = invocation(vec![call("ping", json!({}))]);
    assert!(ToolTrajectory::new(ToolTrajectoryMatch::Exact).matches(&actual, &expected));
}
