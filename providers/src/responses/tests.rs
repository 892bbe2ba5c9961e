//! Conversion and decoding on recorded Responses JSON; no server.

use std::collections::VecDeque;

use hookchain_core::message::{Content, ContentPart, ImageSource};
use hookchain_core::model::{ModelEvent, ModelSettings, PromptCache, ResponseFormat, ToolChoice};
use hookchain_core::{
    Message, ModelErrorKind, ModelRequest, StopReason, ToolCall, ToolResult, ToolSpec, Usage,
};
use serde_json::json;

use super::METADATA_KEY;
use super::convert::{Options, responses_request};
use super::stream::{ResponseDecoder, answer};
use super::wire::Response;
use crate::http::{Decoder, parse_transcript};

mod props;

/// The JSON text a request serializes to, read back (as the server would read it).
fn on_wire(request: &impl serde::Serialize) -> serde_json::Value {
    serde_json::from_slice(&serde_json::to_vec(request).unwrap()).unwrap()
}

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

const ENCRYPTED: &str = "gAAAAABoRzV1encrypted-reasoning-0123456789abcdef==";

fn options(stream: bool) -> Options<'static> {
    Options {
        model: "o4-mini",
        parallel_tool_calls: Some(false),
        reasoning_effort: Some("low"),
        reasoning_summary: true,
        store: false,
        reasons: true,
        stream,
    }
}

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
}

fn parse(text: &str) -> Response {
    serde_json::from_str(text).unwrap()
}

fn paris() -> ToolCall {
    ToolCall::new(
        "call_Wx81",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

#[test]
fn a_round_with_reasoning_items_goes_back_in_order_with_instructions_apart() {
    let first = answer(parse(transcript!("responses/tool_call.json"))).unwrap();
    let mut user = Content::text_only("Weather in Paris? See:");
    user.push(ContentPart::Image {
        source: Box::new(ImageSource::Url {
            url: "https://example.com/sky.png".into(),
        }),
    });
    let request = ModelRequest::new(vec![
        Message::system("Answer in English."),
        Message::user(user),
        first.message,
        Message::tool(ToolResult::ok("call_Wx81", "18°C")),
    ])
    .with_system_prompt("You are a weather bot.")
    .with_tools(vec![weather_spec()])
    .with_tool_choice(ToolChoice::Tool("get_weather".into()))
    .with_prompt_cache(PromptCache::new().key("thread-7"))
    .with_settings(
        ModelSettings::new()
            .temperature(0.2)
            .max_tokens(500)
            .extra("service_tier", json!("flex")),
    );
    let wire = on_wire(&responses_request(&request, options(false)));
    assert_eq!(
        wire,
        json!({
            "model": "o4-mini",
            "instructions": "You are a weather bot.\n\nAnswer in English.",
            "input": [
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "Weather in Paris? See:"},
                    {"type": "input_image", "image_url": "https://example.com/sky.png"},
                ]},
                {"type": "reasoning", "id": "rs_68a1", "encrypted_content": ENCRYPTED, "summary": [
                    {"type": "summary_text", "text": "**Checking the weather**\n\nThe user wants Paris."},
                    {"type": "summary_text", "text": "I will call get_weather."},
                ]},
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "Let me check the weather in Paris.", "annotations": []},
                ]},
                {"type": "function_call", "call_id": "call_Wx81", "name": "get_weather",
                 "arguments": "{\"city\":\"Paris\",\"unit\":\"celsius\"}"},
                {"type": "function_call_output", "call_id": "call_Wx81", "output": "18°C"},
            ],
            "tools": [{"type": "function", "name": "get_weather", "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false}],
            "tool_choice": {"type": "function", "name": "get_weather"},
            "parallel_tool_calls": false,
            "temperature": 0.2,
            "max_output_tokens": 500,
            "reasoning": {"effort": "low", "summary": "auto"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-7",
            "service_tier": "flex",
        })
    );
}

#[test]
fn a_plain_request_stores_nothing_and_a_format_is_text_format() {
    let request = ModelRequest::new(vec![Message::user("Hi")])
        .with_response_format(ResponseFormat::new("forecast", json!({"type": "object"})));
    let mut plain = options(true);
    plain.reasoning_effort = None;
    plain.reasoning_summary = false;
    plain.reasons = false;
    let wire = on_wire(&responses_request(&request, plain));
    assert_eq!(wire["store"], false);
    assert_eq!(wire["stream"], true);
    assert!(wire.get("include").is_none() && wire.get("reasoning").is_none());
    assert!(wire.get("parallel_tool_calls").is_none(), "no tools");
    assert_eq!(
        wire["text"],
        json!({"format": {"type": "json_schema", "name": "forecast",
            "schema": {"type": "object"}, "strict": false}})
    );
    plain.store = true;
    plain.reasons = true;
    let stored = on_wire(&responses_request(&request, plain));
    assert_eq!(stored["store"], true);
    assert!(
        stored.get("include").is_none(),
        "stored reasoning needs no copy"
    );
}

