//! Conversion and stream decoding, on recorded wire JSON of each server kind; no server.

use std::collections::VecDeque;

use hookchain_core::message::{ContentPart, ResourceLink};
use hookchain_core::model::{ModelEvent, ModelSettings, ToolChoice};
use hookchain_core::{
    Message, ModelErrorKind, ModelRequest, StopReason, ToolCall, ToolResult, ToolSpec, Usage,
};
use serde_json::json;

use super::convert::{Options, answer, chat_request};
use super::stream::ChunkDecoder;
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

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
}

fn options(stream: bool) -> Options<'static> {
    Options {
        model: "gpt-4o-mini",
        parallel_tool_calls: Some(false),
        stream,
    }
}

/// A conversation after one tool round: user, assistant tool call, tool result.
fn after_tool_round() -> ModelRequest {
    ModelRequest::new(vec![
        Message::user("Weather in Paris?"),
        Message::assistant_with_tool_calls(
            "",
            [ToolCall::new(
                "call_1",
                "get_weather",
                json!({"city": "Paris"}),
            )],
        ),
        Message::tool(ToolResult::ok("call_1", "18°C, sunny")),
    ])
    .with_system_prompt("Be brief.")
    .with_tools(vec![weather_spec()])
    .with_tool_choice(ToolChoice::Required)
    .with_settings(ModelSettings::new().temperature(0.5).max_tokens(200))
}

#[test]
fn the_request_carries_system_first_tools_choice_and_settings() {
    let request = after_tool_round();
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(
        wire,
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
                ]},
                {"role": "tool", "content": "18°C, sunny", "tool_call_id": "call_1"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }}],
            "tool_choice": "required",
            "parallel_tool_calls": false,
            "temperature": 0.5,
            "max_tokens": 200,
        })
    );
}

#[test]
fn tool_choice_forms_and_no_choice_without_tools() {
    let mut request = after_tool_round();
    request.tool_choice = ToolChoice::Tool("get_weather".into());
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(
        wire["tool_choice"],
        json!({"type": "function", "function": {"name": "get_weather"}})
    );
    request.tool_choice = ToolChoice::None;
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(wire["tool_choice"], "none");
    request.tool_choice = ToolChoice::Auto;
    let wire = on_wire(&chat_request(&request, options(false)));
    assert!(wire.get("tool_choice").is_none());

    request.tools.clear();
    request.tool_choice = ToolChoice::Required;
    let wire = on_wire(&chat_request(&request, options(false)));
    assert!(wire.get("tool_choice").is_none(), "{wire}");
    assert!(wire.get("tools").is_none(), "{wire}");
    assert!(wire.get("parallel_tool_calls").is_none(), "{wire}");
}

#[test]
fn a_streamed_request_asks_for_usage() {
    let request = ModelRequest::default();
    let wire = on_wire(&chat_request(&request, options(true)));
    assert_eq!(wire["stream"], true);
    assert_eq!(wire["stream_options"], json!({"include_usage": true}));
    let wire = on_wire(&chat_request(&request, options(false)));
    assert!(wire.get("stream").is_none() && wire.get("stream_options").is_none());
}

#[test]
fn structured_output_and_extras_reach_the_wire() {
    let mut request = after_tool_round();
    request.response_format = Some(hookchain_core::model::ResponseFormat::new(
        "weather",
        json!({"type": "object", "properties": {"celsius": {"type": "integer"}}}),
    ));
    request.settings = request.settings.clone().extra("seed", json!(7));
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(wire["response_format"]["type"], "json_schema");
    assert_eq!(wire["response_format"]["json_schema"]["name"], "weather");
    assert_eq!(
        wire["response_format"]["json_schema"]["schema"]["properties"]["celsius"]["type"],
        "integer"
    );
    assert_eq!(wire["seed"], 7);
}

