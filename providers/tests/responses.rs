//! The Responses client against a loopback server replaying recorded `/responses`
//! transcripts: requests on the wire (bearer key, instructions, `store: false`, function tools,
//! structured output), plain and streamed answers with reasoning summaries and cached usage,
//! reasoning items sent back through the agent loop, refusals, the token limit, every error
//! class, cut streams.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use hookchain::model::{ModelEvent, ResponseFormat};
use hookchain::{
    Agent, Message, Model, ModelError, ModelErrorKind, ModelRequest, StopReason, ToolCall, Usage,
    tool,
};
use hookchain_providers::responses::{METADATA_KEY, ResponsesModel};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{End, Reply, Server, get_weather, guard, transcript};

const KEY: &str = "sk-proj-test-key-0123456789abcdef";
const PATH: &str = "/v1/responses";
const ENCRYPTED: &str = "gAAAAABoRzV1encrypted-reasoning-0123456789abcdef==";

fn builder(server: &Server) -> hookchain_providers::responses::ResponsesBuilder {
    ResponsesModel::builder("o4-mini")
        .base_url(server.url("/v1"))
        .api_key(KEY)
}

fn model(server: &Server) -> ResponsesModel {
    builder(server).build().expect("client builds")
}

fn streaming(server: &Server) -> ResponsesModel {
    builder(server)
        .streaming(true)
        .build()
        .expect("client builds")
}

fn weather_request() -> ModelRequest {
    support::weather_request()
}

fn paris() -> ToolCall {
    ToolCall::new(
        "call_Wx81",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

async fn fails(model: &ResponsesModel) -> ModelError {
    model
        .invoke(weather_request())
        .await
        .expect_err("the call should fail")
}

/// An OpenAI error body.
fn error_body(kind: &str, code: Option<&str>, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
}

#[tokio::test]
async fn a_plain_call_sends_the_bearer_key_instructions_function_tools_and_stores_nothing() {
    guard(async {
        let server =
            Server::start([Reply::json(200, transcript("responses/tool_call.json"))]).await;
        let response = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.text(),
            "Let me check the weather in Paris."
        );
        assert_eq!(response.message.tool_calls, [paris()]);
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(1610, 119).with_cache(1024, 0));
        let reasoning = response.message.content.reasoning().unwrap();
        assert!(
            reasoning.ends_with("I will call get_weather."),
            "{reasoning}"
        );
        assert_eq!(
            response.message.metadata[METADATA_KEY][0]["encrypted_content"],
            ENCRYPTED
        );

        let received = server.received();
        let request = &received[0];
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", PATH)
        );
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        let json = &request.json;
        assert_eq!(json["model"], "o4-mini");
        assert_eq!(json["instructions"], "You are a weather bot.");
        assert_eq!(
            json["input"],
            json!([{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "What is the weather in Paris?"}]}])
        );
        assert_eq!(json["store"], false);
        assert_eq!(json["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(json["tools"][0]["type"], "function");
        assert_eq!(json["tools"][0]["name"], "get_weather");
        assert_eq!(json["tools"][0]["strict"], false);
        assert_eq!(json["tool_choice"], "required");
        assert!(json.get("stream").is_none());
        assert!(!format!("{:?}", model(&server)).contains(KEY));
    })
    .await;
}

#[tokio::test]
async fn store_is_opt_in_and_a_model_that_does_not_reason_is_not_asked_for_encrypted_reasoning() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("responses/final.json")),
            Reply::json(200, transcript("responses/final.json")),
            Reply::json(200, transcript("responses/final.json")),
        ])
        .await;
        let stored = builder(&server).store(true).build().unwrap();
        stored.invoke(weather_request()).await.unwrap();
        let gpt = ResponsesModel::builder("gpt-4.1")
            .base_url(server.url("/v1"))
            .build()
            .unwrap();
        gpt.invoke(weather_request()).await.unwrap();
        let told = ResponsesModel::builder("my-reasoner")
            .base_url(server.url("/v1"))
            .reasoning(true)
            .reasoning_effort("high")
            .reasoning_summary(true)
            .parallel_tool_calls(false)
            .build()
            .unwrap();
        told.invoke(weather_request()).await.unwrap();

        let received = server.received();
        assert_eq!(received[0].json["store"], true);
        assert!(received[0].json.get("include").is_none());
        assert_eq!(received[1].json["store"], false);
        assert!(
            received[1].json.get("include").is_none(),
            "gpt-4.1 does not reason"
        );
        assert!(received[1].json.get("reasoning").is_none());
        assert_eq!(
            received[2].json["include"],
            json!(["reasoning.encrypted_content"])
        );
        assert_eq!(
            received[2].json["reasoning"],
            json!({"effort": "high", "summary": "auto"})
        );
        assert_eq!(received[2].json["parallel_tool_calls"], false);
    })
    .await;
}

