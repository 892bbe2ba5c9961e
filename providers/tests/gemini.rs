//! The Gemini client against a loopback server replaying recorded `generateContent`
//! transcripts: requests on the wire (URL, key header, system apart, tools in Gemini's schema
//! subset), plain and streamed answers with thoughts and cached usage, thought signatures sent
//! back, every error class, filters, the token limit, and the full agent loop.

mod support;

use std::time::Duration;

use futures::StreamExt;
use hookchain::model::ModelEvent;
use hookchain::tool::{gemini_schema, gemini_schema_problems};
use hookchain::{
    Agent, Message, Model, ModelError, ModelErrorKind, ModelRequest, StopReason, Tool, ToolCall,
    ToolSpec, Usage, tool,
};
use hookchain_providers::gemini::{GeminiModel, METADATA_KEY};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{End, Reply, Server, get_weather, guard, transcript};

const KEY: &str = "AIzaSyD-test-key-0123456789abcdef";
const CALL_SIGNATURE: &str = "CiQB0e2Kb3kN1dU5vQ0yBmN2x9Lp4Rk7tFmHs8aZq1UJ0c=";
const PLAIN_PATH: &str = "/v1beta/models/gemini-2.5-flash:generateContent";
const STREAM_PATH: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

fn model(server: &Server) -> GeminiModel {
    GeminiModel::builder("gemini-2.5-flash")
        .base_url(server.url("/v1beta"))
        .api_key(KEY)
        .build()
        .expect("client builds")
}

fn streaming(server: &Server) -> GeminiModel {
    GeminiModel::builder("models/gemini-2.5-flash")
        .base_url(server.url("/v1beta"))
        .api_key(KEY)
        .streaming(true)
        .build()
        .expect("client builds")
}

fn weather_request() -> ModelRequest {
    support::weather_request()
}

fn paris() -> ToolCall {
    ToolCall::new(
        "call_1",
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

async fn fails(model: &GeminiModel) -> ModelError {
    model
        .invoke(weather_request())
        .await
        .expect_err("the call should fail")
}

/// A Gemini error body.
fn error_body(code: u16, status: &str, message: &str) -> String {
    json!({"error": {"code": code, "message": message, "status": status}}).to_string()
}

#[tokio::test]
async fn a_plain_call_sends_the_key_header_system_apart_and_tools_in_geminis_subset() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("gemini/tool_call.json"))]).await;
        let response = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.text(),
            "Let me check the weather in Paris."
        );
        assert_eq!(response.message.tool_calls, [paris()]);
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage::new(1610, 31 + 88).with_cache(1024, 0)
        );

        let received = server.received();
        let request = &received[0];
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", PLAIN_PATH)
        );
        assert_eq!(request.header("x-goog-api-key"), Some(KEY));
        assert_eq!(request.header("authorization"), None);
        let json = &request.json;
        assert_eq!(
            json["systemInstruction"],
            json!({"parts": [{"text": "You are a weather bot."}]})
        );
        assert_eq!(
            json["contents"],
            json!([{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}])
        );
        let declaration = &json["tools"][0]["functionDeclarations"][0];
        assert_eq!(declaration["name"], "get_weather");
        assert_eq!(declaration["parameters"]["type"], "OBJECT");
        assert_eq!(
            json["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY"}})
        );
        assert!(!format!("{:?}", model(&server)).contains(KEY));
    })
    .await;
}

#[tokio::test]
async fn a_streamed_call_yields_text_deltas_and_a_whole_call_and_assembles_the_same_answer() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("gemini/tool_call.sse")),
            Reply::sse(transcript("gemini/tool_call.sse")),
            Reply::json(200, transcript("gemini/tool_call.json")),
        ])
        .await;
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(server.received()[0].path, STREAM_PATH);

        let events: Vec<ModelEvent> = model(&server)
            .stream(weather_request())
            .map(|event| event.expect("no error"))
            .collect()
            .await;
        assert_eq!(server.received()[1].path, STREAM_PATH);
        let text: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, ["Let me check ", "the weather in Paris."]);
        assert!(events.contains(&ModelEvent::ToolCallEnd {
            index: 2,
            call: paris()
        }));
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
        assert_eq!(
            streamed.message.metadata[METADATA_KEY]["calls"][0]["signature"],
            CALL_SIGNATURE
        );
    })
    .await;
}

