//! The evaluators on a real agent's run (a `ScriptedModel` calling a `#[tool]`), the ones
//! Pydantic Evals does not have, closures, and outputs they cannot read.

use std::time::Duration;

use hookchain::prelude::*;
use hookchain::{RunOutput, ToolCall, Usage, tool};
use hookchain_eval::Trajectory;
use hookchain_eval::evaluator::{
    Contains, Equals, EqualsExpected, EvaluationResult, EvaluationValue, Evaluator, IsInstance,
    MaxDuration, MaxTokens, Outcome, Regex, ToolCalled, ToolNotCalled,
};
use serde_json::{Value, json};

/// The weather in a city.
#[tool]
async fn weather(city: String) -> String {
    format!("18°C in {city}")
}

async fn run(answer: &str) -> RunOutput {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "weather", json!({"city": "Paris"}))])
            .with_usage(Usage::new(100, 20)),
        ModelResponse::text(answer).with_usage(Usage::new(130, 10)),
    ]);
    let agent = Agent::builder(model).tool(weather).build().unwrap();
    agent.run("Weather in Paris?").await.unwrap()
}

#[tokio::test]
async fn a_runs_outcome_has_its_text_trajectory_and_usage() {
    let output = run("It is 18°C in Paris.").await;
    let outcome = Outcome::from_run(&output)
        .expected("It is 18°C in Paris.")
        .duration(Duration::from_millis(300));
    assert_eq!(outcome.output, json!("It is 18°C in Paris."));
    assert_eq!(outcome.usage.total(), 260);

    assert!(EqualsExpected::new().evaluate(&outcome).is_pass());
    assert!(ToolCalled::new("weather").evaluate(&outcome).is_pass());
    assert!(ToolNotCalled::new("search").evaluate(&outcome).is_pass());
    assert!(
        MaxDuration::new(Duration::from_secs(1))
            .evaluate(&outcome)
            .is_pass()
    );
    assert!(MaxTokens::new(260).evaluate(&outcome).is_pass());
    assert!(Regex::new(r"\d+°C").unwrap().evaluate(&outcome).is_pass());

    let over = MaxTokens::new(200).evaluate(&outcome);
    assert_eq!(
        over.reason.as_deref(),
        Some("used 260 tokens (230 input, 30 output), more than 200")
    );
    let missing = ToolCalled::new("search").evaluate(&outcome);
    assert_eq!(
        missing.reason.as_deref(),
        Some("tool search was not called (called: weather)")
    );
    let called = ToolNotCalled::new("weather").evaluate(&outcome);
    assert_eq!(
        called.reason.as_deref(),
        Some("tool weather was called once")
    );
}

#[tokio::test]
async fn a_json_answer_is_evaluated_as_json() {
    let output = run(r#"{"city": "Paris", "celsius": 18}"#).await;
    let outcome = Outcome::from_run_json(&output);
    assert!(IsInstance::new("dict").evaluate(&outcome).is_pass());
    assert!(
        Contains::new(json!({"celsius": 18.0}))
            .evaluate(&outcome)
            .is_pass()
    );
    assert!(Contains::new("city").evaluate(&outcome).is_pass());

    // Not JSON: stays a string.
    let output = run("18°C").await;
    assert_eq!(Outcome::from_run_json(&output).output, json!("18°C"));
}

#[test]
fn closures_are_evaluators() {
    let outcome = Outcome::new("short").trajectory(Trajectory::builder().model("short").build());
    let short = |outcome: &Outcome| outcome.text().len() < 10;
    assert!(short.evaluate(&outcome).is_pass());
    assert_eq!(short.name(), "custom");

    let half = |_: &Outcome| 0.5;
    assert_eq!(half.evaluate(&outcome).value, EvaluationValue::Score(0.5));
    let above = |_: &Outcome| 3.0;
    assert_eq!(above.evaluate(&outcome).as_score(), Some(1.0));
    let nan = |_: &Outcome| f64::NAN;
    assert_eq!(nan.evaluate(&outcome).as_score(), Some(0.0));

    let explained = |outcome: &Outcome| {
        if outcome.steps_ok() {
            EvaluationResult::pass()
        } else {
            EvaluationResult::fail("no step")
        }
    };
    assert!(explained.evaluate(&outcome).is_pass());
    let boxed: Vec<Box<dyn Evaluator>> = vec![Box::new(short), Box::new(Equals::new("short"))];
    assert!(boxed.iter().all(|e| e.evaluate(&outcome).is_pass()));
}

trait StepsOk {
    fn steps_ok(&self) -> bool;
}

impl StepsOk for Outcome {
    fn steps_ok(&self) -> bool {
        !self.trajectory.is_empty()
    }
}

#[test]
fn failures_say_why_and_bad_input_does_not_panic() {
    assert!(Regex::new("(unclosed").is_err());
    let regex = Regex::new("^[0-9]+$").unwrap();
    let failed = regex.evaluate(&Outcome::new("abc"));
    assert_eq!(
        failed.reason.as_deref(),
        Some("Output 'abc' does not match /^[0-9]+$/")
    );
    // A structured output is matched as compact JSON.
    assert!(
        Regex::new(r#""a":1"#)
            .unwrap()
            .evaluate(&Outcome::new(json!({"a": 1})))
            .is_pass()
    );

    let long = "é".repeat(300);
    let failed = Contains::new("x").evaluate(&Outcome::new(long.as_str()));
    let reason = failed.reason.unwrap();
    assert!(reason.contains("..."), "{reason}");
    assert!(reason.chars().count() < 250, "{reason}");

    let failed = Equals::new(json!({"a": [1, 2]})).evaluate(&Outcome::new(Value::Null));
    assert_eq!(
        failed.reason.as_deref(),
        Some("Output None != value {'a': [1, 2]}")
    );
    for output in [
        Value::Null,
        json!(true),
        json!(1.5),
        json!("s"),
        json!([]),
        json!({}),
    ] {
        let outcome = Outcome::new(output);
        for value in [
            Value::Null,
            json!(1),
            json!("s"),
            json!([1]),
            json!({"k": 1}),
        ] {
            let contains = Contains::new(value.clone());
            let _ = contains.evaluate(&outcome);
            let _ = contains.clone().as_strings(true).evaluate(&outcome);
            let _ = contains.case_sensitive(false).evaluate(&outcome);
        }
        let _ = EqualsExpected::new().evaluate(&outcome);
        let _ = MaxTokens::new(0).evaluate(&outcome);
    }

    let unreported = Outcome::new("x").usage(Usage::unreported());
    let result = MaxTokens::new(10).evaluate(&unreported);
    assert!(result.is_pass());
    assert_eq!(
        result.reason.as_deref(),
        Some("1 model call(s) reported no usage and count nothing")
    );
    assert_eq!(
        EqualsExpected::new()
            .evaluate(&Outcome::new("x"))
            .to_string(),
        "skipped: the case has no expected output"
    );
}
