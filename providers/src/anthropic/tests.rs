//! Conversion and stream decoding on recorded Messages API JSON; no server.

use std::collections::VecDeque;

use hookchain_core::message::{ContentPart, ResourceLink};
use hookchain_core::model::{ModelEvent, ModelSettings, ToolChoice};
use hookchain_core::{
    Message, ModelErrorKind, ModelRequest, StopReason, ToolCall, ToolResult, ToolSpec, Usage,
};
use serde_json::json;

use super::convert::{Options, answer, messages_request};
use super::stream::EventDecoder;
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

fn options(stream: bool) -> Options<'static> {
    Options {
        model: "claude-sonnet-4-5",
        max_tokens: 4096,
        thinking_budget: None,
        parallel_tool_calls: None,
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

/// Two parallel calls answered by two results, then a user follow-up.
fn parallel_round() -> ModelRequest {
    ModelRequest::new(vec![
        Message::system("Answer in English."),
        Message::user("Weather in Paris and Rome?"),
        Message::assistant_with_tool_calls(
            "Checking both.",
            [
                ToolCall::new("toolu_1", "get_weather", json!({"city": "Paris"})),
                ToolCall::new("toolu_2", "get_weather", json!({"city": "Rome"})),
            ],
        ),
        Message::tool(ToolResult::ok("toolu_1", "18°C")),
        Message::tool(ToolResult::error("toolu_2", "service unavailable")),
        Message::user("And tomorrow?"),
    ])
    .with_system_prompt("You are a weather bot.")
    .with_tools(vec![weather_spec()])
    .with_settings(ModelSettings::new().temperature(0.2))
}

#[test]
fn a_response_format_becomes_an_instruction_and_extras_reach_the_wire() {
    let mut request = parallel_round();
    request.response_format = Some(hookchain_core::model::ResponseFormat::new(
        "weather",
        json!({"type": "object"}),
    ));
    request.settings = request.settings.clone().extra("top_k", json!(5));
    let wire = on_wire(&messages_request(&request, options(false)));
    let system = wire["system"].as_str().unwrap();
    assert!(
        system.contains("JSON schema") && system.contains("\"object\""),
        "{system}"
    );
    assert_eq!(wire["top_k"], 5);
}

#[test]
fn system_apart_tool_results_merged_into_one_user_turn() {
    let request = parallel_round();
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": "You are a weather bot.\n\nAnswer in English.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking both."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "service unavailable", "is_error": true},
                    {"type": "text", "text": "And tomorrow?"},
                ]},
            ],
            "tools": [{
                "name": "get_weather",
                "description": "The weather in a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }],
            "temperature": 0.2,
        })
    );
}

#[test]
fn tool_choice_max_tokens_thinking_and_stream() {
    let mut request = parallel_round();
    request.settings = ModelSettings::new().max_tokens(300);
    let mut opts = options(true);
    opts.thinking_budget = Some(1024);
    opts.parallel_tool_calls = Some(false);
    for (choice, expected) in [
        (
            ToolChoice::Auto,
            json!({"type": "auto", "disable_parallel_tool_use": true}),
        ),
        (
            ToolChoice::Required,
            json!({"type": "any", "disable_parallel_tool_use": true}),
        ),
        (
            ToolChoice::Tool("get_weather".into()),
            json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true}),
        ),
        (ToolChoice::None, json!({"type": "none"})),
    ] {
        request.tool_choice = choice;
        let wire = on_wire(&messages_request(&request, opts));
        assert_eq!(wire["tool_choice"], expected);
        assert_eq!(wire["max_tokens"], 300);
        assert_eq!(
            wire["thinking"],
            json!({"type": "enabled", "budget_tokens": 1024})
        );
        assert_eq!(wire["stream"], true);
    }
    request.tools.clear();
    let wire = on_wire(&messages_request(&request, opts));
    assert!(wire.get("tool_choice").is_none() && wire.get("tools").is_none());
}

