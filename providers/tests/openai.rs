//! The OpenAI-compatible client against a loopback server replaying recorded transcripts:
//! requests on the wire, plain and streamed answers of each server kind, every error class, and
//! the full agent loop.

mod support;

use std::convert::Infallible;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use hookchain::model::{ModelEvent, ModelSettings, ToolChoice};
use hookchain::{
    Agent, FnTool, Model, ModelError, ModelErrorKind, ModelRequest, StopReason, ToolCall, Usage,
};
use hookchain_providers::openai::OpenAiModel;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{End, Reply, Server, guard, refused_url, transcript};

const KEY: &str = "sk-test-0123456789abcdef";

fn model(server: &Server) -> OpenAiModel {
    OpenAiModel::builder("gpt-4o-mini")
        .base_url(server.url("/v1"))
        .api_key(KEY)
        .build()
        .expect("client builds")
}

fn streaming(server: &Server) -> OpenAiModel {
    OpenAiModel::builder("gpt-4o-mini")
        .base_url(server.url("/v1"))
        .streaming(true)
        .build()
        .expect("client builds")
}

fn weather_request() -> ModelRequest {
    support::weather_request().with_tool_choice(ToolChoice::Tool("get_weather".into()))
}

fn paris(id: &str) -> ToolCall {
    ToolCall::new(
        id,
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

async fn fails(model: &OpenAiModel) -> ModelError {
    model
        .invoke(weather_request())
        .await
        .expect_err("the call should fail")
}

#[tokio::test]
async fn a_plain_call_sends_tools_choice_and_auth_and_reads_the_tool_call() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("openai/tool_call.json"))]).await;
        let model = OpenAiModel::builder("gpt-4o-mini")
            .base_url(server.url("/v1/"))
            .api_key(KEY)
            .header("x-team", "weather")
            .parallel_tool_calls(true)
            .build()
            .unwrap();
        let response = model.invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.tool_calls,
            [paris("call_Vx8dS2NRyQmGaYh0NnJ9Cw2x")]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(82, 18).with_cache(64, 0));

        let received = server.received();
        assert_eq!(received.len(), 1);
        let request = &received[0];
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(request.header("x-team"), Some("weather"));
        assert_eq!(request.header("content-type"), Some("application/json"));
        let json = &request.json;
        assert_eq!(json["model"], "gpt-4o-mini");
        assert_eq!(
            json["messages"][0],
            json!({"role": "system", "content": "You are a weather bot."})
        );
        assert_eq!(
            json["messages"][1],
            json!({"role": "user", "content": "What is the weather in Paris?"})
        );
        assert_eq!(json["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(
            json["tool_choice"],
            json!({"type": "function", "function": {"name": "get_weather"}})
        );
        assert_eq!(json["parallel_tool_calls"], true);
        assert!(json.get("stream").is_none());
    })
    .await;
}

#[tokio::test]
async fn without_an_api_key_no_authorization_is_sent() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("openai/final.json"))]).await;
        let model = OpenAiModel::builder("llama3.2")
            .base_url(server.url("/v1"))
            .build()
            .unwrap();
        let response = model.invoke(weather_request()).await.unwrap();
        assert_eq!(response.message.content, "It is 18°C and sunny in Paris.");
        assert_eq!(server.received()[0].header("authorization"), None);
    })
    .await;
}