#[test]
fn an_openai_tool_call_answer_converts() {
    let wire = serde_json::from_str(transcript!("openai/tool_call.json")).unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.message.content, "");
    assert_eq!(
        response.message.tool_calls,
        [ToolCall::new(
            "call_Vx8dS2NRyQmGaYh0NnJ9Cw2x",
            "get_weather",
            json!({"city": "Paris", "unit": "celsius"})
        )]
    );
    assert_eq!(response.usage, Usage::new(82, 18).with_cache(64, 0));
    assert_eq!(response.message.content.reasoning(), None);
}

#[test]
fn an_openai_text_answer_and_an_ollama_tool_call_convert() {
    let wire = serde_json::from_str(transcript!("openai/final.json")).unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(response.message.content, "It is 18°C and sunny in Paris.");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.usage, Usage::new(121, 11));

    let wire = serde_json::from_str(transcript!("ollama/tool_call.json")).unwrap();
    let response = answer(wire).unwrap();
    assert_eq!(response.message.tool_calls[0].id, "call_k2x9q1ab");
    assert_eq!(response.message.tool_calls[0].arguments["unit"], "celsius");
    assert_eq!(response.usage, Usage::new(173, 24));
}

/// No usage, `stop` while calling tools, arguments as an object and as empty text, no id and
/// an empty one.
fn odd_answer() -> serde_json::Value {
    json!({"choices": [{"message": {
        "content": "ok", "reasoning_content": "hmm",
        "tool_calls": [{"function": {"name": "t", "arguments": {"a": 1}}},
                       {"id": "", "function": {"name": "u", "arguments": ""}}]
    }, "finish_reason": "stop"}]})
}

#[test]
fn odd_but_valid_answers_convert() {
    let wire = serde_json::from_value(odd_answer()).unwrap();
    let answer = answer(wire).unwrap();
    assert_eq!(answer.stop_reason, StopReason::ToolUse);
    // No `usage` in the answer: unknown, not 0 tokens.
    assert_eq!(answer.usage, Usage::unreported());
    assert_eq!(answer.message.tool_calls[0].id, "call_0");
    assert_eq!(
        answer.message.tool_calls[1].id, "call_1",
        "as a stream names it"
    );
    assert_eq!(answer.message.tool_calls[0].arguments, json!({"a": 1}));
    assert_eq!(answer.message.tool_calls[1].arguments, json!({}));
    assert_eq!(answer.message.content.reasoning().as_deref(), Some("hmm"));
    assert_eq!(answer.message.text(), "ok");

    for (reason, stop) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::ContentFilter),
        ("function_call", StopReason::ToolUse),
        ("something_new", StopReason::EndTurn),
    ] {
        let wire = serde_json::from_value(
            json!({"choices": [{"message": {"content": "x"}, "finish_reason": reason}]}),
        )
        .unwrap();
        assert_eq!(super::convert::answer(wire).unwrap().stop_reason, stop);
    }
}

#[test]
fn no_choices_or_bad_arguments_are_malformed() {
    let wire = serde_json::from_value(json!({"choices": [], "usage": null})).unwrap();
    let error = answer(wire).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    assert!(error.to_string().contains("no choices"), "{error}");

    let wire = serde_json::from_value(json!({"choices": [{"message": {
        "tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{\"a\": "}}]
    }}]}))
    .unwrap();
    assert_eq!(
        answer(wire).unwrap_err().kind(),
        ModelErrorKind::MalformedResponse
    );
}

/// Decodes a whole transcript, returning the events and the assembled response.
fn decode(text: &str) -> (Vec<ModelEvent>, ChunkDecoder) {
    let mut decoder = ChunkDecoder::new();
    let mut out = VecDeque::new();
    let mut closed = false;
    for event in parse_transcript(text) {
        assert!(!closed, "an event after [DONE]");
        closed = decoder.decode(&event, &mut out).unwrap();
    }
    assert!(closed, "the transcript ends with [DONE]");
    (out.into(), decoder)
}