#[test]
fn an_answer_with_reasoning_text_and_a_call_converts() {
    let response = answer(parse(transcript!("responses/tool_call.json"))).unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.message.tool_calls, [paris()]);
    assert_eq!(
        response.message.text(),
        "Let me check the weather in Paris."
    );
    let ContentPart::Reasoning(reasoning) = &response.message.content.parts()[0] else {
        panic!("reasoning first: {:?}", response.message.content);
    };
    assert_eq!(
        reasoning.text,
        "**Checking the weather**\n\nThe user wants Paris.\n\nI will call get_weather."
    );
    assert_eq!(
        reasoning.signature, None,
        "no other provider may take it as its own"
    );
    assert_eq!(
        response.message.metadata[METADATA_KEY][0]["encrypted_content"],
        ENCRYPTED
    );
    assert_eq!(response.usage, Usage::new(1610, 119).with_cache(1024, 0));
}

fn decode(text: &str) -> (Vec<ModelEvent>, ResponseDecoder) {
    let mut decoder = ResponseDecoder::new();
    let mut out = VecDeque::new();
    for event in parse_transcript(text) {
        if decoder.decode(&event, &mut out).unwrap() {
            break;
        }
    }
    (out.into_iter().collect(), decoder)
}

#[test]
fn every_stream_assembles_as_its_plain_answer() {
    for (sse, json) in [
        (
            transcript!("responses/tool_call.sse"),
            transcript!("responses/tool_call.json"),
        ),
        (
            transcript!("responses/final.sse"),
            transcript!("responses/final.json"),
        ),
        (
            transcript!("responses/refusal.sse"),
            transcript!("responses/refusal.json"),
        ),
        (
            transcript!("responses/call_cut.sse"),
            transcript!("responses/call_cut.json"),
        ),
    ] {
        let (events, decoder) = decode(sse);
        assert!(matches!(events.last(), Some(ModelEvent::Finish { .. })));
        assert_eq!(decoder.finish().unwrap(), answer(parse(json)).unwrap());
    }
}

#[test]
fn refusals_cut_calls_and_odd_answers() {
    let refusal = answer(parse(transcript!("responses/refusal.json"))).unwrap();
    assert_eq!(refusal.stop_reason, StopReason::Refusal);
    assert_eq!(refusal.message.text(), "I'm sorry, I can't help with that.");

    let cut = answer(parse(transcript!("responses/call_cut.json"))).unwrap();
    assert_eq!(cut.stop_reason, StopReason::MaxTokens);
    assert!(cut.message.tool_calls.is_empty(), "a cut call is never run");

    let filtered = answer(parse(
        r#"{"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []}"#,
    ))
    .unwrap();
    assert_eq!(filtered.stop_reason, StopReason::ContentFilter);
    assert_eq!(filtered.usage, Usage::unreported());

    for odd in [
        "{}",
        r#"{"status": "queued", "output": [{"type": "message", "content": []}]}"#,
        r#"{"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}]}"#,
        r#"{"output": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]}"#,
    ] {
        let error = answer(parse(odd)).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{odd}");
    }
    let failed = answer(parse(
        r#"{"status": "failed", "error": {"code": "server_error", "message": "Sorry"}}"#,
    ))
    .unwrap_err();
    assert_eq!(failed.kind(), ModelErrorKind::Overloaded);
}

#[test]
fn a_failed_stream_and_an_error_event_are_classified_and_a_cut_stream_is_malformed() {
    let mut out = VecDeque::new();
    let mut errors = Vec::new();
    for sse in [
        transcript!("responses/failed.sse"),
        transcript!("responses/error.sse"),
    ] {
        let mut decoder = ResponseDecoder::new();
        let error = parse_transcript(sse)
            .iter()
            .find_map(|event| decoder.decode(event, &mut out).err())
            .expect("an error");
        errors.push(error.kind());
    }
    assert_eq!(
        errors,
        [ModelErrorKind::Overloaded, ModelErrorKind::RateLimited]
    );

    let events = parse_transcript(transcript!("responses/tool_call.sse"));
    let mut decoder = ResponseDecoder::new();
    for event in &events[..events.len() - 1] {
        decoder.decode(event, &mut out).unwrap();
    }
    let error = decoder.end_of_body().unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    let done = crate::http::Event {
        event: "message".into(),
        data: "[DONE]".into(),
    };
    let error = decoder.decode(&done, &mut out).unwrap_err();
    assert_eq!(
        error.kind(),
        ModelErrorKind::MalformedResponse,
        "[DONE] too early"
    );
}

