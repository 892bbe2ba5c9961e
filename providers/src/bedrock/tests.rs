//! Conversion and decoding on recorded Converse JSON; no server.

use std::collections::VecDeque;

use hookchain_core::message::{ContentPart, ImageSource, Reasoning};
use hookchain_core::model::{ModelEvent, ModelSettings, PromptCache, ResponseFormat, ToolChoice};
use hookchain_core::{
    Message, ModelErrorKind, ModelRequest, ModelResponse, StopReason, ToolCall, ToolResult,
    ToolSpec, Usage,
};
use serde_json::{Value, json};

use super::METADATA_KEY;
use super::client::Converse;
use super::stream::ConverseDecoder;
use super::wire::ConverseResponse;
use crate::http::{Decoder, Protocol, parse_transcript};

mod props;

/// A recorded transcript; from the crate root, so that the `props` submodule can use it too.
macro_rules! transcript {
    ($path:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/transcripts/",
            $path
        ))
    };
}
use transcript;

const SIGNATURE: &str = "EqQBCkgIBxABGAIiQL3k9fZ0yN8aT5pQ2wVx7cJ1mR4sK6hB0dE3gF8iL2nO5qU9tW1yA4zC7eG0jM3pS6vX9bD2fH5kN8rT1wZ4EgxQ";
const THOUGHT: &str =
    "The user wants the weather in Paris. I should call get_weather with city Paris.";

/// The JSON `request` is sent as (with the builder's model fields `fields`), or why it is not.
fn on_wire(request: &ModelRequest, fields: Option<Value>) -> Result<Value, String> {
    let settings = super::client::Settings { fields };
    let body = Converse::body(&settings, request, false);
    // Through the text, as the server reads it (a `Value` would widen an `f32`).
    let text = serde_json::to_vec(&body).map_err(|error| error.to_string())?;
    Ok(serde_json::from_slice(&text).unwrap())
}

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
}

fn paris() -> ToolCall {
    ToolCall::new(
        "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

fn answer(text: &str) -> Result<ModelResponse, hookchain_core::ModelError> {
    let wire: ConverseResponse = serde_json::from_str(text).unwrap();
    Converse::answer(wire)
}

/// Two parallel calls answered by two results (one failed), then a user follow-up.
fn parallel_round() -> ModelRequest {
    ModelRequest::new(vec![
        Message::system("Answer in English."),
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls(
            "Checking both.",
            [
                ToolCall::new("t1", "get_weather", json!({"city": "Paris"})),
                ToolCall::new("t2", "get_weather", json!({"city": "Rome"})),
            ],
        ),
        Message::tool(ToolResult::ok(
            "t1",
            vec![ContentPart::json(json!({"celsius": 18}))],
        )),
        Message::tool(ToolResult::error("t2", "the weather service is down")),
        Message::user("And tomorrow?"),
    ])
    .with_system_prompt("You are a weather bot.")
    .with_tools(vec![weather_spec()])
}

#[test]
fn system_apart_turns_alternate_and_results_share_one_user_turn() {
    let wire = on_wire(&parallel_round(), None).unwrap();
    assert_eq!(
        wire["system"],
        json!([{"text": "You are a weather bot."}, {"text": "Answer in English."}])
    );
    assert_eq!(
        wire["messages"],
        json!([
            {"role": "user", "content": [{"text": "Weather in Paris and Rome?"}]},
            {"role": "assistant", "content": [
                {"text": "Checking both."},
                {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "t2", "name": "get_weather", "input": {"city": "Rome"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"json": {"celsius": 18}}]}},
                {"toolResult": {"toolUseId": "t2", "status": "error",
                                "content": [{"text": "the weather service is down"}]}},
                {"text": "And tomorrow?"},
            ]},
        ])
    );
    assert_eq!(
        wire["toolConfig"],
        json!({"tools": [{"toolSpec": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
        }}]})
    );
    assert!(wire.get("inferenceConfig").is_none(), "{wire}");
}