fn expected_call(id: &str) -> ToolCall {
    ToolCall::new(
        id,
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

#[test]
fn an_openai_stream_assembles_the_tool_call_and_usage() {
    let (events, decoder) = decode(transcript!("openai/tool_call.sse"));
    assert_eq!(
        events[0],
        ModelEvent::ToolCallStart {
            index: 2,
            id: "call_Vx8dS2NRyQmGaYh0NnJ9Cw2x".into(),
            name: "get_weather".into()
        }
    );
    assert!(events.contains(&ModelEvent::ToolCallEnd {
        index: 2,
        call: expected_call("call_Vx8dS2NRyQmGaYh0NnJ9Cw2x")
    }));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Usage(Usage::new(82, 18).with_cache(64, 0)))
    );
    let response = decoder.finish().unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(82, 18).with_cache(64, 0));
}

#[test]
fn a_vllm_stream_with_an_argumentless_first_chunk_and_reasoning() {
    let (events, decoder) = decode(transcript!("vllm/tool_call.sse"));
    assert_eq!(
        events[0],
        ModelEvent::ReasoningDelta {
            index: 0,
            text: "Need the weather tool.".into()
        }
    );
    let response = decoder.finish().unwrap();
    assert_eq!(
        response.message.content.reasoning().as_deref(),
        Some("Need the weather tool.")
    );
    assert_eq!(
        response.message.tool_calls,
        [expected_call("chatcmpl-tool-5d2f8a0c1b")]
    );
    assert_eq!(response.usage, Usage::new(201, 35));
}

#[test]
fn a_llamacpp_stream_with_token_by_token_arguments() {
    let (events, decoder) = decode(transcript!("llamacpp/tool_call.sse"));
    let fragments = events
        .iter()
        .filter(|event| matches!(event, ModelEvent::ToolCallDelta { .. }))
        .count();
    assert_eq!(fragments, 11, "one event per token");
    let response = decoder.finish().unwrap();
    assert_eq!(
        response.message.tool_calls,
        [expected_call("Qb2VfGk8wZcT1nR4sJ7yXe0pLm3dHa9u")]
    );
    assert_eq!(response.usage, Usage::new(188, 27));
}

#[test]
fn an_ollama_stream_with_a_whole_call_reasoning_and_no_usage() {
    let (_, decoder) = decode(transcript!("ollama/tool_call.sse"));
    let response = decoder.finish().unwrap();
    assert_eq!(
        response.message.content.reasoning().as_deref(),
        Some("The user wants the weather in Paris.")
    );
    assert_eq!(
        response.message.tool_calls,
        [expected_call("call_m81tz0qe")]
    );
    // Ollama sent no usage chunk: unknown (not 0 tokens), and not an error.
    assert_eq!(response.usage, Usage::unreported());
    assert!(!response.usage.is_known());
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}

