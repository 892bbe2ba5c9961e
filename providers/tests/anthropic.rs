//! The Anthropic client against a loopback server replaying recorded Messages API transcripts:
//! requests on the wire (system apart, headers, tool results), plain and streamed answers with
//! thinking and cache usage, every error class, and the full agent loop.

mod support;

use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;
use hookchain::model::ModelEvent;
use hookchain::{
    Agent, FnTool, Model, ModelError, ModelErrorKind, ModelRequest, StopReason, ToolCall, Usage,
};
use hookchain_providers::anthropic::AnthropicModel;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{End, Reply, Server, guard, transcript};

const KEY: &str = "sk-ant-api03-test-key-0123456789";

fn model(server: &Server) -> AnthropicModel {
    AnthropicModel::builder("claude-sonnet-4-5")
        .base_url(server.url("/v1"))
        .api_key(KEY)
        .build()
        .expect("client builds")
}

fn streaming(server: &Server) -> AnthropicModel {
    AnthropicModel::builder("claude-sonnet-4-5")
        .base_url(server.url("/v1"))
        .api_key(KEY)
        .streaming(true)
        .build()
        .expect("client builds")
}

fn weather_request() -> ModelRequest {
    support::weather_request()
}

fn paris(id: &str) -> ToolCall {
    ToolCall::new(
        id,
        "get_weather",
        json!({"city": "Paris", "unit": "celsius"}),
    )
}

async fn fails(model: &AnthropicModel) -> ModelError {
    model
        .invoke(weather_request())
        .await
        .expect_err("the call should fail")
}

#[tokio::test]
async fn a_plain_call_sends_system_apart_headers_and_tools() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("anthropic/tool_use.json"))]).await;
        let response = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.text(),
            "Let me check the weather in Paris."
        );
        assert_eq!(
            response.message.tool_calls,
            [paris("toolu_01A09q90qw90lq917835lq9")]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(1584, 91).with_cache(1536, 0));

        let received = server.received();
        let request = &received[0];
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(request.header("x-api-key"), Some(KEY));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(request.header("authorization"), None);
        let json = &request.json;
        assert_eq!(json["model"], "claude-sonnet-4-5");
        assert_eq!(json["max_tokens"], 4096);
        assert_eq!(json["system"], "You are a weather bot.");
        assert_eq!(
            json["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "What is the weather in Paris?"}]}])
        );
        assert_eq!(json["tools"][0]["name"], "get_weather");
        assert_eq!(json["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(json["tool_choice"], json!({"type": "any"}));
    })
    .await;
}

#[tokio::test]
async fn a_streamed_call_assembles_thinking_text_tool_call_and_cache_usage() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("anthropic/tool_use.sse")),
            Reply::sse(transcript("anthropic/tool_use.sse")),
        ])
        .await;
        let response = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.content.reasoning().as_deref(),
            Some("The user wants Paris weather; call get_weather.")
        );
        assert_eq!(
            response.message.tool_calls,
            [paris("toolu_01T1x1fJ34qAmk2tNTrN7Up6")]
        );
        assert_eq!(
            response.message.text(),
            "Let me check the weather in Paris."
        );
        assert_eq!(
            response.usage,
            Usage::new(48 + 256 + 1536, 89).with_cache(1536, 256)
        );
        assert_eq!(server.received()[0].json["stream"], true);

        let events: Vec<ModelEvent> = model(&server)
            .stream(weather_request())
            .map(|event| event.expect("no error"))
            .collect()
            .await;
        let thinking: String = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::ReasoningDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, "The user wants Paris weather; call get_weather.");
        assert!(events.contains(&ModelEvent::ToolCallEnd {
            index: 2,
            call: paris("toolu_01T1x1fJ34qAmk2tNTrN7Up6")
        }));
    })
    .await;
}

/// llama.cpp's `/v1/messages` stream: thinking with an empty signature, text, then a call, each
/// block stopped only at the end (after the next began), the cached prompt counted apart from
/// `input_tokens`. Recorded from llama-server (see tests/llama_server.rs).
#[tokio::test]
async fn a_stream_whose_blocks_stop_late_is_read_whole() {
    guard(async {
        let server = Server::start([Reply::sse(transcript(
            "llamacpp/messages_thinking_tool_use.sse",
        ))])
        .await;
        let response = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(response.message.content.reasoning().as_deref(), Some("Hm"));
        assert_eq!(response.message.text(), "Ok");
        assert_eq!(
            response.message.tool_calls,
            [ToolCall::new(
                "kgGyOohN6KrPio3Xj2xzwoZh6oRsOKSt",
                "get_weather",
                json!({"city": "Lisbon"})
            )]
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage, Usage::new(1 + 589, 60).with_cache(589, 0));
    })
    .await;
}