#[test]
fn tool_choice_settings_format_and_model_fields() {
    let mut request = parallel_round();
    request.tool_choice = ToolChoice::Required;
    request.settings = ModelSettings::new()
        .temperature(0.2)
        .max_tokens(512)
        .extra(
            "guardrailConfig",
            json!({"guardrailIdentifier": "g1", "guardrailVersion": "1"}),
        )
        .extra("additionalModelRequestFields", json!({"top_k": 40}));
    request.settings.stop = vec!["END".into()];
    request.response_format = Some(ResponseFormat::new("weather", json!({"type": "object"})));
    let fields = json!({"thinking": {"type": "enabled", "budget_tokens": 2048}});
    let wire = on_wire(&request, Some(fields)).unwrap();
    assert_eq!(wire["toolConfig"]["toolChoice"], json!({"any": {}}));
    assert_eq!(
        wire["inferenceConfig"],
        json!({"maxTokens": 512, "temperature": 0.2, "stopSequences": ["END"]})
    );
    assert_eq!(wire["guardrailConfig"]["guardrailIdentifier"], "g1");
    assert_eq!(
        wire["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 40})
    );
    let system = wire["system"].as_array().unwrap();
    assert!(
        system.last().unwrap()["text"]
            .as_str()
            .unwrap()
            .starts_with("Answer with JSON only"),
        "{wire}"
    );

    request.tool_choice = ToolChoice::Tool("get_weather".into());
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(
        wire["toolConfig"]["toolChoice"],
        json!({"tool": {"name": "get_weather"}})
    );
    // Converse has no "none": the tools are left out, unless the history has calls.
    request.tool_choice = ToolChoice::None;
    assert!(on_wire(&request, None).unwrap()["toolConfig"]["tools"].is_array());
    let fresh = ModelRequest::new(vec![Message::user("Hi")])
        .with_tools(vec![weather_spec()])
        .with_tool_choice(ToolChoice::None);
    assert!(on_wire(&fresh, None).unwrap().get("toolConfig").is_none());
}

#[test]
fn images_go_as_bytes_or_from_s3_and_a_web_url_is_refused_before_sending() {
    let image = |source: ImageSource| ContentPart::Image {
        source: Box::new(source),
    };
    let request = ModelRequest::new(vec![Message::user(vec![
        ContentPart::text("What is this?"),
        image(ImageSource::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        }),
        image(ImageSource::Url {
            url: "data:image/webp;base64,UklGRg==".into(),
        }),
        image(ImageSource::Url {
            url: "s3://bucket/photos/cat.GIF".into(),
        }),
    ])]);
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(
        wire["messages"][0]["content"],
        json!([
            {"text": "What is this?"},
            {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}},
            {"image": {"format": "webp", "source": {"bytes": "UklGRg=="}}},
            {"image": {"format": "gif", "source": {"s3Location": {"uri": "s3://bucket/photos/cat.GIF"}}}},
        ])
    );
    let web = ModelRequest::new(vec![Message::user(vec![image(ImageSource::Url {
        url: "https://example.com/cat.png?X-Amz-Signature=secret".into(),
    })])]);
    let why = on_wire(&web, None).unwrap_err();
    assert!(why.contains("https://example.com/cat.png"), "{why}");
    assert!(!why.contains("secret"), "{why}");
}