#[tokio::test]
async fn streamed_calls_of_every_server_kind_assemble_the_same_tool_call() {
    guard(async {
        for (path, id, usage) in [
            (
                "openai/tool_call.sse",
                "call_Vx8dS2NRyQmGaYh0NnJ9Cw2x",
                Usage::new(82, 18).with_cache(64, 0),
            ),
            (
                "vllm/tool_call.sse",
                "chatcmpl-tool-5d2f8a0c1b",
                Usage::new(201, 35),
            ),
            (
                "llamacpp/tool_call.sse",
                "Qb2VfGk8wZcT1nR4sJ7yXe0pLm3dHa9u",
                Usage::new(188, 27),
            ),
            // Ollama sends no usage: unknown, not 0 tokens.
            ("ollama/tool_call.sse", "call_m81tz0qe", Usage::unreported()),
        ] {
            let server = Server::start([Reply::sse(transcript(path))]).await;
            let mut request = weather_request();
            request.settings = ModelSettings::new().temperature(0.2);
            let response = streaming(&server).invoke(request).await.unwrap();
            assert_eq!(response.message.tool_calls, [paris(id)], "{path}");
            assert_eq!(response.stop_reason, StopReason::ToolUse, "{path}");
            assert_eq!(response.usage, usage, "{path}");
            let sent = &server.received()[0].json;
            assert_eq!(sent["stream"], true, "{path}");
            assert_eq!(
                sent["stream_options"],
                json!({"include_usage": true}),
                "{path}"
            );
            // Sent as written, not widened from f32 (0.20000000298023224).
            assert_eq!(sent["temperature"], json!(0.2), "{path}");
        }
    })
    .await;
}

/// Reasoning, text, then a call, in one streamed answer: llama.cpp's (`reasoning_content`
/// deltas), recorded from llama-server (see tests/llama_server.rs); its first call delta holds
/// the name and the arguments' first piece.
#[tokio::test]
async fn a_streamed_answer_of_reasoning_text_then_a_call_keeps_all_three() {
    guard(async {
        let server = Server::start([Reply::sse(transcript(
            "llamacpp/tool_call_after_reasoning.sse",
        ))])
        .await;
        let response = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(response.message.content.reasoning().as_deref(), Some("Hm"));
        assert_eq!(response.message.text(), "Ok");
        assert_eq!(
            response.message.tool_calls,
            [ToolCall::new(
                "ZfTjqVmvbdbXai0gP8T5ERnt3S8pepPD",
                "get_weather",
                json!({"city": "Lisbon"})
            )]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(590, 60).with_cache(589, 0));
    })
    .await;
}

#[tokio::test]
async fn stream_yields_text_deltas_then_finish_and_usage() {
    guard(async {
        let server = Server::start([Reply::sse(transcript("openai/final.sse"))]).await;
        let events: Vec<ModelEvent> = model(&server)
            .stream(weather_request())
            .map(|event| event.expect("no error"))
            .collect()
            .await;
        let text: String = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "It is 18°C and sunny in Paris.");
        assert!(events.contains(&ModelEvent::Finish {
            stop_reason: StopReason::EndTurn
        }));
        assert_eq!(events.last(), Some(&ModelEvent::Usage(Usage::new(121, 11))));
    })
    .await;
}