#[tokio::test]
async fn a_streamed_call_yields_deltas_and_assembles_the_same_answer_reasoning_items_included() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("responses/tool_call.sse")).pieces(7),
            Reply::sse(transcript("responses/tool_call.sse")),
            Reply::json(200, transcript("responses/tool_call.json")),
        ])
        .await;
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(server.received()[0].json["stream"], true);

        let events: Vec<ModelEvent> = model(&server)
            .stream(weather_request())
            .map(|event| event.expect("no error"))
            .collect()
            .await;
        let text: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, ["Let me check ", "the weather in Paris."]);
        assert!(
            events
                .iter()
                .any(|event| matches!(event, ModelEvent::ReasoningDelta { .. }))
        );
        assert!(events.iter().any(|event| matches!(
            event,
            ModelEvent::ToolCallEnd { call, .. } if *call == paris()
        )));
        assert!(matches!(
            events.last(),
            Some(ModelEvent::Finish {
                stop_reason: StopReason::ToolUse
            })
        ));
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
        assert_eq!(streamed.message.metadata[METADATA_KEY][0]["id"], "rs_68a1");
    })
    .await;
}

/// llama.cpp's stream names its items by id, without `output_index`: its reasoning, text and
/// call are three items, and the call is one call, not two (as it was when every event was
/// taken for the first item's: the final response's later items then looked new). Its
/// reasoning is the reasoning itself (`reasoning_text`), not a summary. Recorded from
/// llama-server (see tests/llama_server.rs).
#[tokio::test]
async fn a_stream_without_output_indices_tells_its_items_apart_by_id() {
    guard(async {
        let body = transcript("llamacpp/responses_reasoning_call.sse");
        let server = Server::start([Reply::sse(body.clone()), Reply::sse(body)]).await;
        let call = ToolCall::new(
            "call_MxrJYtRBxRsFrFjtlBy56CfejSVJZr6K",
            "get_weather",
            json!({"city": "Lisbon"}),
        );
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed.message.content.reasoning().as_deref(), Some("Hm"));
        assert_eq!(streamed.message.text(), "Ok");
        assert_eq!(streamed.message.tool_calls, std::slice::from_ref(&call));
        assert_eq!(streamed.stop_reason, StopReason::ToolUse);
        assert_eq!(streamed.usage, Usage::new(590, 60));

        let events: Vec<ModelEvent> = streaming(&server)
            .stream(weather_request())
            .map(|event| event.expect("no error"))
            .collect()
            .await;
        let starts = events
            .iter()
            .filter(|event| matches!(event, ModelEvent::ToolCallStart { .. }))
            .count();
        assert_eq!(starts, 1, "{events:?}");
        assert!(events.contains(&ModelEvent::ToolCallEnd { index: 2, call }));
    })
    .await;
}