#[test]
fn a_text_stream_assembles_the_text() {
    let (_, decoder) = decode(transcript!("openai/final.sse"));
    let response = decoder.finish().unwrap();
    assert_eq!(response.message.content, "It is 18°C and sunny in Paris.");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[test]
fn a_stream_cut_anywhere_before_the_finish_is_malformed() {
    let events = parse_transcript(transcript!("vllm/tool_call.sse"));
    let finish_at = events
        .iter()
        .position(|event| event.data.contains("finish_reason\":\"tool_calls"))
        .unwrap();
    for cut in 0..=finish_at {
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
        assert!(decoder.finish().is_err());
    }
}

#[test]
fn bad_chunks_and_error_chunks_fail_classified() {
    let mut decoder = ChunkDecoder::new();
    let mut out = VecDeque::new();
    let bad = parse_transcript("data: {\"choices\": [\n\n");
    let error = decoder.decode(&bad[0], &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);

    let error_chunk = parse_transcript(
        "data: {\"error\": {\"message\": \"The server is overloaded\", \"type\": \"server_error\"}}\n\n",
    );
    let error = decoder.decode(&error_chunk[0], &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded, "{error:?}");

    // `[DONE]` before the finish: truncated.
    let done = parse_transcript("data: [DONE]\n\n");
    let error = ChunkDecoder::new().decode(&done[0], &mut out).unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
}

/// "A tool call index the block numbers cannot hold is malformed": an index near `usize::MAX`
/// made the block index overflow (a panic; found by the stream property test in `props`).
#[test]
fn a_tool_call_index_out_of_range_is_malformed() {
    for index in [u64::MAX, u64::MAX - 1] {
        let chunk = format!(
            "data: {{\"choices\": [{{\"index\": 0, \"delta\": {{\"tool_calls\": [{{\"index\": {index}, \
             \"id\": \"c\", \"function\": {{\"name\": \"t\", \"arguments\": \"{{}}\"}}}}]}}}}]}}\n\n"
        );
        let mut out = VecDeque::new();
        let error = ChunkDecoder::new()
            .decode(&parse_transcript(&chunk)[0], &mut out)
            .unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{index}");
        assert!(out.is_empty(), "{out:?}");
    }
}

#[test]
fn images_go_as_parts_of_user_messages_and_reasoning_stays_home() {
    let request = ModelRequest::new(vec![
        Message::user(vec![
            ContentPart::text("Where is this?"),
            ContentPart::image_base64("image/png", "iVBORw0KGgo="),
            ContentPart::image_url("https://example.com/b.png"),
        ]),
        Message::assistant(vec![
            ContentPart::reasoning("It looks like Lisbon."),
            ContentPart::text("Lisbon."),
        ]),
    ]);
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(
        wire["messages"][0]["content"],
        json!([
            {"type": "text", "text": "Where is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
        ])
    );
    assert_eq!(wire["messages"][1]["content"], "Lisbon.");
}

#[test]
fn a_rich_tool_result_is_text_in_the_tool_message_with_a_placeholder_for_its_image() {
    let link = ResourceLink::new("https://example.com/q3.csv", "q3.csv").with_mime_type("text/csv");
    let request = ModelRequest::new(vec![
        Message::user("Chart Q3."),
        Message::assistant_with_tool_calls("", [ToolCall::new("call_1", "chart", json!({}))]),
        Message::tool(ToolResult::ok(
            "call_1",
            vec![
                ContentPart::text("The chart:"),
                ContentPart::image_base64("image/png", "iVBORw0KGgo="),
                ContentPart::json(json!({"q3": 1204, "rise": true})),
                ContentPart::from(link),
            ],
        )),
    ]);
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(
        wire["messages"][2],
        json!({
            "role": "tool",
            "content": "The chart:\n[image: image/png]\n{\"q3\":1204,\"rise\":true}\n\
                        Resource: q3.csv <https://example.com/q3.csv> (text/csv)",
            "tool_call_id": "call_1",
        })
    );
}

mod props;

#[test]
fn a_prompt_caches_key_is_sent_as_prompt_cache_key() {
    use hookchain_core::model::PromptCache;
    let request = after_tool_round().with_prompt_cache(
        PromptCache::new()
            .with_prefix()
            .breakpoint(2)
            .key("thread-7"),
    );
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(wire["prompt_cache_key"], "thread-7");
    let plain = on_wire(&chat_request(&after_tool_round(), options(false)));
    assert!(plain.get("prompt_cache_key").is_none());
}

#[test]
fn audio_and_embedded_resources_in_a_tool_result_are_text_in_the_tool_message() {
    let request = crate::test_requests::tool_result_with_audio_and_resources();
    let wire = on_wire(&chat_request(&request, options(false)));
    assert_eq!(
        wire["messages"][2]["content"],
        "[audio: audio/wav, 4 bytes]\n[resource: test://notes (text/plain)]\nhi\n\
         [resource: test://raw (application/octet-stream, 3 bytes)]"
    );
}