#[tokio::test]
async fn rate_limited_with_retry_after_in_seconds_or_as_a_date() {
    guard(async {
        let body = r#"{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(61));
        let server = Server::start([
            Reply::json(429, body).header("retry-after", "3"),
            Reply::json(429, body).header("retry-after", &in_a_minute),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert!(error.is_retryable());
        assert_eq!(error.status(), Some(429));
        assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert!(source.contains("Rate limit reached"), "{source}");

        let error = fails(&model).await;
        let wait = error.retry_after().expect("a wait from the date");
        assert!(wait > Duration::from_secs(50) && wait <= Duration::from_secs(61), "{wait:?}");
    })
    .await;
}

/// OpenAI states the wait only in the message of some 429s (and of its stream errors): "Please
/// try again in 253ms." A `Retry-After` header, where there is one, says it instead.
#[tokio::test]
async fn without_a_retry_after_header_the_wait_is_the_messages() {
    guard(async {
        let stream_error = json!({"error": {"message": "Rate limit reached for gpt-4o-mini on tokens per day (TPD). Please try again in 1m3s.", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}});
        let server = Server::start([
            Reply::json(429, transcript("openai/rate_limited.json")),
            Reply::json(429, transcript("openai/rate_limited.json")).header("retry-after", "3"),
            Reply::sse(format!("data: {stream_error}\n\n")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!((error.kind(), error.status()), (ModelErrorKind::RateLimited, Some(429)));
        assert_eq!(error.retry_after(), Some(Duration::from_millis(253)));
        let error = fails(&model).await;
        assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));

        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let Some(Err(error)) = items.last() else { panic!("{items:?}") };
        assert_eq!((error.kind(), error.status()), (ModelErrorKind::RateLimited, None));
        assert_eq!(error.retry_after(), Some(Duration::from_secs(63)));
    })
    .await;
}

#[tokio::test]
async fn server_errors_are_overloaded_and_retryable() {
    guard(async {
        let server = Server::start([
            Reply::json(500, r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#),
            Reply::json(503, "<html><body>503 Service Unavailable</body></html>"),
            Reply::json(502, ""),
        ])
        .await;
        let model = model(&server);
        for status in [500, 503, 502] {
            let error = fails(&model).await;
            assert_eq!(error.kind(), ModelErrorKind::Overloaded, "HTTP {status}");
            assert_eq!(error.status(), Some(status));
            assert!(error.is_retryable());
        }
    })
    .await;
}

#[tokio::test]
async fn bad_credentials_are_authentication_and_the_key_is_never_shown() {
    guard(async {
        let body = format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#);
        let server = Server::start([Reply::json(401, body)]).await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        assert!(!error.is_retryable());
        let mut chain = format!("{error} {error:?}");
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(" {cause} {cause:?}"));
            source = cause.source();
        }
        assert!(chain.contains("Incorrect API key provided"), "{chain}");
        assert!(!chain.contains(KEY), "{chain}");
        assert!(!format!("{model:?}").contains(KEY));
    })
    .await;
}

#[tokio::test]
async fn a_prompt_too_long_is_context_length_exceeded() {
    guard(async {
        let server = Server::start([
            Reply::json(400, r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#),
            Reply::json(400, r#"{"error":{"message":"Invalid value for 'tool_choice'.","type":"invalid_request_error","param":"tool_choice","code":null}}"#),
        ])
        .await;
        let model = model(&server);
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::ContextLengthExceeded);
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::InvalidRequest);
    })
    .await;
}

/// A prompt OpenAI's usage policy flagged is a 400 `invalid_prompt`: filtered content, not an
/// invalid request (and not retried either way).
#[tokio::test]
async fn a_flagged_prompt_is_content_filtered() {
    guard(async {
        let server =
            Server::start([Reply::json(400, transcript("openai/invalid_prompt.json"))]).await;
        let error = fails(&model(&server)).await;
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::ContentFiltered, Some(400))
        );
        assert!(!error.is_retryable());
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert!(
            source.contains("flagged as potentially violating"),
            "{source}"
        );
    })
    .await;
}

#[tokio::test]
async fn undecodable_or_empty_answers_are_malformed() {
    guard(async {
        let server = Server::start([
            Reply::json(200, r#"{"choices": [{"message": {"content": "cut"#),
            Reply::json(200, r#"{"id":"x","object":"chat.completion","choices":[]}"#),
            Reply::sse("data: {not json}\n\n"),
        ])
        .await;
        let model = model(&server);
        assert_eq!(
            fails(&model).await.kind(),
            ModelErrorKind::MalformedResponse
        );
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        assert!(error.to_string().contains("no choices"), "{error}");
        let error = streaming(&server)
            .invoke(weather_request())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    })
    .await;
}

// On the paused clock: the server's stall and the timeouts are virtual time.
#[tokio::test(start_paused = true)]
async fn a_slow_server_is_a_timeout() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("openai/final.json")).stall(Duration::from_secs(5))
        ])
        .await;
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
        assert!(error.is_retryable());
    })
    .await;
}

