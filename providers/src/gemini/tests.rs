//! Conversion and decoding on recorded Gemini JSON; no server.

use std::collections::VecDeque;

use hookchain_core::message::ContentPart;
use hookchain_core::model::{ModelEvent, ModelSettings, ResponseFormat, ToolChoice};
use hookchain_core::{
    Message, ModelErrorKind, ModelRequest, StopReason, ToolCall, ToolResult, ToolSpec, Usage,
};
use serde_json::json;

use super::METADATA_KEY;
use super::convert::generate_request;
use super::stream::{ChunkDecoder, answer};
use super::wire::ThinkingConfig;
use crate::http::{Decoder, parse_transcript};

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

const CALL_SIGNATURE: &str = "CiQB0e2Kb3kN1dU5vQ0yBmN2x9Lp4Rk7tFmHs8aZq1UJ0c=";

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}},
            "required": ["city"],
            "additionalProperties": false,
        }),
    )
}

/// Two parallel calls answered by two results, then a user follow-up.
fn parallel_round() -> ModelRequest {
    ModelRequest::new(vec![
        Message::system("Answer in English."),
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls(
            "Checking both.",
            [
                ToolCall::new("call_1", "get_weather", json!({"city": "Paris"})),
                ToolCall::new("call_2", "get_weather", json!({"city": "Rome"})),
            ],
        ),
        Message::tool(ToolResult::ok("call_1", "18°C")),
        Message::tool(ToolResult::error("call_2", "service unavailable")),
        Message::user("And tomorrow?"),
    ])
    .with_system_prompt("You are a weather bot.")
    .with_tools(vec![weather_spec()])
    .with_settings(ModelSettings::new().temperature(0.2))
}

#[test]
fn system_apart_results_in_one_user_turn_and_schemas_in_geminis_subset() {
    let wire = on_wire(&generate_request(&parallel_round(), None));
    assert_eq!(
        wire,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
                {"role": "model", "parts": [
                    {"text": "Checking both."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"result": "18°C"}}},
                    {"functionResponse": {"name": "get_weather",
                        "response": {"error": "service unavailable"}}},
                    {"text": "And tomorrow?"},
                ]},
            ],
            "systemInstruction": {"parts": [{"text": "You are a weather bot.\n\nAnswer in English."}]},
            "tools": [{"functionDeclarations": [{
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {
                        "city": {"type": "STRING"},
                        "days": {"type": "INTEGER", "nullable": true},
                    },
                    "required": ["city"],
                },
            }]}],
            "generationConfig": {"temperature": 0.2},
        })
    );
}

#[test]
fn tool_choice_settings_format_thinking_and_extras() {
    let mut request = parallel_round();
    request.settings = ModelSettings::new()
        .max_tokens(300)
        .extra(
            "safetySettings",
            json!([{"category": "HARM_CATEGORY_HARASSMENT"}]),
        )
        .extra("generationConfig", json!({"topK": 5}));
    request.settings.top_p = Some(0.5);
    request.settings.stop = vec!["END".into()];
    request.response_format = Some(ResponseFormat::new(
        "weather",
        json!({"type": "object", "properties": {"t": {"const": "x"}}}),
    ));
    let thinking = ThinkingConfig {
        include_thoughts: true,
        thinking_budget: Some(1024),
    };
    for (choice, expected) in [
        (ToolChoice::Auto, None),
        (ToolChoice::None, Some(json!({"mode": "NONE"}))),
        (ToolChoice::Required, Some(json!({"mode": "ANY"}))),
        (
            ToolChoice::Tool("get_weather".into()),
            Some(json!({"mode": "ANY", "allowedFunctionNames": ["get_weather"]})),
        ),
    ] {
        request.tool_choice = choice;
        let wire = on_wire(&generate_request(&request, Some(thinking)));
        assert_eq!(
            wire.get("toolConfig"),
            expected
                .map(|config| json!({"functionCallingConfig": config}))
                .as_ref()
        );
        assert_eq!(
            wire["generationConfig"],
            json!({
                "topP": 0.5,
                "maxOutputTokens": 300,
                "stopSequences": ["END"],
                "responseMimeType": "application/json",
                "responseSchema": {"type": "OBJECT", "properties": {"t": {"type": "STRING", "enum": ["x"]}}},
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024},
                "topK": 5,
            })
        );
        assert_eq!(
            wire["safetySettings"][0]["category"],
            "HARM_CATEGORY_HARASSMENT"
        );
        assert!(
            wire.get("generationConfig")
                .unwrap()
                .get("generationConfig")
                .is_none()
        );
    }
    request.tools = Vec::new().into();
    let wire = on_wire(&generate_request(&request, None));
    assert!(wire.get("toolConfig").is_none() && wire.get("tools").is_none());
}