#[test]
fn cache_points_follow_the_system_text_or_the_tools_and_the_chosen_messages() {
    let mut request = parallel_round();
    request.prompt_cache = Some(Box::new(
        PromptCache::new().with_prefix().breakpoint(1).breakpoint(4),
    ));
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(
        wire["system"][2],
        json!({"cachePoint": {"type": "default"}})
    );
    assert_eq!(wire["toolConfig"]["tools"].as_array().unwrap().len(), 1);
    // Message 1 is the first user turn; message 4 the second result, in the last user turn.
    assert_eq!(
        wire["messages"][0]["content"][1],
        json!({"cachePoint": {"type": "default"}})
    );
    let last = wire["messages"][2]["content"].as_array().unwrap();
    assert_eq!(last[2], json!({"cachePoint": {"type": "default"}}));
    assert_eq!(last[3], json!({"text": "And tomorrow?"}));
    // Without system text, the tools carry the prefix's point; at most 4 points in all.
    let mut request = ModelRequest::new(vec![
        Message::user("1"),
        Message::assistant("2"),
        Message::user("3"),
        Message::assistant("4"),
        Message::user("5"),
    ])
    .with_tools(vec![weather_spec()]);
    let mut cache = PromptCache::new().with_prefix();
    for index in 0..5 {
        cache = cache.breakpoint(index);
    }
    request.prompt_cache = Some(Box::new(cache));
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(
        wire["toolConfig"]["tools"][1],
        json!({"cachePoint": {"type": "default"}})
    );
    let points = wire["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|turn| turn["content"].as_array().unwrap().len() == 2)
        .count();
    assert_eq!(points, 3, "{wire}");
    assert_eq!(wire["messages"][0]["content"].as_array().unwrap().len(), 1);
}

#[test]
fn an_answer_with_signed_reasoning_text_and_a_call_converts() {
    let response = answer(transcript!("bedrock/tool_use.json")).unwrap();
    let message = &response.message;
    assert_eq!(
        message.content.parts()[0],
        ContentPart::Reasoning(Box::new(Reasoning::new(THOUGHT)))
    );
    assert_eq!(message.text(), "Let me check the weather in Paris.");
    assert_eq!(message.tool_calls, [paris()]);
    assert_eq!(
        message.metadata[METADATA_KEY],
        json!([{"reasoningText": {"text": THOUGHT, "signature": SIGNATURE}}])
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage::new(412 + 1536, 96).with_cache(0, 1536)
    );
    let response = answer(transcript!("bedrock/final.json")).unwrap();
    assert_eq!(response.message.text(), "It is 18°C and sunny in Paris.");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(
        response.usage,
        Usage::new(87 + 1024, 14).with_cache(1024, 0)
    );
}

#[test]
fn reasoning_goes_back_from_the_metadata_first_and_no_other_providers() {
    let by_bedrock = answer(transcript!("bedrock/redacted.json"))
        .unwrap()
        .message;
    assert_eq!(
        by_bedrock.metadata[METADATA_KEY],
        json!([
            {"redactedContent": "RXJyb3JSZWRhY3RlZFRoaW5raW5nQmxvY2tEYXRh"},
            {"reasoningText": {"text": "Checking.", "signature": "ErUBCkYIBxgCIkB2"}},
        ])
    );
    let by_anthropic = Message::assistant(vec![
        ContentPart::Reasoning(Box::new(
            Reasoning::new("Anthropic's").signed("sig-anthropic"),
        )),
        ContentPart::RedactedReasoning {
            data: "anthropic-redacted".into(),
        },
        ContentPart::text("Hello."),
    ]);
    let mut hand_written = Message::assistant("By hand.");
    hand_written
        .metadata
        .insert(METADATA_KEY.into(), json!([{"reasoningText": 7}, "odd"]));
    let request = ModelRequest::new(vec![
        Message::user("Hi"),
        by_anthropic,
        Message::user("Weather?"),
        by_bedrock,
        Message::tool(ToolResult::ok("tooluse_r1", "18°C")),
        hand_written,
    ]);
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(wire["messages"][1]["content"], json!([{"text": "Hello."}]));
    assert_eq!(
        wire["messages"][3]["content"],
        json!([
            {"reasoningContent": {"redactedContent": "RXJyb3JSZWRhY3RlZFRoaW5raW5nQmxvY2tEYXRh"}},
            {"reasoningContent": {"reasoningText": {"text": "Checking.", "signature": "ErUBCkYIBxgCIkB2"}}},
            {"toolUse": {"toolUseId": "tooluse_r1", "name": "get_weather", "input": {"city": "Paris"}}},
        ])
    );
    assert_eq!(
        wire["messages"][5]["content"],
        json!([{"text": "By hand."}])
    );
}

#[test]
fn stop_reasons_filters_and_malformed_output() {
    let response = answer(transcript!("bedrock/guardrail.json")).unwrap();
    assert_eq!(response.stop_reason, StopReason::ContentFilter);
    assert_eq!(
        response.message.text(),
        "Sorry, the model cannot answer this question."
    );
    let response = answer(transcript!("bedrock/tool_use_cut.json")).unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    for reason in ["malformed_tool_use", "malformed_model_output"] {
        let text =
            json!({"output": {"message": {"content": [{"text": "x"}]}}, "stopReason": reason});
        let error = answer(&text.to_string()).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{reason}");
        assert!(error.to_string().contains(reason), "{error}");
    }
    // No output at all: an empty answer, not a panic; unknown blocks are skipped.
    let response = answer(r#"{"stopReason":"end_turn"}"#).unwrap();
    assert_eq!(response.message.text(), "");
    let response =
        answer(r#"{"output":{"message":{"content":[{"citationsContent":{}},{"text":"ok"}]}},"stopReason":"end_turn"}"#)
            .unwrap();
    assert_eq!(response.message.text(), "ok");
    assert_eq!(response.usage, Usage::unreported());
}

fn decode(
    text: &str,
) -> (
    Vec<Result<ModelEvent, hookchain_core::ModelError>>,
    ConverseDecoder,
) {
    let mut decoder = ConverseDecoder::new();
    let mut events = Vec::new();
    for event in parse_transcript(text) {
        let mut out = VecDeque::new();
        let step = decoder.decode(&event, &mut out);
        events.extend(out.into_iter().map(Ok));
        match step {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => {
                events.push(Err(error));
                break;
            }
        }
    }
    (events, decoder)
}

#[test]
fn a_stream_of_reasoning_text_and_a_call_assembles_as_the_plain_answer() {
    let (events, decoder) = decode(transcript!("bedrock/tool_use.events"));
    let events: Vec<ModelEvent> = events.into_iter().map(Result::unwrap).collect();
    assert!(events.contains(&ModelEvent::ReasoningDelta {
        index: 0,
        text: "The user wants the weather in Paris. ".into()
    }));
    // The signature is metadata, never a signature on the shown reasoning.
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, ModelEvent::ReasoningSignature { .. }))
    );
    let metadata = events
        .iter()
        .position(|event| matches!(event, ModelEvent::Metadata { .. }))
        .unwrap();
    let finish = events
        .iter()
        .position(|event| matches!(event, ModelEvent::Finish { .. }))
        .unwrap();
    assert!(metadata < finish);
    let streamed = decoder.finish().unwrap();
    assert_eq!(
        streamed,
        answer(transcript!("bedrock/tool_use.json")).unwrap()
    );
    let (_, decoder) = decode(transcript!("bedrock/final.events"));
    assert_eq!(
        decoder.finish().unwrap(),
        answer(transcript!("bedrock/final.json")).unwrap()
    );
}