// On the paused clock: the server's stall and the timeouts are virtual time.
#[tokio::test(start_paused = true)]
async fn a_server_gone_silent_is_a_timeout_never_a_hang() {
    guard(async {
        let text = transcript("openai/final.sse");
        let in_text = text.find("sunny").unwrap();
        let server = Server::start([
            Reply::json(200, transcript("openai/final.json")).stall(Duration::from_secs(5)),
            Reply::sse(text).pause_after(in_text, Duration::from_secs(5)),
        ])
        .await;
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .read_timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        // Silent before the answer starts.
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
        // Silent in the middle of a stream: the events so far arrive, then the timeout.
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let (last, before) = items.split_last().unwrap();
        assert!(!before.is_empty() && before.iter().all(Result::is_ok));
        let error = last.as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
    })
    .await;
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_error() {
    guard(async {
        let model = OpenAiModel::builder("m")
            .base_url(refused_url().await)
            .connect_timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");
        assert!(error.is_retryable());
    })
    .await;
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_a_connection_error() {
    guard(async {
        let body = transcript("openai/tool_call.sse");
        let server = Server::start([
            Reply::sse(body.clone()).cut_after(body.len() / 2, End::Reset),
            Reply::json(200, transcript("openai/final.json")).cut_after(100, End::Reset),
        ])
        .await;
        let error = streaming(&server)
            .invoke(weather_request())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");
        let error = fails(&model(&server)).await;
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");
    })
    .await;
}

#[tokio::test]
async fn a_truncated_stream_is_malformed_never_a_partial_answer() {
    guard(async {
        let text = transcript("openai/final.sse");
        let calls = transcript("llamacpp/tool_call.sse");
        // Cut cleanly: in the text, and in the middle of the tool call's arguments.
        let in_text = text.find("sunny").unwrap();
        let in_args = calls.find("elsius").unwrap();
        let server = Server::start([
            Reply::sse(text).cut_after(in_text, End::Complete),
            Reply::sse(calls).cut_after(in_args, End::Complete),
        ])
        .await;
        let model = streaming(&server);
        for what in ["text", "tool call"] {
            let error = model.invoke(weather_request()).await.unwrap_err();
            assert_eq!(
                error.kind(),
                ModelErrorKind::MalformedResponse,
                "{what}: {error:?}"
            );
            assert!(error.to_string().contains("truncated"), "{what}: {error}");
        }
    })
    .await;
}

#[tokio::test]
async fn the_stream_ends_with_the_error_of_a_truncated_answer() {
    guard(async {
        let text = transcript("openai/final.sse");
        let cut = text.find("sunny").unwrap();
        let server = Server::start([Reply::sse(text).cut_after(cut, End::Complete)]).await;
        let items: Vec<_> = model(&server).stream(weather_request()).collect().await;
        let (last, before) = items.split_last().unwrap();
        assert!(before.iter().all(Result::is_ok));
        let error = last.as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    })
    .await;
}

/// Arguments of the weather tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city.
    city: String,
    /// `celsius` or `fahrenheit`.
    unit: String,
}

fn weather_tool() -> impl hookchain::Tool {
    FnTool::new(
        "get_weather",
        "The weather in a city.",
        |args: WeatherArgs| async move {
            Ok::<_, Infallible>(format!(
                "18 degrees {} and sunny in {}",
                args.unit, args.city
            ))
        },
    )
}

/// The second request carries the assistant's tool call, then its result, right after it.
fn assert_tool_round_trip(second: &serde_json::Value, id: &str) {
    let messages = second["messages"].as_array().unwrap();
    let at = messages
        .iter()
        .position(|message| message["role"] == "assistant")
        .expect("the assistant's tool call is in the history");
    assert_eq!(messages[at]["tool_calls"][0]["id"], id);
    assert_eq!(
        messages[at]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    let arguments: serde_json::Value = serde_json::from_str(
        messages[at]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(arguments, json!({"city": "Paris", "unit": "celsius"}));
    assert_eq!(messages[at + 1]["role"], "tool");
    assert_eq!(messages[at + 1]["tool_call_id"], id);
    assert_eq!(
        messages[at + 1]["content"],
        "18 degrees celsius and sunny in Paris"
    );
}

#[tokio::test]
async fn the_agent_loop_runs_tool_call_tool_result_final_answer() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("openai/tool_call.json")),
            Reply::json(200, transcript("openai/final.json")),
        ])
        .await;
        let agent = Agent::builder(model(&server))
            .tool(weather_tool())
            .build()
            .unwrap();
        let output = agent.run("What is the weather in Paris?").await.unwrap();
        assert_eq!(
            output.text().as_deref(),
            Some("It is 18°C and sunny in Paris.")
        );
        assert_eq!(
            output.usage,
            Usage::new(82 + 121, 18 + 11).with_cache(64, 0)
        );

        let received = server.received();
        assert_eq!(received.len(), 2);
        assert_eq!(
            received[0].json["tools"][0]["function"]["name"],
            "get_weather"
        );
        assert_tool_round_trip(&received[1].json, "call_Vx8dS2NRyQmGaYh0NnJ9Cw2x");
    })
    .await;
}

