//! agentevals' own trajectory-match test vectors, run against [`TrajectoryMatch`].
//!
//! Source: github.com/langchain-ai/agentevals, `python/tests/test_trajectory.py` and
//! `python/tests/test_trajectory_async.py` at commit 946ad15b9f2ce9bc9843edd2bb773bd07d78ca7e
//! (package version 0.0.9, whose `agentevals/trajectory/*.py` are those of the PyPI wheel
//! agentevals 0.0.9 this crate's semantics were read from).
//!
//! The vectors are in `golden/agentevals_*.json`, extracted by `golden/extract_agentevals.py`,
//! which runs those test files with the library stubbed: for each evaluator call, its
//! configuration (`trajectory_match_mode`, `tool_args_match_mode`,
//! `tool_args_match_overrides`), both message lists as the test wrote them (LangChain messages
//! turned into OpenAI's form, as agentevals normalizes them), and the score the test asserts.
//! Each `#[test]` here is one test function of the source, over all its parametrizations; the
//! two overrides that are Python functions are ported below, by name.

use hookchain_eval::{
    ArgsMatch, ArgsOverride, MatchMode, Trajectory, TrajectoryMatch, TrajectoryMatcher,
};
use serde::Deserialize;
use serde_json::Value;

const SYNC: &str = include_str!("golden/agentevals_test_trajectory.json");
const ASYNC: &str = include_str!("golden/agentevals_test_trajectory_async.json");

#[derive(Deserialize)]
struct Vector {
    test: String,
    params: Value,
    config: Config,
    expected_score: Value,
    outputs: Value,
    reference_outputs: Value,
}

#[derive(Deserialize)]
struct Config {
    trajectory_match_mode: Option<String>,
    tool_args_match_mode: Option<String>,
    #[serde(default)]
    tool_args_match_overrides: serde_json::Map<String, Value>,
}

/// `test_trajectory_match_with_langchain_messages_and_override`'s lambda:
/// `(x["city"] == "SF" or x["city"] == "San Francisco") and (y["city"] == "SF" or …)`.
fn sf_city(x: &Value, y: &Value) -> bool {
    let sf = |v: &Value| {
        matches!(
            v.get("city").and_then(Value::as_str),
            Some("SF" | "San Francisco")
        )
    };
    sf(x) && sf(y)
}

/// `test_trajectory_match_with_overrides`' `lookup_policy_query_matcher(tool_args,
/// reference_tool_args)`: when the reference's query mentions "upgrade", the call's must too;
/// any other query matches.
fn lookup_policy_query_matcher(tool_args: &Value, reference_tool_args: &Value) -> bool {
    let query = |v: &Value| {
        v.get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let reference = query(reference_tool_args);
    if !reference.is_empty() && reference.contains("upgrade") {
        return query(tool_args).contains("upgrade");
    }
    true
}

fn matcher(config: &Config) -> TrajectoryMatch {
    let mode: MatchMode = config
        .trajectory_match_mode
        .as_deref()
        .unwrap_or("strict")
        .parse()
        .expect("a mode of agentevals");
    let args: ArgsMatch = config
        .tool_args_match_mode
        .as_deref()
        .unwrap_or("exact")
        .parse()
        .expect("an arguments mode of agentevals");
    let mut matcher = TrajectoryMatch::new(mode).tool_args(args);
    for (tool, value) in &config.tool_args_match_overrides {
        matcher = match value {
            Value::String(name) if name == "<callable <lambda>>" => {
                matcher.tool_comparator(tool, sf_city)
            }
            Value::String(name) if name == "<callable lookup_policy_query_matcher>" => {
                matcher.tool_comparator(tool, lookup_policy_query_matcher)
            }
            Value::String(mode) => {
                matcher.tool_override(tool, ArgsOverride::Mode(mode.parse().expect("a mode")))
            }
            Value::Array(keys) => matcher.tool_override(
                tool,
                ArgsOverride::Keys(
                    keys.iter()
                        .map(|k| k.as_str().expect("a key path").to_owned())
                        .collect(),
                ),
            ),
            other => panic!("an override this port does not know: {other}"),
        };
    }
    matcher
}

/// agentevals' scores are booleans, or 1.0 / 0.0 in some parametrizations.
fn expected_pass(score: &Value) -> bool {
    match score {
        Value::Bool(pass) => *pass,
        Value::Number(n) => n.as_f64() == Some(1.0),
        other => panic!("not a score: {other}"),
    }
}

/// Runs every vector of `test` in `vectors`; returns how many.
fn run(vectors: &str, test: &str) -> usize {
    let vectors: Vec<Vector> = serde_json::from_str(vectors).expect("the golden file");
    let mut count = 0;
    for vector in vectors.iter().filter(|v| v.test == test) {
        let actual = Trajectory::from_openai_messages(&vector.outputs).expect("outputs");
        let expected =
            Trajectory::from_openai_messages(&vector.reference_outputs).expect("reference_outputs");
        let result = matcher(&vector.config).check(&actual, &expected);
        assert_eq!(
            result.is_ok(),
            expected_pass(&vector.expected_score),
            "{test} {} with {}: agentevals scores {}, this port says {:?}",
            vector.params,
            serde_json::to_string(&vector.config.tool_args_match_overrides).unwrap_or_default(),
            vector.expected_score,
            result,
        );
        count += 1;
    }
    assert!(count > 0, "no vector of {test}");
    count
}

macro_rules! golden {
    ($($test:ident: $sync:literal + $async:literal,)*) => {
        $(
            #[test]
            fn $test() {
                assert_eq!(run(SYNC, stringify!($test)), $sync, "vectors in test_trajectory.py");
                assert_eq!(run(ASYNC, stringify!($test)), $async, "vectors in test_trajectory_async.py");
            }
        )*

        /// Every vector of both files is run by one of the tests above.
        #[test]
        fn every_vector_is_run() {
            let total = |file: &str| serde_json::from_str::<Vec<Value>>(file).map(|v| v.len()).unwrap_or(0);
            assert_eq!(total(SYNC), 0 $(+ $sync)*);
            assert_eq!(total(ASYNC), 0 $(+ $async)*);
        }
    };
}

golden! {
    test_trajectory_match: 4 + 4,
    test_trajectory_with_different_tool_message_order: 4 + 4,
    test_trajectory_with_different_message_count: 4 + 4,
    test_trajectory_subset_tool_call: 4 + 4,
    test_exact_matcher_with_different_called_tools: 4 + 4,
    test_trajectory_with_extra_tool_calls_and_override: 4 + 4,
    test_trajectory_with_subset_tool_calls_and_override: 4 + 4,
    test_trajectory_match_with_langchain_messages_and_override: 4 + 4,
    test_trajectory_match_with_langchain_messages_failure: 4 + 4,
    test_trajectory_match_with_overrides: 8 + 8,
    test_trajectory_match_with_nested_field_overrides: 8 + 8,
    test_tool_args_match_mode_superset: 4 + 4,
    test_tool_args_match_mode_subset: 4 + 4,
    test_tool_args_match_mode_exact: 4 + 4,
}