#[tokio::test]
async fn thoughts_are_reasoning_never_the_answers_text() {
    guard(async {
        let server = Server::start([Reply::sse(transcript("gemini/tool_call.sse"))]).await;
        let model = GeminiModel::builder("gemini-2.5-flash")
            .base_url(server.url("/v1beta"))
            .include_thoughts(true)
            .thinking_budget(1024)
            .streaming(true)
            .build()
            .unwrap();
        let response = model.invoke(weather_request()).await.unwrap();
        let reasoning = response.message.content.reasoning().unwrap();
        assert!(
            reasoning.contains("I will call get_weather."),
            "{reasoning}"
        );
        assert!(!response.message.text().contains("get_weather"));
        assert_eq!(
            server.received()[0].json["generationConfig"]["thinkingConfig"],
            json!({"includeThoughts": true, "thinkingBudget": 1024})
        );
    })
    .await;
}

#[tokio::test]
async fn every_error_class() {
    guard(async {
        let quota = json!({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "21s"}]}});
        let server = Server::start([
            Reply::json(429, error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"))
                .header("retry-after", "12"),
            Reply::json(429, quota.to_string()),
            Reply::json(503, error_body(503, "UNAVAILABLE", "The model is overloaded.")),
            Reply::json(500, error_body(500, "INTERNAL", "An internal error has occurred.")),
            Reply::json(400, error_body(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")),
            Reply::json(400, error_body(400, "INVALID_ARGUMENT", "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).")),
            Reply::json(400, error_body(400, "INVALID_ARGUMENT", &format!("API key not valid: {KEY}"))),
            Reply::json(403, error_body(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")),
            Reply::json(404, error_body(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta")),
            Reply::sse(transcript("gemini/unavailable.sse")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert!(error.is_retryable());
        assert_eq!(error.retry_after(), Some(Duration::from_secs(12)));
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert_eq!(error.retry_after(), Some(Duration::from_secs(21)));

        let error = fails(&model).await;
        assert_eq!((error.kind(), error.status()), (ModelErrorKind::Overloaded, Some(503)));
        assert!(error.is_retryable());
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Overloaded);

        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert_eq!(
            source,
            "INVALID_ARGUMENT: * GenerateContentRequest.contents: contents is not specified"
        );
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::ContextLengthExceeded);
        // A key echoed in an error body is redacted.
        let error = fails(&model).await;
        assert!(!format!("{error} {error:?}").contains(KEY), "{error:?}");
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Authentication);
        let error = fails(&model).await;
        assert_eq!((error.kind(), error.status()), (ModelErrorKind::InvalidRequest, Some(404)));

        // An error chunk in the middle of a stream.
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        assert!(matches!(items[0], Ok(ModelEvent::TextDelta { .. })));
        let error = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!((error.kind(), error.status()), (ModelErrorKind::Overloaded, None));
    })
    .await;
}

/// Gemini answers a wrong key with `400 INVALID_ARGUMENT`, and a key not allowed this API with
/// `403 PERMISSION_DENIED`: the `ErrorInfo` among the details says which, by its `reason`.
#[tokio::test]
async fn a_refused_key_is_authentication_whatever_its_status() {
    guard(async {
        let server = Server::start([
            Reply::json(400, transcript("gemini/api_key_invalid.json")),
            Reply::json(403, transcript("gemini/api_key_service_blocked.json")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::Authentication, Some(400))
        );
        assert!(!error.is_retryable());
        let api = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<hookchain_providers::ApiError>())
            .expect("the server's error is the source");
        assert_eq!(api.reason(), Some("API_KEY_INVALID"));
        assert_eq!(api.error_type(), Some("INVALID_ARGUMENT"));
        let error = fails(&model).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::Authentication, Some(403))
        );
    })
    .await;
}

#[tokio::test]
async fn truncated_reset_and_malformed_answers() {
    guard(async {
        let body = transcript("gemini/tool_call.sse");
        let before_the_call = body.find("functionCall").unwrap();
        let server = Server::start([
            Reply::sse(body.clone()).cut_after(before_the_call, End::Complete),
            Reply::sse(body.clone()).cut_after(before_the_call, End::Reset),
            Reply::json(200, r#"{"candidates":[{"content":{"parts":[{"text""#),
            Reply::json(200, "{}"),
        ])
        .await;
        let model = streaming(&server);
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
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

// On the paused clock: the server's stall and the timeout are virtual time.
#[tokio::test(start_paused = true)]
async fn a_slow_answer_times_out() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("gemini/final.json")).stall(Duration::from_secs(5))
        ])
        .await;
        let plain = GeminiModel::builder("gemini-2.5-flash")
            .base_url(server.url("/v1beta"))
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let error = fails(&plain).await;
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
        assert!(error.is_retryable());
    })
    .await;
}