#[tokio::test]
async fn the_agent_loop_runs_on_a_streaming_model() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("vllm/tool_call.sse")),
            Reply::sse(transcript("openai/final.sse")),
        ])
        .await;
        let agent = Agent::builder(streaming(&server))
            .tool(weather_tool())
            .build()
            .unwrap();
        let output = agent.run("What is the weather in Paris?").await.unwrap();
        assert_eq!(
            output.text().as_deref(),
            Some("It is 18°C and sunny in Paris.")
        );
        assert_tool_round_trip(&server.received()[1].json, "chatcmpl-tool-5d2f8a0c1b");
    })
    .await;
}

#[tokio::test]
async fn agent_stream_yields_the_servers_deltas_as_they_come() {
    use hookchain::AgentEvent;
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("vllm/tool_call.sse")),
            Reply::sse(transcript("openai/final.sse")),
        ])
        .await;
        let agent = Agent::builder(model(&server))
            .tool(weather_tool())
            .build()
            .unwrap();
        let items: Vec<_> = agent
            .stream("What is the weather in Paris?")
            .collect()
            .await;
        let events: Vec<AgentEvent> = items.into_iter().map(|item| item.unwrap()).collect();
        // The model's own `stream` is used: the answer arrives in the server's pieces.
        let deltas: Vec<&str> = events.iter().filter_map(AgentEvent::text_delta).collect();
        assert!(deltas.len() > 1, "{deltas:?}");
        assert_eq!(deltas.concat(), "It is 18°C and sunny in Paris.");
        assert!(events.iter().any(|event| matches!(
            event,
            AgentEvent::ToolCallStarted(call) if call.name == "get_weather"
        )));
        let Some(AgentEvent::Output(output)) = events.last() else {
            panic!("the last event is the output");
        };
        assert_eq!(
            output.text().as_deref(),
            Some("It is 18°C and sunny in Paris.")
        );
        // Both requests asked the server to stream.
        for request in server.received() {
            assert_eq!(request.json["stream"], json!(true));
        }
    })
    .await;
}

#[tokio::test]
async fn a_refusal_is_the_same_answer_streamed_or_not() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("openai/refusal.json")),
            Reply::sse(transcript("openai/refusal.sse")),
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

#[tokio::test]
async fn a_filtered_answer_is_the_same_answer_streamed_or_not() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("openai/content_filter.json")),
            Reply::sse(transcript("openai/content_filter.sse")),
        ])
        .await;
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(plain.stop_reason, StopReason::ContentFilter);
        assert_eq!(plain.message.text(), "Here is how to");
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
    })
    .await;
}

#[tokio::test]
async fn a_tool_call_cut_by_max_tokens_is_dropped_streamed_or_not_and_never_run() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("llamacpp/tool_call_cut.json")),
            Reply::sse(transcript("llamacpp/tool_call_cut.sse")),
        ])
        .await;
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(plain.stop_reason, StopReason::MaxTokens);
        assert!(plain.message.tool_calls.is_empty(), "{plain:?}");
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
        // In a run, the cut call is not run: the run ends with the model's answer.
        let server = Server::start([
            Reply::json(200, transcript("llamacpp/tool_call_cut.json")),
            Reply::sse(transcript("llamacpp/tool_call_cut.sse")),
        ])
        .await;
        for model in [model(&server), streaming(&server)] {
            let agent = Agent::builder(model).tool(weather_tool()).build().unwrap();
            agent.run("What is the weather in Paris?").await.unwrap();
        }
        assert_eq!(server.received().len(), 2, "one request per run");
    })
    .await;
}