/// The error a recorded stream ends with.
fn stream_error(sse: &str) -> hookchain_core::ModelError {
    let mut out = VecDeque::new();
    let mut decoder = ResponseDecoder::new();
    parse_transcript(sse)
        .iter()
        .find_map(|event| decoder.decode(event, &mut out).err())
        .expect("an error")
}

#[test]
fn a_nested_error_event_is_read_as_the_error_it_nests() {
    let error = stream_error(transcript!("responses/error_nested.sse"));
    assert_eq!(error.kind(), ModelErrorKind::RateLimited, "{error:?}");
    let source = std::error::Error::source(&error).unwrap().to_string();
    assert!(source.starts_with("Too many requests."), "{source}");
    // Flat, as compatible servers send it, the same.
    let flat = stream_error(transcript!("responses/error.sse"));
    assert_eq!(flat.kind(), ModelErrorKind::RateLimited);
    // A nested error's own code decides, not words elsewhere in the event.
    for (code, kind) in [
        ("server_error", ModelErrorKind::Overloaded),
        (
            "context_length_exceeded",
            ModelErrorKind::ContextLengthExceeded,
        ),
        (
            "image_content_policy_violation",
            ModelErrorKind::ContentFiltered,
        ),
        ("invalid_image_url", ModelErrorKind::InvalidRequest),
        ("vector_store_timeout", ModelErrorKind::Timeout),
    ] {
        let event = json!({"type": "error", "sequence_number": 1, "error": {"code": code, "message": "m", "param": null}});
        let error = stream_error(&format!("event: error\ndata: {event}\n\n"));
        assert_eq!(error.kind(), kind, "{code}");
    }
}

#[test]
fn a_failed_response_gives_its_rate_limits_delay_and_its_flagged_prompt_is_filtered() {
    let error = stream_error(transcript!("responses/failed_rate_limit.sse"));
    assert_eq!(error.kind(), ModelErrorKind::RateLimited);
    assert_eq!(
        error.retry_after(),
        Some(std::time::Duration::from_millis(2600))
    );
    let error = stream_error(transcript!("responses/failed_invalid_prompt.sse"));
    assert_eq!(error.kind(), ModelErrorKind::ContentFiltered);
    assert_eq!(error.retry_after(), None);
    // Unstreamed, the same.
    let failed = answer(parse(
        r#"{"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached for o4-mini. Please try again in 1m3s."}}"#,
    ))
    .unwrap_err();
    assert_eq!(failed.kind(), ModelErrorKind::RateLimited);
    assert_eq!(
        failed.retry_after(),
        Some(std::time::Duration::from_secs(63))
    );
}

#[test]
fn a_rich_tool_result_is_one_string_its_image_a_placeholder() {
    let mut result = Content::text_only("The chart:");
    result.push(ContentPart::Image {
        source: Box::new(ImageSource::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        }),
    });
    result.push(ContentPart::Json {
        value: Box::new(json!({"q3": 1204})),
    });
    let request = ModelRequest::new(vec![Message::tool(ToolResult::ok("call_1", result))]);
    let wire = on_wire(&responses_request(&request, options(false)));
    assert_eq!(
        wire["input"],
        json!([{"type": "function_call_output", "call_id": "call_1",
            "output": "The chart:\n[image: image/png]\n{\"q3\":1204}"}])
    );
}

#[test]
fn audio_and_embedded_resources_in_a_tool_result_are_text_in_its_output() {
    let result = Content::from(vec![
        ContentPart::audio_base64("audio/wav", "UklGRg=="),
        ContentPart::resource_text("test://notes", "text/plain", "hi"),
        ContentPart::resource_blob("test://raw", "application/octet-stream", "AAAA"),
    ]);
    let request = ModelRequest::new(vec![Message::tool(ToolResult::ok("call_1", result))]);
    let wire = on_wire(&responses_request(&request, options(false)));
    assert_eq!(
        wire["input"][0]["output"],
        "[audio: audio/wav, 4 bytes]\n[resource: test://notes (text/plain)]\nhi\n\
         [resource: test://raw (application/octet-stream, 3 bytes)]"
    );
}