#[tokio::test]
async fn a_safety_stop_and_a_blocked_prompt_are_filtered_answers() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("gemini/safety.json")),
            Reply::json(200, transcript("gemini/blocked.json")),
            Reply::sse(format!(
                "data: {}\n\n",
                transcript("gemini/blocked.json").replace('\n', "")
            )),
        ])
        .await;
        let safety = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(safety.stop_reason, StopReason::ContentFilter);
        assert!(!safety.stop_reason.is_answer());
        assert!(safety.message.tool_calls.is_empty());
        let blocked = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(blocked.stop_reason, StopReason::ContentFilter);
        assert_eq!(blocked.usage, Usage::new(31, 0));
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, blocked);
    })
    .await;
}

#[tokio::test]
async fn max_tokens_cuts_text_and_drops_a_cut_call_which_is_never_run() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("gemini/max_tokens.sse")),
            Reply::json(200, transcript("gemini/call_cut.json")),
            Reply::sse(transcript("gemini/call_cut.sse")),
        ])
        .await;
        let text = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(text.stop_reason, StopReason::MaxTokens);
        assert_eq!(text.message.text(), "Paris is the capital of");
        for model in [model(&server), streaming(&server)] {
            let agent = Agent::builder(model).tool(get_weather).build().unwrap();
            let output = agent.run("What is the weather in Paris?").await.unwrap();
            assert_eq!(
                output.text().as_deref(),
                Some("Let me check the weather in Paris.")
            );
        }
        assert_eq!(server.received().len(), 3, "one request per run");
    })
    .await;
}

/// The second request: the model turn with its signed `functionCall`, then a user turn whose
/// `functionResponse` answers it.
fn assert_tool_round_trip(second: &serde_json::Value) {
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3, "{second:#}");
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"],
        json!([
            {"text": "Let me check the weather in Paris."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}},
             "thoughtSignature": CALL_SIGNATURE},
        ]),
        "the thoughts are not sent back, the signature is"
    );
    assert_eq!(contents[2]["role"], "user");
    assert_eq!(
        contents[2]["parts"],
        json!([{"functionResponse": {"name": "get_weather",
            "response": {"result": "18 degrees celsius and sunny in Paris"}}}])
    );
    assert_eq!(
        second["systemInstruction"],
        json!({"parts": [{"text": "You are a weather bot."}]})
    );
}

#[tokio::test]
async fn the_agent_loop_runs_call_result_final_answer_with_the_signature_sent_back() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("gemini/tool_call.json")),
            Reply::json(200, transcript("gemini/final.json")),
            Reply::sse(transcript("gemini/tool_call.sse")),
            Reply::sse(transcript("gemini/final.sse")),
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
                Usage::new(1610 + 1702, 119 + 12).with_cache(1024, 0)
            );
        }
        let received = server.received();
        assert_eq!(received[1].path, PLAIN_PATH);
        assert_tool_round_trip(&received[1].json);
        assert_eq!(received[3].path, STREAM_PATH);
        assert_tool_round_trip(&received[3].json);
    })
    .await;
}