#[tokio::test]
async fn the_request_id_is_in_every_error_after_the_server_answered() {
    guard(async {
        let bad = r#"{"error":{"message":"Unknown parameter: 'foo'.","type":"invalid_request_error","code":"unknown_parameter"}}"#;
        let text = transcript("openai/final.sse");
        let cut = text.find("sunny").unwrap();
        let id = "req_7f3c9a1b2d4e";
        let server = Server::start([
            Reply::json(400, bad).header("x-request-id", id),
            Reply::sse(text)
                .cut_after(cut, End::Complete)
                .header("x-request-id", id),
            Reply::json(200, r#"{"choices":[]}"#).header("x-request-id", id),
            Reply::json(400, bad),
        ])
        .await;
        let status = fails(&model(&server)).await;
        let truncated = streaming(&server)
            .invoke(weather_request())
            .await
            .unwrap_err();
        let malformed = fails(&model(&server)).await;
        for error in [&status, &truncated, &malformed] {
            assert_eq!(error.request_id(), Some(id), "{error}");
            assert!(error.to_string().contains(&format!("(request id {id})")), "{error}");
        }
        assert_eq!(
            status.to_string(),
            format!("openai request failed: invalid request (HTTP 400 Bad Request) (request id {id})")
        );
        // No id sent, none shown.
        let error = fails(&model(&server)).await;
        assert_eq!(error.request_id(), None);
        assert!(!error.to_string().contains("request id"), "{error}");
    })
    .await;
}

/// An error and its causes, as a report prints them.
fn report(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

#[tokio::test]
async fn a_query_in_the_base_url_is_kept_after_the_path_and_never_shown() {
    guard(async {
        const GATEWAY_KEY: &str = "gw-4f9a8b7c6d5e4f3a2b1c";
        let query = format!("api-version=2024-10-21&key={GATEWAY_KEY}");
        let echo = format!(r#"{{"error":"invalid key {GATEWAY_KEY}"}}"#);
        let server = Server::start([
            Reply::json(200, transcript("openai/final.json")),
            Reply::json(401, echo),
        ])
        .await;
        let (traces, _recording) = support::Traces::record();
        let model = OpenAiModel::builder("m")
            .base_url(server.url(&format!("/v1/?{query}#part")))
            .api_key(KEY)
            .build()
            .unwrap();
        model.invoke(weather_request()).await.unwrap();
        assert_eq!(
            server.received()[0].path,
            format!("/v1/chat/completions?{query}")
        );
        let echoed = fails(&model).await;
        let refused = OpenAiModel::builder("m")
            .base_url(format!("{}?{query}", refused_url().await))
            .connect_timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let unreachable = fails(&refused).await;
        assert_eq!(unreachable.kind(), ModelErrorKind::Connection);
        let invalid = OpenAiModel::builder("m")
            .base_url(format!("http://user:{GATEWAY_KEY}@exa mple.com/v1?{query}"))
            .build()
            .unwrap_err();
        let traced = traces.text();
        // Whether the thread's subscriber sees the client's event depends on tracing's interest
        // cache, which other tests running at once can leave stale: when the event is there, its
        // endpoint is redacted (and below, nothing anywhere shows the key).
        if traced.contains("model request") {
            assert!(traced.contains("?[redacted]"), "{traced}");
        }
        for shown in [
            report(&echoed),
            report(&unreachable),
            report(&invalid),
            format!("{echoed:?} {unreachable:?} {invalid:?} {model:?} {refused:?}"),
            traced,
        ] {
            assert!(!shown.contains(GATEWAY_KEY), "{shown}");
            assert!(!shown.contains(KEY), "{shown}");
        }
    })
    .await;
}