#[test]
fn empty_text_is_never_sent() {
    let request = ModelRequest::new(vec![
        Message::user("hi"),
        Message::assistant(""),
        Message::assistant_with_tool_calls("", [ToolCall::new("t", "x", json!({}))]),
    ]);
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "x", "input": {}}
        ]})
    );
    assert!(wire.get("system").is_none());
}

#[test]
fn a_tool_use_answer_with_thinking_and_cache_usage_converts() {
    let wire = serde_json::from_str(transcript!("anthropic/tool_use.json")).unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(
        response.message.content.parts(),
        [
            ContentPart::signed_reasoning(
                "The user asks for the weather in Paris; I should call get_weather.",
                "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
            ),
            ContentPart::text("Let me check the weather in Paris."),
        ]
    );
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            json!({"city": "Paris", "unit": "celsius"})
        )]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage::new(48 + 1536, 91).with_cache(1536, 0)
    );

    let wire = serde_json::from_str(transcript!("anthropic/final.json")).unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(response.message.content, "It is 18°C and sunny in Paris.");
    assert_eq!(
        response.usage,
        Usage::new(212 + 1024, 14).with_cache(0, 1024)
    );
}

/// Redacted thinking, then text.
fn redacted_answer(stop_reason: &str) -> serde_json::Value {
    json!({
        "content": [{"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "a"}],
        "stop_reason": stop_reason,
    })
}

#[test]
fn stop_reasons_and_unknown_blocks() {
    for (reason, stop) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        ("pause_turn", StopReason::EndTurn),
    ] {
        let wire = serde_json::from_value(redacted_answer(reason)).unwrap();
        let response = answer(wire).unwrap();
        assert_eq!(response.stop_reason, stop, "{reason}");
        assert_eq!(response.message.text(), "a");
        assert_eq!(
            response.message.content.parts()[0],
            ContentPart::redacted_reasoning("x")
        );
    }
}

#[test]
fn an_answer_without_content_is_malformed() {
    let wire =
        serde_json::from_value(json!({"type": "message", "stop_reason": "end_turn"})).unwrap();
    let error = answer(wire).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
}

fn decode(text: &str) -> (Vec<ModelEvent>, EventDecoder, bool) {
    let mut decoder = EventDecoder::new();
    let mut out = VecDeque::new();
    let mut closed = false;
    for event in parse_transcript(text) {
        closed = decoder.decode(&event, &mut out).unwrap();
    }
    (out.into(), decoder, closed)
}

#[test]
fn a_stream_with_thinking_text_and_a_tool_call_assembles() {
    let (events, decoder, closed) = decode(transcript!("anthropic/tool_use.sse"));
    assert!(closed);
    assert!(events.contains(&ModelEvent::ReasoningSignature {
        index: 0,
        signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()
    }));
    let call = ToolCall::new(
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    );
    assert!(events.contains(&ModelEvent::ToolCallEnd {
        index: 2,
        call: call.clone()
    }));
    assert!(events.contains(&ModelEvent::Finish {
        stop_reason: StopReason::ToolUse
    }));
    let response = decoder.finish().unwrap();
    assert_eq!(
        response.message.content.parts(),
        [
            ContentPart::signed_reasoning(
                "The user wants Paris weather; call get_weather.",
                "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
            ),
            ContentPart::text("Let me check the weather in Paris."),
        ]
    );
    assert_eq!(response.message.tool_calls, [call]);
    assert_eq!(
        response.usage,
        Usage::new(48 + 256 + 1536, 89).with_cache(1536, 256)
    );
}

#[test]
fn an_error_event_is_classified() {
    let mut decoder = EventDecoder::new();
    let mut out = VecDeque::new();
    let events = parse_transcript(transcript!("anthropic/overloaded.sse"));
    let (last, before) = events.split_last().unwrap();
    for event in before {
        decoder.decode(event, &mut out).unwrap();
    }
    let error = decoder.decode(last, &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
    assert!(error.is_retryable());
}

#[test]
fn a_stream_cut_before_its_end_is_malformed() {
    let events = parse_transcript(transcript!("anthropic/tool_use.sse"));
    let delta_at = events
        .iter()
        .position(|event| event.data.contains("\"message_delta\""))
        .unwrap();
    for cut in 0..=delta_at {
        let mut decoder = EventDecoder::new();
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

/// A tool call whose arguments are cut short by the message's end.
const STOP_INSIDE_A_CALL: &str = "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\",\"input\":{}}}\n\n\
    data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n\
    data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n\
    data: {\"type\":\"message_stop\"}\n\n";

#[test]
fn a_message_stop_inside_a_tool_call_is_malformed() {
    let mut decoder = EventDecoder::new();
    let mut out = VecDeque::new();
    let events = parse_transcript(STOP_INSIDE_A_CALL);
    let (last, before) = events.split_last().unwrap();
    for event in before {
        decoder.decode(event, &mut out).unwrap();
    }
    let error = decoder.decode(last, &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    assert!(error.to_string().contains("inside tool call"), "{error}");
}

#[test]
fn thinking_goes_back_signed_before_the_tool_use_and_images_as_image_blocks() {
    let signed = ContentPart::signed_reasoning("Call the tool.", "sig-1");
    let request = ModelRequest::new(vec![
        Message::user(vec![
            ContentPart::text("Where is this?"),
            ContentPart::image_base64("image/png", "iVBORw0KGgo="),
            ContentPart::image_url("https://example.com/b.png"),
        ]),
        Message::assistant_with_tool_calls(
            vec![
                // Another provider's reasoning has no signature: Anthropic would refuse it.
                ContentPart::reasoning("unsigned"),
                signed,
                ContentPart::redacted_reasoning("opaque"),
                ContentPart::text("Looking."),
            ],
            [ToolCall::new("toolu_1", "locate", json!({}))],
        ),
        Message::tool(ToolResult::ok("toolu_1", "Lisbon")),
    ]);
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire["messages"][0]["content"],
        json!([
            {"type": "text", "text": "Where is this?"},
            {"type": "image", "source":
                {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/b.png"}},
        ])
    );
    assert_eq!(
        wire["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "Call the tool.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "locate", "input": {}},
        ])
    );
}

#[test]
fn a_rich_tool_result_goes_as_text_and_image_blocks() {
    let link = ResourceLink::new("https://example.com/q3.csv", "q3.csv").with_title("Q3 sales");
    let request = ModelRequest::new(vec![
        Message::user("Chart Q3."),
        Message::assistant_with_tool_calls("", [ToolCall::new("toolu_1", "chart", json!({}))]),
        Message::tool(ToolResult::error(
            "toolu_1",
            vec![
                ContentPart::text("Half drawn:"),
                ContentPart::text(""),
                ContentPart::image_base64("image/png", "iVBORw0KGgo="),
                ContentPart::image_url("https://example.com/q3.png"),
                ContentPart::json(json!({"q3": 1204})),
                ContentPart::from(link),
            ],
        )),
    ]);
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire["messages"][2]["content"],
        json!([{
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "Half drawn:"},
                {"type": "image", "source":
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/q3.png"}},
                {"type": "text", "text": "{\"q3\":1204}"},
                {"type": "text", "text": "Resource: Q3 sales <https://example.com/q3.csv>"},
            ],
            "is_error": true,
        }])
    );
}

#[test]
fn an_answer_with_thinking_round_trips_into_the_next_request() {
    let wire = serde_json::from_str(transcript!("anthropic/tool_use.json")).unwrap();
    let answer = answer(wire).unwrap().message;
    let request = ModelRequest::new(vec![Message::user("Weather in Paris?"), answer]);
    let wire = on_wire(&messages_request(&request, options(false)));
    let blocks = &wire["messages"][1]["content"];
    assert_eq!(blocks[0]["type"], "thinking");
    assert_eq!(
        blocks[0]["signature"],
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    );
    assert_eq!(blocks[1]["type"], "text");
    assert_eq!(blocks[2]["type"], "tool_use");
}

mod props;

/// A server that sends no usage (a proxy, a compatible server) leaves it unknown, streamed or
/// not: never 0 tokens.
#[test]
fn an_answer_without_usage_has_unknown_usage_streamed_or_not() {
    let wire = serde_json::from_value(json!({
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"
    }))
    .unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(response.usage, Usage::unreported());

    let (_, decoder, closed) = decode(
        "data: {\"type\":\"message_start\",\"message\":{}}\n\n\
         data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
         data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n\
         data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n\
         data: {\"type\":\"message_stop\"}\n\n",
    );
    assert!(closed);
    let response = decoder.finish().unwrap();
    assert_eq!(response.message.content, "hi");
    assert_eq!(response.usage, Usage::unreported());
    assert!(!response.usage.is_known());
}

#[test]
fn a_prompt_cache_puts_breakpoints_on_the_system_text_and_the_messages_last_blocks() {
    use hookchain_core::model::{CacheTtl, PromptCache};
    // Messages: 0 system, 1 user, 2 assistant (text + 2 calls), 3-4 results, 5 user.
    let cache = PromptCache::new()
        .with_prefix()
        .breakpoint(0) // the system message: no block of its own, nothing before it
        .breakpoint(2)
        .breakpoint(4)
        .breakpoint(5)
        .ttl(CacheTtl::OneHour);
    let request = parallel_round().with_prompt_cache(cache);
    let wire = on_wire(&messages_request(&request, options(false)));
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(
        wire["system"],
        json!([{
            "type": "text",
            "text": "You are a weather bot.\n\nAnswer in English.",
            "cache_control": hour,
        }])
    );
    assert!(
        wire["tools"][0].get("cache_control").is_none(),
        "the system's covers the tools"
    );
    let messages = wire["messages"].as_array().unwrap();
    // The assistant turn's last block (its second tool use), the second result, the follow-up.
    assert_eq!(messages[1]["content"][2]["cache_control"], hour);
    assert_eq!(messages[2]["content"][1]["cache_control"], hour);
    assert_eq!(messages[2]["content"][2]["cache_control"], hour);
    let marked: usize = messages
        .iter()
        .flat_map(|turn| turn["content"].as_array().unwrap())
        .filter(|block| block.get("cache_control").is_some())
        .count();
    assert_eq!(
        marked, 3,
        "4 breakpoints at most, the system's included: {wire:#}"
    );
}

#[test]
fn without_a_system_text_the_last_tool_carries_the_prefix_and_no_cache_changes_nothing() {
    use hookchain_core::model::PromptCache;
    let request = ModelRequest::new(vec![Message::user("Hi")])
        .with_tools(vec![weather_spec()])
        .with_prompt_cache(PromptCache::new().with_prefix().breakpoint(0));
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        wire["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );

    // No prompt cache: the bytes of a request are what they were.
    let plain = on_wire(&messages_request(&parallel_round(), options(false)));
    assert_eq!(
        plain["system"],
        json!("You are a weather bot.\n\nAnswer in English.")
    );
    assert!(!plain.to_string().contains("cache_control"));
}

#[test]
fn audio_and_embedded_resources_in_a_tool_result_go_as_text_blocks() {
    let request = crate::test_requests::tool_result_with_audio_and_resources();
    let wire = on_wire(&messages_request(&request, options(false)));
    assert_eq!(
        wire["messages"][2]["content"][0]["content"],
        json!([
            {"type": "text", "text": "[audio: audio/wav, 4 bytes]"},
            {"type": "text", "text": "[resource: test://notes (text/plain)]\nhi"},
            {"type": "text", "text": "[resource: test://raw (application/octet-stream, 3 bytes)]"},
        ])
    );
}
