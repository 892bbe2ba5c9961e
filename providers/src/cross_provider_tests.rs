//! A history written by several providers (a routed fallback, a model changed mid-thread) sent
//! to each: every provider gets back its own reasoning data and none of the others' — no
//! signature it did not make, no encrypted reasoning it cannot read, no reasoning as text.

use hookchain_core::message::{ContentPart, Reasoning};
use hookchain_core::{Message, ModelRequest, ToolCall, ToolResult, ToolSpec};
use serde_json::json;

use crate::{anthropic, bedrock, gemini, openai, responses};

const ANTHROPIC_SIGNATURE: &str = "sig-of-anthropic";
const ANTHROPIC_THINKING: &str = "Anthropic's own thinking";
const GEMINI_SIGNATURE: &str = "sig-of-gemini";
const OPENAI_ENCRYPTED: &str = "encrypted-by-openai";
const OPENAI_SUMMARY: &str = "OpenAI's reasoning summary";
const BEDROCK_SIGNATURE: &str = "sig-of-bedrock";
const BEDROCK_THINKING: &str = "Bedrock's own thinking";
const BEDROCK_REDACTED: &str = "redacted-by-bedrock";

fn call(id: &str) -> ToolCall {
    ToolCall::new(id, "get_weather", json!({"city": "Paris"}))
}

/// Four answers, by Anthropic, Gemini, the Responses API and Bedrock, each with its reasoning
/// data, each call answered; then the user's follow-up.
fn mixed_history() -> ModelRequest {
    let by_anthropic = Message::assistant_with_tool_calls(
        vec![
            ContentPart::Reasoning(Box::new(
                Reasoning::new(ANTHROPIC_THINKING).signed(ANTHROPIC_SIGNATURE),
            )),
            ContentPart::text("Checking."),
        ],
        [call("c1")],
    );
    let by_gemini = Message::assistant_with_tool_calls("Again.", [call("c2")]).with_metadata(
        gemini::METADATA_KEY,
        json!({"calls": [{"position": 0, "id": "c2", "name": "get_weather",
                          "signature": GEMINI_SIGNATURE}]}),
    );
    let by_openai = Message::assistant_with_tool_calls(
        vec![ContentPart::Reasoning(Box::new(Reasoning::new(
            OPENAI_SUMMARY,
        )))],
        [call("c3")],
    )
    .with_metadata(
        responses::METADATA_KEY,
        json!([{"type": "reasoning", "id": "rs_1", "summary": [],
                "encrypted_content": OPENAI_ENCRYPTED}]),
    );
    let by_bedrock = Message::assistant_with_tool_calls(
        vec![ContentPart::Reasoning(Box::new(Reasoning::new(
            BEDROCK_THINKING,
        )))],
        [call("c4")],
    )
    .with_metadata(
        bedrock::METADATA_KEY,
        json!([{"reasoningText": {"text": BEDROCK_THINKING, "signature": BEDROCK_SIGNATURE}},
               {"redactedContent": BEDROCK_REDACTED}]),
    );
    ModelRequest::new(vec![
        Message::user("Weather in Paris?"),
        by_anthropic,
        Message::tool(ToolResult::ok("c1", "18°C")),
        by_gemini,
        Message::tool(ToolResult::ok("c2", "18°C")),
        by_openai,
        Message::tool(ToolResult::ok("c3", "18°C")),
        by_bedrock,
        Message::tool(ToolResult::ok("c4", "18°C")),
        Message::user("Thanks; and tomorrow?"),
    ])
    .with_tools(vec![ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )])
}

fn wire(request: &impl serde::Serialize) -> String {
    serde_json::to_string(request).unwrap()
}

/// Each provider's reasoning data in the history, by the name of its wire (Chat Completions,
/// `openai`, has none: it is sent everyone's).
const REASONING_OF: [(&str, &[&str]); 4] = [
    ("anthropic", &[ANTHROPIC_SIGNATURE, ANTHROPIC_THINKING]),
    ("gemini", &[GEMINI_SIGNATURE]),
    ("responses", &[OPENAI_ENCRYPTED, OPENAI_SUMMARY]),
    (
        "bedrock",
        &[BEDROCK_SIGNATURE, BEDROCK_THINKING, BEDROCK_REDACTED],
    ),
];

/// `sent` holds `own` and none of the other providers' reasoning data.
fn keeps_only(provider: &str, sent: &str, own: &[&str]) {
    for mine in own {
        assert!(
            sent.contains(mine),
            "{provider} lost its own `{mine}`: {sent}"
        );
    }
    let foreign = REASONING_OF
        .iter()
        .filter(|(of, _)| *of != provider)
        .flat_map(|(_, data)| data.iter());
    for theirs in foreign {
        assert!(
            !sent.contains(theirs),
            "{provider} was sent `{theirs}`: {sent}"
        );
    }
}

#[test]
fn anthropic_gets_its_signed_thinking_and_nobody_elses_reasoning() {
    let request = mixed_history();
    let options = anthropic::convert::Options {
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        thinking_budget: Some(1024),
        parallel_tool_calls: None,
        stream: false,
    };
    let sent = wire(&anthropic::convert::messages_request(&request, options));
    keeps_only(
        "anthropic",
        &sent,
        &[ANTHROPIC_SIGNATURE, ANTHROPIC_THINKING],
    );
}

#[test]
fn gemini_gets_its_signatures_and_nobody_elses_reasoning() {
    let request = mixed_history();
    let sent = wire(&gemini::convert::generate_request(&request, None));
    keeps_only("gemini", &sent, &[GEMINI_SIGNATURE]);
}

#[test]
fn the_responses_api_gets_its_reasoning_items_and_nobody_elses_reasoning() {
    let request = mixed_history();
    let options = responses::convert::Options {
        model: "o4-mini",
        parallel_tool_calls: None,
        reasoning_effort: None,
        reasoning_summary: false,
        store: false,
        reasons: true,
        stream: false,
    };
    let sent = wire(&responses::convert::responses_request(&request, options));
    keeps_only("responses", &sent, &[OPENAI_ENCRYPTED]);
}

#[test]
fn chat_completions_gets_no_reasoning_at_all() {
    let request = mixed_history();
    let options = openai::convert::Options {
        model: "gpt-4.1",
        parallel_tool_calls: None,
        stream: false,
    };
    let sent = wire(&openai::convert::chat_request(&request, options));
    keeps_only("openai", &sent, &["Checking.", "Again."]);
}

#[test]
fn bedrock_gets_its_signed_and_redacted_reasoning_and_nobody_elses() {
    let request = mixed_history();
    let sent = wire(&bedrock::convert::converse_request(&request, None).unwrap());
    keeps_only(
        "bedrock",
        &sent,
        &[BEDROCK_SIGNATURE, BEDROCK_THINKING, BEDROCK_REDACTED],
    );
}