/// llama.cpp's reasoning item holds the reasoning itself (`content`), which it requires back
/// (a reasoning item without it is a 400 there): it is the answer's reasoning, and it goes back
/// as it came. Recorded from llama-server.
#[tokio::test]
async fn reasoning_text_is_read_and_sent_back_with_its_item() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("llamacpp/responses_reasoning_call.json")),
            Reply::json(200, transcript("responses/final.json")),
        ])
        .await;
        let first = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(first.message.content.reasoning().as_deref(), Some("Hm"));
        assert_eq!(first.message.text(), "Ok");
        assert_eq!(first.message.tool_calls.len(), 1);

        let call = &first.message.tool_calls[0];
        let history = vec![
            Message::user("What is the weather in Paris?"),
            first.message.clone(),
            Message::tool(hookchain::ToolResult::ok(&call.id, "sunny")),
        ];
        model(&server)
            .invoke(ModelRequest::new(history))
            .await
            .unwrap();
        let input = &server.received()[1].json["input"];
        assert_eq!(
            input[1],
            json!({"type": "reasoning", "id": "rs_yIpUCznRV51OtGAyfcWbTKpNr9s7SOSg",
                "summary": [], "encrypted_content": "",
                "content": [{"type": "reasoning_text", "text": "Hm"}]})
        );
    })
    .await;
}

/// The second request: the first answer's reasoning item (with its encrypted reasoning) before
/// its text and its call, then the call's output.
fn assert_tool_round_trip(second: &serde_json::Value) {
    let input = second["input"].as_array().unwrap();
    assert_eq!(input.len(), 5, "{second:#}");
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["id"], "rs_68a1");
    assert_eq!(input[1]["encrypted_content"], ENCRYPTED);
    assert_eq!(input[1]["summary"][1]["text"], "I will call get_weather.");
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Let me check the weather in Paris.", "annotations": []}]})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_Wx81", "name": "get_weather",
            "arguments": "{\"city\":\"Paris\",\"unit\":\"celsius\"}"})
    );
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_Wx81",
            "output": "18 degrees celsius and sunny in Paris"})
    );
    assert_eq!(second["instructions"], "You are a weather bot.");
    assert_eq!(second["store"], false);
}

#[tokio::test]
async fn the_agent_loop_runs_call_result_final_answer_with_the_reasoning_item_sent_back() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("responses/tool_call.json")),
            Reply::json(200, transcript("responses/final.json")),
            Reply::sse(transcript("responses/tool_call.sse")),
            Reply::sse(transcript("responses/final.sse")),
        ])
        .await;
        for model in [model(&server), streaming(&server)] {
            let agent = Agent::builder(model)
                .system_prompt("You are a weather bot.")
                .tool(get_weather)
                .build()
                .unwrap();
            let output = agent.run("What is the weather in Paris?").await.unwrap();
            assert_eq!(
                output.text().as_deref(),
                Some("It is 18°C and sunny in Paris.")
            );
            assert_eq!(
                output.usage,
                Usage::new(1610 + 1702, 119 + 12).with_cache(1024 + 1536, 0)
            );
        }
        let received = server.received();
        assert_tool_round_trip(&received[1].json);
        assert_eq!(received[3].json["stream"], true);
        assert_tool_round_trip(&received[3].json);
    })
    .await;
}

/// A forecast, as structured output.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Forecast {
    /// Degrees Celsius.
    temperature: f64,
    /// The sky.
    sky: String,
}

#[tokio::test]
async fn a_response_format_is_a_json_schema_text_format() {
    guard(async {
        let answer = json!({"status": "completed", "output": [{"type": "message", "content": [
            {"type": "output_text", "text": "{\"temperature\":18,\"sky\":\"sunny\"}"}]}]});
        let server = Server::start([Reply::json(200, answer.to_string())]).await;
        let request = ModelRequest::new(vec![Message::user("Weather?")])
            .with_response_format(ResponseFormat::of::<Forecast>());
        let response = model(&server).invoke(request).await.unwrap();
        let forecast: Forecast = serde_json::from_str(&response.message.text()).unwrap();
        assert_eq!(forecast.sky, "sunny");
        assert_eq!(
            response.usage,
            Usage::unreported(),
            "no usage is unknown usage"
        );
        let format = &server.received()[0].json["text"]["format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["name"], "Forecast");
        assert_eq!(format["schema"]["type"], "object");
        assert!(format["strict"].is_boolean());
    })
    .await;
}

#[tokio::test]
async fn a_refusal_is_an_answer_streamed_or_not() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("responses/refusal.json")),
            Reply::sse(transcript("responses/refusal.sse")),
        ])
        .await;
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(plain.stop_reason, StopReason::Refusal);
        assert_eq!(plain.message.text(), "I'm sorry, I can't help with that.");
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
    })
    .await;
}