#[test]
fn a_call_cut_by_max_tokens_is_dropped_and_an_exception_is_classified() {
    let (_, decoder) = decode(transcript!("bedrock/tool_use_cut.events"));
    let response = decoder.finish().unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert!(response.message.tool_calls.is_empty());
    assert_eq!(response.message.text(), "Let me check.");

    let (events, _) = decode(transcript!("bedrock/throttled.events"));
    let error = events.last().unwrap().as_ref().unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::RateLimited);
    assert!(
        error.to_string().contains("an error event in the stream"),
        "{error}"
    );
    for (exception, kind) in [
        ("validationException", ModelErrorKind::InvalidRequest),
        ("modelStreamErrorException", ModelErrorKind::Overloaded),
        ("internalServerException", ModelErrorKind::Overloaded),
        ("serviceUnavailableException", ModelErrorKind::Overloaded),
        ("modelTimeoutException", ModelErrorKind::Timeout),
        ("accessDeniedException", ModelErrorKind::Authentication),
    ] {
        let text = format!("event: exception:{exception}\ndata: {{\"message\":\"m\"}}\n\n");
        let (events, _) = decode(&text);
        assert_eq!(events[0].as_ref().unwrap_err().kind(), kind, "{exception}");
    }
    // "Input is too long" is the context window, in a stream as in an HTTP error.
    let text = "event: exception:validationException\ndata: {\"message\":\"Input is too long for requested model.\"}\n\n";
    let (events, _) = decode(text);
    assert_eq!(
        events[0].as_ref().unwrap_err().kind(),
        ModelErrorKind::ContextLengthExceeded
    );
}

#[test]
fn a_stream_cut_before_the_stop_is_malformed_and_one_without_usage_is_complete() {
    let text = transcript!("bedrock/tool_use.events");
    let cut = &text[..text.find("event: messageStop").unwrap()];
    let (_, decoder) = decode(cut);
    assert_eq!(
        decoder.end_of_body().unwrap_err().kind(),
        ModelErrorKind::MalformedResponse
    );
    let no_usage = &text[..text.find("event: metadata").unwrap()];
    let (_, decoder) = decode(no_usage);
    decoder.end_of_body().unwrap();
    let response = decoder.finish().unwrap();
    assert_eq!(response.usage, Usage::unreported());
    assert_eq!(response.message.tool_calls, [paris()]);
    // A stop inside an open call that is not the token limit.
    let text = "event: contentBlockStart\ndata: {\"contentBlockIndex\":0,\"start\":{\"toolUse\":{\"toolUseId\":\"t\",\"name\":\"n\"}}}\n\n\
                event: messageStop\ndata: {\"stopReason\":\"tool_use\"}\n\n";
    let (events, _) = decode(text);
    assert_eq!(
        events.last().unwrap().as_ref().unwrap_err().kind(),
        ModelErrorKind::MalformedResponse
    );
}

#[test]
fn audio_and_embedded_resources_in_a_tool_result_go_as_text_blocks() {
    let request = crate::test_requests::tool_result_with_audio_and_resources();
    let wire = on_wire(&request, None).unwrap();
    assert_eq!(
        wire["messages"][2]["content"],
        json!([{"toolResult": {"toolUseId": "call_1", "content": [
            {"text": "[audio: audio/wav, 4 bytes]"},
            {"text": "[resource: test://notes (text/plain)]\nhi"},
            {"text": "[resource: test://raw (application/octet-stream, 3 bytes)]"},
        ]}}])
    );
}
