//! `ValidatedOutput`: an answer that must be a `T` — one rule per test.

mod support;

use futures::StreamExt;
use hookchain::builtin::ValidatedOutput;
use hookchain::builtin::validated_output::OutputRejected;
use hookchain::model::ResponseFormat;
use hookchain::prelude::*;
use hookchain::{EndReason, Message, Role, StopReason};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Verdict {
    approved: bool,
    reason: String,
}

fn agent(
    answers: Vec<ModelResponse>,
    retries: u32,
) -> Agent<ScriptedModel, ValidatedOutput<Verdict>> {
    Agent::builder(ScriptedModel::new(answers))
        .chain(
            ValidatedOutput::<Verdict>::builder()
                .validate(|verdict| {
                    if verdict.reason.is_empty() {
                        Err("`reason` is empty: say why".to_owned())
                    } else {
                        Ok(())
                    }
                })
                .max_retries(retries)
                .build(),
        )
        .build()
        .unwrap()
}

const GOOD: &str = r#"{"approved": true, "reason": "within budget"}"#;

#[tokio::test]
async fn every_request_asks_for_the_types_schema() {
    let agent = agent(vec![ModelResponse::text(GOOD)], 2);
    agent.run("Approve?").await.unwrap();
    let requests = agent.model().requests();
    assert_eq!(
        requests[0].response_format,
        Some(ResponseFormat::of::<Verdict>())
    );
}

#[tokio::test]
async fn the_agents_own_format_is_kept() {
    let own = ResponseFormat::new("mine", json!({"type": "object"}));
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text(GOOD)]))
        .response_format(own.clone())
        .chain(ValidatedOutput::<Verdict>::new())
        .build()
        .unwrap();
    agent.run("Approve?").await.unwrap();
    assert_eq!(agent.model().requests()[0].response_format, Some(own));
}

#[tokio::test]
async fn a_rejected_answer_goes_back_with_what_was_wrong() {
    let agent = agent(
        vec![
            ModelResponse::text("Sure, approved!"),
            ModelResponse::text(r#"{"approved": true, "reason": ""}"#),
            ModelResponse::text(GOOD),
        ],
        2,
    );
    let output = agent.run("Approve?").await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(
        output.parse::<Verdict>().unwrap(),
        Verdict {
            approved: true,
            reason: "within budget".to_owned()
        }
    );
    let requests = agent.model().requests();
    assert_eq!(requests.len(), 3);
    // The second request: the rejected answer, then the correction (a parse error).
    let second: Vec<&Message> = requests[1].messages.iter().collect();
    assert_eq!(second[1].text(), "Sure, approved!");
    assert_eq!(second[2].role, Role::User);
    assert!(
        second[2].text().contains("does not fit"),
        "{}",
        second[2].text()
    );
    // The third: the validator's words.
    let last = requests[2].messages.last().unwrap();
    assert!(
        last.text().contains("`reason` is empty: say why"),
        "{}",
        last.text()
    );
    // The corrections are in the history too.
    let users = output
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .count();
    assert_eq!(users, 3);
}

#[tokio::test]
async fn past_the_retries_the_run_fails_with_the_last_error() {
    let agent = agent(
        vec![
            ModelResponse::text("no"),
            ModelResponse::text(r#"{"approved": false, "reason": ""}"#),
        ],
        1,
    );
    let error = support::middleware_error(agent.run("Approve?").await);
    let rejected = error.inner().downcast_ref::<OutputRejected>().unwrap();
    assert_eq!(rejected.attempts, 2);
    assert!(rejected.error.contains("`reason` is empty"), "{rejected}");
    assert_eq!(agent.model().calls(), 2);
}

#[tokio::test]
async fn tool_calls_and_unfinished_answers_are_left_alone() {
    let cut = ModelResponse::new(
        Message::assistant("{\"approved\": tr"),
        StopReason::MaxTokens,
    );
    let agent = agent(
        vec![
            ModelResponse::tool_calls([ToolCall::new("c1", "missing", json!({}))]),
            cut,
        ],
        0,
    );
    let output = agent.run("Approve?").await.unwrap();
    assert_eq!(output.end, EndReason::Truncated);
    assert_eq!(agent.model().calls(), 2);
}

#[tokio::test]
async fn a_streamed_run_is_corrected_too() {
    let agent = agent(
        vec![ModelResponse::text("nope"), ModelResponse::text(GOOD)],
        2,
    );
    let events: Vec<_> = agent.stream("Approve?").map(Result::unwrap).collect().await;
    let Some(hookchain::agent::AgentEvent::Output(output)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(output.parse::<Verdict>().unwrap().approved);
    assert_eq!(agent.model().calls(), 2);
}