static CUT_CALLS_RUN: AtomicUsize = AtomicUsize::new(0);

/// The weather in a city (counts its runs).
#[tool]
async fn counted_weather(
    /// The city.
    city: String,
) -> String {
    CUT_CALLS_RUN.fetch_add(1, Ordering::SeqCst);
    format!("sunny in {city}")
}

#[tokio::test]
async fn max_output_tokens_stops_the_answer_and_a_cut_call_never_runs() {
    guard(async {
        let cut_json =
            transcript("responses/call_cut.json").replace("get_weather", "counted_weather");
        let cut_sse =
            transcript("responses/call_cut.sse").replace("get_weather", "counted_weather");
        let server = Server::start([Reply::json(200, cut_json), Reply::sse(cut_sse)]).await;
        for model in [model(&server), streaming(&server)] {
            let agent = Agent::builder(model).tool(counted_weather).build().unwrap();
            let output = agent.run("What is the weather in Paris?").await.unwrap();
            assert_eq!(
                output.text().as_deref(),
                Some("Let me check the weather in Paris.")
            );
        }
        assert_eq!(CUT_CALLS_RUN.load(Ordering::SeqCst), 0);
        assert_eq!(server.received().len(), 2, "one request per run");
    })
    .await;
}

#[tokio::test]
async fn every_error_class() {
    guard(async {
        let server = Server::start([
            Reply::json(
                429,
                error_body(
                    "requests",
                    Some("rate_limit_exceeded"),
                    "Rate limit reached for o4-mini.",
                ),
            )
            .header("retry-after", "12"),
            Reply::json(
                429,
                error_body(
                    "insufficient_quota",
                    Some("insufficient_quota"),
                    "You exceeded your current quota.",
                ),
            ),
            Reply::json(
                500,
                error_body("server_error", None, "The server had an error."),
            ),
            Reply::json(
                503,
                error_body("server_error", None, "The engine is currently overloaded."),
            ),
            Reply::json(
                400,
                error_body(
                    "invalid_request_error",
                    Some("invalid_value"),
                    "Invalid value for 'input'.",
                ),
            ),
            Reply::json(
                400,
                error_body(
                    "invalid_request_error",
                    Some("context_length_exceeded"),
                    "Your input exceeds the context window of this model.",
                ),
            ),
            Reply::json(
                401,
                error_body(
                    "invalid_request_error",
                    Some("invalid_api_key"),
                    &format!("Incorrect API key provided: {KEY}."),
                ),
            ),
            Reply::json(
                403,
                error_body(
                    "invalid_request_error",
                    Some("unsupported_country_region_territory"),
                    "Country not supported.",
                ),
            ),
            Reply::json(
                404,
                error_body(
                    "invalid_request_error",
                    Some("model_not_found"),
                    "The model `o9` does not exist.",
                ),
            ),
            Reply::sse(transcript("responses/failed.sse")),
            Reply::sse(transcript("responses/error.sse")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert!(error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_secs(12)));
        assert_eq!(
            fails(&model).await.kind(),
            ModelErrorKind::Other,
            "no quota: not retryable"
        );
        let error = fails(&model).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::Overloaded, Some(500))
        );
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Overloaded);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert_eq!(source, "invalid_request_error: Invalid value for 'input'.");
        assert_eq!(
            fails(&model).await.kind(),
            ModelErrorKind::ContextLengthExceeded
        );
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        assert!(!format!("{error} {error:?}").contains(KEY), "{error:?}");
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Authentication);
        let error = fails(&model).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::InvalidRequest, Some(404))
        );

        // A response that fails in the middle of its stream, and an error event.
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        assert!(matches!(items[0], Ok(ModelEvent::TextDelta { .. })));
        let error = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::Overloaded, None)
        );
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let error = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
    })
    .await;
}

/// The last event of a stream that fails.
async fn stream_error(model: &ResponsesModel) -> ModelError {
    let items: Vec<_> = model.stream(weather_request()).collect().await;
    match items.into_iter().last() {
        Some(Err(error)) => error,
        other => panic!("the stream should end with an error, not {other:?}"),
    }
}