/// An agent whose run is streamed reads its model through `Model::stream` and assembles the
/// answer itself: the signatures come as a metadata event, and go back all the same.
#[tokio::test]
async fn a_streamed_agent_run_sends_the_signature_back_too() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("gemini/tool_call.sse")),
            Reply::sse(transcript("gemini/final.sse")),
        ])
        .await;
        let agent = Agent::builder(streaming(&server))
            .system_prompt("You are a weather bot.")
            .tool(get_weather)
            .build()
            .unwrap();
        let events: Vec<_> = agent
            .stream("What is the weather in Paris?")
            .map(Result::unwrap)
            .collect()
            .await;
        assert!(
            events.iter().any(|event| matches!(
                event,
                hookchain::agent::AgentEvent::Model(ModelEvent::Metadata { key, .. })
                    if key == METADATA_KEY
            )),
            "{events:#?}"
        );
        assert_tool_round_trip(&server.received()[1].json);
    })
    .await;
}

#[tokio::test]
async fn a_response_format_asks_for_json_with_the_schema_mapped() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("gemini/final.json"))]).await;
        let request = ModelRequest::new(vec![Message::user("Weather?")])
            .with_response_format(hookchain::model::ResponseFormat::of::<Forecast>());
        model(&server).invoke(request).await.unwrap();
        let config = &server.received()[0].json["generationConfig"];
        assert_eq!(config["responseMimeType"], "application/json");
        assert_eq!(config["responseSchema"]["type"], "OBJECT");
        assert_eq!(
            gemini_schema_problems(&config["responseSchema"]),
            Vec::<String>::new()
        );
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
    sky: Sky,
}

/// Typical tool arguments: nested structs, optional fields, lists, enums.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Sky {
    Clear,
    Cloudy,
    Rain { millimetres: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
    city: String,
    postcode: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Person {
    name: String,
    age: Option<u8>,
    addresses: Vec<Address>,
    tags: Option<Vec<String>>,
    manager: Option<Box<Person>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Class {
    Economy,
    Business,
}

/// Books a trip.
#[tool]
async fn book(
    /// Who travels.
    travellers: Vec<Person>,
    /// The class.
    class: Option<Class>,
    /// The weather hoped for.
    sky: Sky,
    /// Seats per leg.
    seats: Vec<Option<u16>>,
) -> String {
    format!("{} booked: {class:?} {sky:?} {seats:?}", travellers.len())
}

/// Registers a person.
#[tool]
async fn register(person: Person, notes: Option<String>, priority: i64) -> String {
    format!("{} {notes:?} {priority}", person.name)
}

#[test]
fn every_schema_tool_writes_for_typical_arguments_is_accepted_by_gemini_after_mapping() {
    let forecast = ToolSpec::new(
        "forecast",
        "A forecast.",
        schemars::schema_for!(Forecast).to_value(),
    );
    for spec in [book.spec(), register.spec(), get_weather.spec(), forecast] {
        let mapped = gemini_schema(&spec.parameters);
        assert_eq!(
            gemini_schema_problems(&mapped),
            Vec::<String>::new(),
            "{}: {mapped:#}",
            spec.name
        );
        assert_eq!(mapped["type"], "OBJECT", "{}", spec.name);
    }
}

/// The shared bounds hold on Gemini's two URLs (`tests/bounds.rs` tests them at length): a
/// huge answer and an endless line of a stream fail at their limits, unread past them.
#[tokio::test]
async fn a_huge_answer_and_an_endless_stream_line_fail_at_their_limits() {
    guard(async {
        const MIB: usize = 1024 * 1024;
        let server = Server::start([
            Reply::json(200, r#"{"candidates":[{"content":{"parts":[{"text":""#).filler(
                b'a',
                64 * MIB,
                r#""}]},"finishReason":"STOP"}]}"#,
            ),
            Reply::sse("data: ").filler(b'x', 64 * MIB, "\n\n"),
        ])
        .await;
        let model = GeminiModel::builder("gemini-2.5-flash")
            .base_url(server.url("/v1beta"))
            .max_answer_size(MIB)
            .build()
            .unwrap();
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
        // Announced too large, the answer is not read at all: the server could send no more
        // than the sockets' buffers hold.
        assert!(sent[0] < 16 * MIB, "the server sent {sent:?}");
        assert!(sent[1] < 24 * MIB, "the server sent {sent:?}");
    })
    .await;
}