#[test]
fn images_go_inline_or_by_uri_and_a_tools_json_goes_as_it_is() {
    let request = ModelRequest::new(vec![
        Message::user(vec![
            ContentPart::text("Where is this?"),
            ContentPart::text(""),
            ContentPart::image_base64("image/png", "iVBORw0KGgo="),
            ContentPart::image_url("https://example.com/b.webp?size=2"),
        ]),
        Message::assistant_with_tool_calls(
            vec![ContentPart::reasoning("think"), ContentPart::text("")],
            [ToolCall::new("call_1", "locate", json!({}))],
        ),
        Message::tool(ToolResult::ok(
            "call_1",
            vec![ContentPart::json(json!({"city": "Lisbon"}))],
        )),
        Message::assistant_with_tool_calls("", [ToolCall::new("call_2", "chart", json!({}))]),
        Message::tool(ToolResult::ok(
            "call_2",
            vec![
                ContentPart::text("Drawn:"),
                ContentPart::image_base64("image/png", "AAAA"),
            ],
        )),
    ]);
    let wire = on_wire(&generate_request(&request, None));
    let contents = wire["contents"].as_array().unwrap();
    assert_eq!(
        contents[0]["parts"],
        json!([
            {"text": "Where is this?"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            {"fileData": {"mimeType": "image/webp", "fileUri": "https://example.com/b.webp?size=2"}},
        ])
    );
    // Reasoning is not sent back, nor empty text.
    assert_eq!(
        contents[1]["parts"],
        json!([{"functionCall": {"name": "locate", "args": {}}}])
    );
    assert_eq!(
        contents[2]["parts"],
        json!([{"functionResponse": {"name": "locate", "response": {"result": {"city": "Lisbon"}}}}])
    );
    assert_eq!(
        contents[4]["parts"],
        json!([
            {"functionResponse": {"name": "chart", "response": {"result": "Drawn:"}}},
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        ])
    );
}

#[test]
fn an_answer_with_a_thought_text_and_a_signed_call_converts() {
    let response =
        answer(serde_json::from_str(transcript!("gemini/tool_call.json")).unwrap()).unwrap();
    assert_eq!(
        response.message.content.parts(),
        [
            ContentPart::reasoning(
                "**Checking the weather**\n\nThe user asks for Paris; I will call get_weather."
            ),
            ContentPart::text("Let me check the weather in Paris."),
        ]
    );
    // The thought is never the answer's text.
    assert_eq!(
        response.message.text(),
        "Let me check the weather in Paris."
    );
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris", "unit": "celsius"})
        )]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage::new(1610, 31 + 88).with_cache(1024, 0)
    );
    assert_eq!(
        response.message.metadata[METADATA_KEY],
        json!({"calls": [{"position": 0, "id": "call_1", "name": "get_weather", "signature": CALL_SIGNATURE}]})
    );
}

#[test]
fn signatures_go_back_on_their_parts_even_after_the_agent_renamed_the_call() {
    let mut first = answer(serde_json::from_str(transcript!("gemini/tool_call.json")).unwrap())
        .unwrap()
        .message;
    let last = answer(serde_json::from_str(transcript!("gemini/final.json")).unwrap())
        .unwrap()
        .message;
    // The agent renames a call whose id the history has already.
    first.tool_calls[0].id = "call_1_2".into();
    let request = ModelRequest::new(vec![
        Message::user("Weather in Paris?"),
        first,
        Message::tool(ToolResult::ok("call_1_2", "18")),
        last,
        Message::user("Thanks"),
    ]);
    let wire = on_wire(&generate_request(&request, None));
    assert_eq!(
        wire["contents"][1]["parts"],
        json!([
            {"text": "Let me check the weather in Paris."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}},
             "thoughtSignature": CALL_SIGNATURE},
        ])
    );
    assert_eq!(
        wire["contents"][3]["parts"],
        json!([{"text": "It is 18°C and sunny in Paris.",
                "thoughtSignature": "CikB0e2Kb6Wf3b0sR9Qz5vYtN1mLxP2Qy4Kd8sJ7rT0aW1c="}])
    );
}

#[test]
fn finish_reasons_filters_and_a_blocked_prompt() {
    for (reason, stop) in [
        ("STOP", StopReason::EndTurn),
        ("MAX_TOKENS", StopReason::MaxTokens),
        ("SAFETY", StopReason::ContentFilter),
        ("RECITATION", StopReason::ContentFilter),
        ("BLOCKLIST", StopReason::ContentFilter),
        ("PROHIBITED_CONTENT", StopReason::ContentFilter),
        ("SPII", StopReason::ContentFilter),
        ("OTHER", StopReason::EndTurn),
        ("A_REASON_ADDED_LATER", StopReason::EndTurn),
    ] {
        let wire = json!({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": reason}]});
        let response = answer(serde_json::from_value(wire).unwrap()).unwrap();
        assert_eq!(response.stop_reason, stop, "{reason}");
        assert_eq!(response.usage, Usage::unreported());
    }
    let response =
        answer(serde_json::from_str(transcript!("gemini/safety.json")).unwrap()).unwrap();
    assert_eq!(response.stop_reason, StopReason::ContentFilter);
    assert!(response.message.content.is_empty());
    let response =
        answer(serde_json::from_str(transcript!("gemini/blocked.json")).unwrap()).unwrap();
    assert_eq!(response.stop_reason, StopReason::ContentFilter);
    assert_eq!(response.usage, Usage::new(31, 0));
    for reason in ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"] {
        let wire = json!({"candidates": [{"content": {"parts": []}, "finishReason": reason}]});
        let error = answer(serde_json::from_value(wire).unwrap()).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        assert!(error.to_string().contains(reason), "{error}");
    }
}

#[test]
fn odd_answers_are_malformed_or_lenient() {
    let error = answer(serde_json::from_value(json!({"modelVersion": "x"})).unwrap()).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    let wire = json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]});
    let error = answer(serde_json::from_value(wire).unwrap()).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    // No finish reason in a whole answer (a lenient server): it finished.
    let wire = json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"}}]}}]});
    let response = answer(serde_json::from_value(wire).unwrap()).unwrap();
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new("call_1", "f", json!({}))]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    let wire = json!({"candidates": [{"content": {"parts": [{"functionCall": {"id": "fc-9", "name": "f", "args": {}}}]}, "finishReason": "STOP"}]});
    let response = answer(serde_json::from_value(wire).unwrap()).unwrap();
    assert_eq!(response.message.tool_calls[0].id, "fc-9");
}