/// OpenAI's errors as it sends them: an `error` event that nests its error, a failed response
/// for a rate limit whose delay is only in its message, and a prompt its policy flagged,
/// failed in the stream or refused with a 400.
#[tokio::test]
async fn errors_are_classified_as_openai_sends_them() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("responses/error_nested.sse")),
            Reply::sse(transcript("responses/failed_rate_limit.sse")),
            Reply::sse(transcript("responses/failed_invalid_prompt.sse")),
            Reply::json(400, transcript("openai/invalid_prompt.json")),
            Reply::json(429, transcript("openai/rate_limited.json")),
            Reply::json(429, transcript("openai/rate_limited.json")).header("retry-after", "4"),
        ])
        .await;
        let model = model(&server);

        let error = stream_error(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited, "{error:?}");
        assert!(error.is_retryable());
        let api = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<hookchain_providers::ApiError>())
            .expect("the server's error is the source");
        assert_eq!(api.code(), Some("too_many_requests"));
        assert!(api.message().starts_with("Too many requests."), "{api:?}");

        let error = stream_error(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited, "{error:?}");
        assert_eq!(error.retry_after(), Some(Duration::from_millis(2600)));

        let error = stream_error(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::ContentFiltered, "{error:?}");
        assert!(!error.is_retryable());

        let error = fails(&model).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::ContentFiltered, Some(400))
        );

        // Without a `Retry-After` header, the message's delay; with one, the header's.
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert_eq!(error.retry_after(), Some(Duration::from_millis(253)));
        let error = fails(&model).await;
        assert_eq!(error.retry_after(), Some(Duration::from_secs(4)));
    })
    .await;
}

#[tokio::test]
async fn a_cut_stream_is_malformed_never_an_empty_answer() {
    guard(async {
        let body = transcript("responses/tool_call.sse");
        let before_the_end = body.find("event: response.completed").unwrap();
        // Inside the function call: its arguments streamed, the call never done.
        let inside_the_call = body
            .find("event: response.function_call_arguments.done")
            .unwrap();
        let server = Server::start([
            Reply::sse(body.clone()).cut_after(before_the_end, End::Complete),
            Reply::sse(body.clone()).cut_after(inside_the_call, End::Complete),
            Reply::sse(body.clone()).cut_after(before_the_end, End::Reset),
            Reply::json(200, r#"{"status":"completed","output":[{"type":"mess"#),
            Reply::json(200, "{}"),
        ])
        .await;
        let model = streaming(&server);
        for _ in 0..2 {
            let error = model.invoke(weather_request()).await.unwrap_err();
            assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        }
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");
        let plain = self::model(&server);
        for _ in 0..2 {
            let error = fails(&plain).await;
            assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        }
    })
    .await;
}

/// The shared bounds hold here too (`tests/bounds.rs` tests them at length): a huge answer
/// and an endless line of a stream fail at their limits, unread past them.
#[tokio::test]
async fn a_huge_answer_and_an_endless_stream_line_fail_at_their_limits() {
    guard(async {
        const MIB: usize = 1024 * 1024;
        let server = Server::start([
            Reply::json(
                200,
                r#"{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":""#,
            )
            .filler(b'a', 64 * MIB, r#""}]}]}"#),
            Reply::sse("event: response.output_text.delta\ndata: ").filler(b'x', 64 * MIB, "\n\n"),
        ])
        .await;
        let model = builder(&server).max_answer_size(MIB).build().unwrap();
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.to_string().contains("limit of 1 MiB"), "{error}");
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let [Err(error)] = &items[..] else {
            panic!("{items:?}")
        };
        assert!(
            error
                .to_string()
                .contains("line of the stream is longer than the limit of 8 MiB"),
            "{error}"
        );
        let sent = server.sent();
        assert!(sent[0] < 16 * MIB, "the server sent {sent:?}");
        assert!(sent[1] < 24 * MIB, "the server sent {sent:?}");
    })
    .await;
}