#[tokio::test]
async fn overloaded_rate_limited_and_server_errors() {
    guard(async {
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let rate = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
        let server = Server::start([
            Reply::json(529, overloaded),
            Reply::json(429, rate).header("retry-after", "12"),
            Reply::json(500, r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#),
            Reply::sse(transcript("anthropic/overloaded.sse")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Overloaded);
        assert_eq!(error.status(), Some(529));
        assert!(error.is_retryable());

        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert_eq!(error.retry_after(), Some(Duration::from_secs(12)));

        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Overloaded);

        // An error event in the middle of a stream.
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let error = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Overloaded);
        assert_eq!(error.status(), None);
    })
    .await;
}

#[tokio::test]
async fn authentication_context_length_and_invalid_requests() {
    guard(async {
        let server = Server::start([
            Reply::json(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
            Reply::json(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#),
            Reply::json(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.tool_result: unexpected `tool_use_id`"}}"#),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        assert!(!format!("{error:?}").contains(KEY));
        assert_eq!(
            fails(&model).await.kind(),
            ModelErrorKind::ContextLengthExceeded
        );
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert!(source.contains("unexpected `tool_use_id`"), "{source}");
    })
    .await;
}

// On the paused clock: the server's stall and the timeouts are virtual time.
#[tokio::test(start_paused = true)]
async fn truncated_reset_slow_and_malformed_answers() {
    guard(async {
        let body = transcript("anthropic/tool_use.sse");
        let in_call = body.find("is\\\", \\\"unit").unwrap();
        let server = Server::start([
            Reply::sse(body.clone()).cut_after(in_call, End::Complete),
            Reply::sse(body.clone()).cut_after(in_call, End::Reset),
            Reply::json(200, r#"{"type":"message","content":[{"type":"text""#),
            Reply::json(200, transcript("anthropic/final.json")).stall(Duration::from_secs(5)),
        ])
        .await;
        let model = streaming(&server);
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");

        let plain = AnthropicModel::builder("claude-sonnet-4-5")
            .base_url(server.url("/v1"))
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let error = fails(&plain).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        let error = fails(&plain).await;
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
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

/// The second request: the assistant turn with its `tool_use`, then a user turn whose
/// `tool_result` answers it.
fn assert_tool_round_trip(second: &serde_json::Value, id: &str) {
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{second:#}");
    assert_eq!(messages[1]["role"], "assistant");
    let tool_use = messages[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "tool_use")
        .expect("the assistant turn carries the tool_use");
    assert_eq!(tool_use["id"], id);
    // Thinking with tools: the signed thinking block goes back first in the assistant turn,
    // as Anthropic requires.
    let thinking = &messages[1]["content"][0];
    assert_eq!(thinking["type"], "thinking", "{second:#}");
    assert_eq!(
        thinking["signature"],
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    );
    assert!(!thinking["thinking"].as_str().unwrap().is_empty());
    assert_eq!(
        tool_use["input"],
        json!({"city": "Paris", "unit": "celsius"})
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"],
        json!([{"type": "tool_result", "tool_use_id": id, "content": "18 degrees celsius and sunny in Paris"}])
    );
    assert_eq!(second["system"], "You are a weather bot.");
}

#[tokio::test]
async fn the_agent_loop_runs_tool_use_tool_result_final_answer() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("anthropic/tool_use.json")),
            Reply::json(200, transcript("anthropic/final.json")),
        ])
        .await;
        let agent = Agent::builder(model(&server))
            .system_prompt("You are a weather bot.")
            .tool(weather_tool())
            .build()
            .unwrap();
        let output = agent.run("What is the weather in Paris?").await.unwrap();
        assert_eq!(
            output.text().as_deref(),
            Some("It is 18°C and sunny in Paris.")
        );
        assert_tool_round_trip(&server.received()[1].json, "toolu_01A09q90qw90lq917835lq9");
    })
    .await;
}

#[tokio::test]
async fn the_agent_loop_runs_on_a_streaming_model() {
    guard(async {
        let server = Server::start([
            Reply::sse(transcript("anthropic/tool_use.sse")),
            Reply::sse(transcript("anthropic/final.sse")),
        ])
        .await;
        let agent = Agent::builder(streaming(&server))
            .system_prompt("You are a weather bot.")
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
            Usage::new(1840 + 1236, 89 + 14).with_cache(1536, 256 + 1024)
        );
        assert_tool_round_trip(&server.received()[1].json, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    })
    .await;
}

#[tokio::test]
async fn a_refusal_is_the_same_answer_streamed_or_not() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("anthropic/refusal.json")),
            Reply::sse(transcript("anthropic/refusal.sse")),
        ])
        .await;
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(plain.stop_reason, StopReason::Refusal);
        assert_eq!(plain.message.text(), "I can't help with");
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed, plain);
    })
    .await;
}

#[tokio::test]
async fn a_tool_use_cut_by_max_tokens_is_dropped_streamed_or_not_and_never_run() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("anthropic/tool_use_cut.json")),
            Reply::sse(transcript("anthropic/tool_use_cut.sse")),
        ])
        .await;
        let plain = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(plain.stop_reason, StopReason::MaxTokens);
        assert!(plain.message.tool_calls.is_empty(), "{plain:?}");
        assert_eq!(plain.message.text(), "Let me check the weather in Paris.");
        let streamed = streaming(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(streamed.stop_reason, StopReason::MaxTokens);
        assert!(streamed.message.tool_calls.is_empty(), "{streamed:?}");
        let server = Server::start([
            Reply::json(200, transcript("anthropic/tool_use_cut.json")),
            Reply::sse(transcript("anthropic/tool_use_cut.sse")),
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
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let id = "req_011CRxA9bW5Zq4Yf3tPkV7Nd";
        let server = Server::start([
            Reply::json(529, overloaded).header("request-id", id),
            Reply::sse(transcript("anthropic/overloaded.sse")).header("request-id", id),
            Reply::json(200, "{}").header("request-id", id),
        ])
        .await;
        let model = model(&server);
        let status = fails(&model).await;
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        let event = items.last().unwrap().as_ref().unwrap_err();
        let malformed = fails(&model).await;
        assert_eq!(malformed.kind(), ModelErrorKind::MalformedResponse);
        for error in [&status, event, &malformed] {
            assert_eq!(error.request_id(), Some(id), "{error}");
            assert!(
                error.to_string().ends_with(&format!("(request id {id})")),
                "{error}"
            );
        }
    })
    .await;
}