#[test]
fn a_call_cut_by_max_tokens_is_dropped_streamed_or_not() {
    let plain = answer(serde_json::from_str(transcript!("gemini/call_cut.json")).unwrap()).unwrap();
    assert_eq!(plain.stop_reason, StopReason::MaxTokens);
    assert!(plain.message.tool_calls.is_empty());
    assert_eq!(plain.message.text(), "Let me check the weather in Paris.");
    let (_, decoder) = decode(transcript!("gemini/call_cut.sse"));
    let streamed = decoder.finish().unwrap();
    assert_eq!(streamed, plain);
}

fn decode(text: &str) -> (Vec<ModelEvent>, ChunkDecoder) {
    let mut decoder = ChunkDecoder::new();
    let mut out = VecDeque::new();
    for event in parse_transcript(text) {
        assert!(!decoder.decode(&event, &mut out).unwrap());
    }
    decoder.end_of_body().unwrap();
    (out.into(), decoder)
}

#[test]
fn a_stream_of_thoughts_text_and_a_whole_call_assembles_as_the_plain_answer() {
    let (events, decoder) = decode(transcript!("gemini/tool_call.sse"));
    let call = ToolCall::new(
        "call_1",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    );
    assert_eq!(
        events
            .iter()
            .filter(|event| matches!(event, ModelEvent::ReasoningDelta { index: 0, .. }))
            .count(),
        2
    );
    assert!(events.contains(&ModelEvent::TextDelta {
        index: 1,
        text: "Let me check ".into()
    }));
    assert!(events.contains(&ModelEvent::ToolCallStart {
        index: 2,
        id: "call_1".into(),
        name: "get_weather".into()
    }));
    assert!(events.contains(&ModelEvent::ToolCallEnd { index: 2, call }));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finish {
            stop_reason: StopReason::ToolUse
        })
    );
    let streamed = decoder.finish().unwrap();
    let plain =
        answer(serde_json::from_str(transcript!("gemini/tool_call.json")).unwrap()).unwrap();
    assert_eq!(streamed, plain);

    let (_, decoder) = decode(transcript!("gemini/final.sse"));
    let streamed = decoder.finish().unwrap();
    let plain = answer(serde_json::from_str(transcript!("gemini/final.json")).unwrap()).unwrap();
    assert_eq!(streamed, plain);
}

#[test]
fn an_error_chunk_is_classified_and_a_cut_stream_is_malformed() {
    let events = parse_transcript(transcript!("gemini/unavailable.sse"));
    let mut decoder = ChunkDecoder::new();
    let mut out = VecDeque::new();
    decoder.decode(&events[0], &mut out).unwrap();
    let error = decoder.decode(&events[1], &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
    assert!(error.is_retryable());

    let events = parse_transcript(transcript!("gemini/tool_call.sse"));
    for cut in 0..events.len() {
        let mut decoder = ChunkDecoder::new();
        let mut out = VecDeque::new();
        for event in &events[..cut] {
            decoder.decode(event, &mut out).unwrap();
        }
        let error = decoder.end_of_body().unwrap_err();
        assert_eq!(
            error.kind(),
            ModelErrorKind::MalformedResponse,
            "cut at {cut}"
        );
    }
}

#[test]
fn max_tokens_mid_text_keeps_the_text() {
    let (_, decoder) = decode(transcript!("gemini/max_tokens.sse"));
    let response = decoder.finish().unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(response.message.text(), "Paris is the capital of");
    assert_eq!(response.usage, Usage::new(8, 5));
}

mod props;

#[test]
fn audio_and_embedded_resources_in_a_tool_result_are_its_text() {
    let request = crate::test_requests::tool_result_with_audio_and_resources();
    let wire = on_wire(&generate_request(&request, None));
    assert_eq!(
        wire["contents"][2]["parts"],
        json!([{"functionResponse": {"name": "record", "response": {"result":
            "[audio: audio/wav, 4 bytes]\n[resource: test://notes (text/plain)]\nhi\n\
             [resource: test://raw (application/octet-stream, 3 bytes)]"}}}])
    );
}
