//! The Bedrock client against a loopback server replaying recorded Converse transcripts: the
//! request on the wire (URL with the model id encoded, bearer key, system apart, tools), plain
//! and streamed answers (AWS's binary event stream, cut into 7-byte pieces) with reasoning and
//! cached usage, reasoning sent back, every error class, exceptions in a stream, cut and broken
//! streams, the full agent loop, and SigV4 signatures checked as AWS checks them.

mod support;

use std::time::Duration;

use futures::StreamExt;
use hookchain::model::ModelEvent;
use hookchain::{Agent, Model, ModelError, ModelErrorKind, StopReason, Usage};
use hookchain_providers::bedrock::{BedrockModel, METADATA_KEY};
use serde_json::json;
use support::{End, Reply, Server, get_weather, guard, transcript, weather_request};

const KEY: &str = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLTAxMjM0NTY3ODk=";
const MODEL: &str = "us.anthropic.claude-sonnet-4-20250514-v1:0";
const PLAIN_PATH: &str = "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse";
const STREAM_PATH: &str = "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream";
const SIGNATURE: &str = "EqQBCkgIBxABGAIiQL3k9fZ0yN8aT5pQ2wVx7cJ1mR4sK6hB0dE3gF8iL2nO5qU9tW1yA4zC7eG0jM3pS6vX9bD2fH5kN8rT1wZ4EgxQ";

fn model(server: &Server) -> BedrockModel {
    BedrockModel::builder(MODEL)
        .base_url(server.url(""))
        .api_key(KEY)
        .build()
        .expect("client builds")
}

fn streaming(server: &Server) -> BedrockModel {
    BedrockModel::builder(MODEL)
        .base_url(server.url(""))
        .api_key(KEY)
        .streaming(true)
        .build()
        .expect("client builds")
}

/// A streaming model reading events of at most `max_event` bytes.
fn model_at(server: &Server, max_event: usize) -> BedrockModel {
    BedrockModel::builder(MODEL)
        .base_url(server.url(""))
        .max_event_size(max_event)
        .streaming(true)
        .build()
        .unwrap()
}

async fn fails(model: &BedrockModel) -> ModelError {
    model
        .invoke(weather_request())
        .await
        .expect_err("the call should fail")
}

/// An AWS error: its body, and its type in `x-amzn-ErrorType`.
fn aws_error(status: u16, exception: &str, message: &str) -> Reply {
    Reply::json(status, json!({ "message": message }).to_string())
        .header(
            "x-amzn-ErrorType",
            &format!("{exception}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        )
        .header("x-amzn-RequestId", "9f1c7e2a-0b4d-4c8e-a1f3-5d6e7f8a9b0c")
}

#[tokio::test]
async fn a_plain_call_encodes_the_model_id_sends_the_key_and_reads_the_answer() {
    guard(async {
        let server = Server::start([Reply::json(200, transcript("bedrock/tool_use.json"))]).await;
        let response = model(&server).invoke(weather_request()).await.unwrap();
        assert_eq!(
            response.message.text(),
            "Let me check the weather in Paris."
        );
        assert_eq!(response.message.tool_calls[0].name, "get_weather");
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage::new(412 + 1536, 96).with_cache(0, 1536)
        );
        assert_eq!(
            response.message.metadata[METADATA_KEY][0]["reasoningText"]["signature"],
            SIGNATURE
        );
        let received = &server.received()[0];
        assert_eq!(
            (received.method.as_str(), received.path.as_str()),
            ("POST", PLAIN_PATH)
        );
        assert_eq!(
            received.header("authorization"),
            Some(&*format!("Bearer {KEY}"))
        );
        assert_eq!(
            received.json["system"],
            json!([{"text": "You are a weather bot."}])
        );
        assert_eq!(
            received.json["toolConfig"]["toolChoice"],
            json!({"any": {}})
        );
        assert_eq!(
            received.json["messages"],
            json!([{"role": "user", "content": [{"text": "What is the weather in Paris?"}]}])
        );
    })
    .await;
}

#[tokio::test]
async fn a_streamed_call_reads_the_binary_event_stream_and_assembles_the_same_answer() {
    guard(async {
        let server = Server::start([
            Reply::event_stream(&transcript("bedrock/tool_use.events")),
            Reply::event_stream(&transcript("bedrock/tool_use.events")),
            Reply::json(200, transcript("bedrock/tool_use.json")),
        ])
        .await;
        let model = streaming(&server);
        let events: Vec<ModelEvent> = model
            .stream(weather_request())
            .map(Result::unwrap)
            .collect()
            .await;
        let texts: String = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, "Let me check the weather in Paris.");
        assert!(
            matches!(events.last(), Some(ModelEvent::Usage(_))),
            "{events:#?}"
        );
        let streamed = model.invoke(weather_request()).await.unwrap();
        let plain = self::model(&server)
            .invoke(weather_request())
            .await
            .unwrap();
        assert_eq!(streamed, plain);
        assert_eq!(server.received()[0].path, STREAM_PATH);
    })
    .await;
}

#[tokio::test]
async fn every_error_class() {
    guard(async {
        let server = Server::start([
            aws_error(
                429,
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            )
            .header("retry-after", "3"),
            aws_error(
                503,
                "ServiceUnavailableException",
                "Bedrock is unable to process your request.",
            ),
            aws_error(
                500,
                "InternalServerException",
                "The server encountered an error.",
            ),
            aws_error(
                400,
                "ValidationException",
                "Input is too long for requested model.",
            ),
            aws_error(
                400,
                "ValidationException",
                "The model returned the following errors: messages: roles must alternate",
            ),
            aws_error(
                403,
                "AccessDeniedException",
                &format!("Invalid API Key format: {KEY}"),
            ),
            aws_error(
                404,
                "ResourceNotFoundException",
                "Could not resolve the foundation model.",
            ),
            aws_error(
                408,
                "ModelTimeoutException",
                "Model has timed out in processing the request.",
            ),
            Reply::event_stream(&transcript("bedrock/throttled.events")),
        ])
        .await;
        let model = model(&server);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::RateLimited);
        assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
        assert_eq!(
            error.request_id(),
            Some("9f1c7e2a-0b4d-4c8e-a1f3-5d6e7f8a9b0c")
        );
        let source = std::error::Error::source(&error).unwrap().to_string();
        assert_eq!(
            source,
            "ThrottlingException: Too many requests, please wait before trying again."
        );
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Overloaded);
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Overloaded);
        assert_eq!(
            fails(&model).await.kind(),
            ModelErrorKind::ContextLengthExceeded
        );
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::InvalidRequest);
        let error = fails(&model).await;
        assert_eq!(error.kind(), ModelErrorKind::Authentication);
        assert!(!format!("{error} {error:?}").contains(KEY), "{error:?}");
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::InvalidRequest);
        assert_eq!(fails(&model).await.kind(), ModelErrorKind::Timeout);

        // An exception in the middle of a stream ends it, classified.
        let items: Vec<_> = model.stream(weather_request()).collect().await;
        assert!(matches!(items[0], Ok(ModelEvent::TextDelta { .. })));
        let error = items.last().unwrap().as_ref().unwrap_err();
        assert_eq!(
            (error.kind(), error.status()),
            (ModelErrorKind::RateLimited, None)
        );
    })
    .await;
}

#[tokio::test]
async fn cut_reset_corrupt_and_oversized_streams_fail_clearly() {
    guard(async {
        let body = support::aws_event_stream(&transcript("bedrock/tool_use.events"));
        let mut corrupt = body.clone();
        corrupt[100] ^= 0x40;
        let server = Server::start([
            Reply::event_stream(&transcript("bedrock/tool_use.events"))
                .cut_after(body.len() / 2, End::Complete),
            Reply::event_stream(&transcript("bedrock/tool_use.events"))
                .cut_after(body.len() / 2, End::Reset),
            Reply::event_stream(""),
            Reply::json(200, r#"{"output":{"message":{"content":[{"text""#),
        ])
        .await;
        let model = streaming(&server);
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Connection, "{error:?}");
        // An empty body: no stop, malformed.
        let error = model.invoke(weather_request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        let error = fails(&self::model(&server)).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");

        // A corrupt message, and one larger than the event limit.
        let server = Server::start([
            Reply::event_stream_bytes(corrupt),
            Reply::event_stream(&transcript("bedrock/final.events")),
        ])
        .await;
        let error = model_at(&server, 8 << 20)
            .invoke(weather_request())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error:?}");
        assert!(error.to_string().contains("corrupt"), "{error}");
        let error = model_at(&server, 64)
            .invoke(weather_request())
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("larger than the limit of 64 bytes"),
            "{error}"
        );
    })
    .await;
}

/// The second request: the assistant turn with its signed reasoning first, then a user turn
/// whose `toolResult` answers the call.
fn assert_tool_round_trip(second: &serde_json::Value) {
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{second:#}");
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {
                "text": "The user wants the weather in Paris. I should call get_weather with city Paris.",
                "signature": SIGNATURE}}},
            {"text": "Let me check the weather in Paris."},
            {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather",
                         "input": {"city": "Paris", "unit": "celsius"}}},
        ]}),
        "the reasoning goes back signed, first"
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [{"toolResult": {
            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
            "content": [{"text": "18 degrees celsius and sunny in Paris"}]}}]})
    );
}

#[tokio::test]
async fn the_agent_loop_runs_call_result_final_answer_with_the_reasoning_sent_back() {
    guard(async {
        let server = Server::start([
            Reply::json(200, transcript("bedrock/tool_use.json")),
            Reply::json(200, transcript("bedrock/final.json")),
            Reply::event_stream(&transcript("bedrock/tool_use.events")),
            Reply::event_stream(&transcript("bedrock/final.events")),
            Reply::event_stream(&transcript("bedrock/tool_use.events")),
            Reply::event_stream(&transcript("bedrock/final.events")),
        ])
        .await;
        for model in [model(&server), streaming(&server)] {
            let agent = Agent::builder(model)
                .system_prompt("You are a weather bot.")
                .tool(get_weather)
                .build()
                .unwrap();
            let output = agent.run("What is the weather in Paris?").await.unwrap();
            assert_eq!(output.text().as_deref(), Some("It is 18°C and sunny in Paris."));
            assert_eq!(
                output.usage,
                Usage::new(412 + 1536 + 87 + 1024, 96 + 14).with_cache(1024, 1536)
            );
        }
        // A streamed run assembles the answer itself: the reasoning comes as metadata.
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
        assert!(events.iter().any(|event| matches!(
            event,
            hookchain::agent::AgentEvent::Model(ModelEvent::Metadata { key, .. }) if key == METADATA_KEY
        )));
        let received = server.received();
        assert_eq!(received[1].path, PLAIN_PATH);
        for second in [1, 3, 5] {
            assert_tool_round_trip(&received[second].json);
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_slow_answer_times_out() {
    support::paused_guard(async {
        let server = Server::start([
            Reply::json(200, transcript("bedrock/final.json")).stall(Duration::from_secs(5))
        ])
        .await;
        let slow = BedrockModel::builder(MODEL)
            .base_url(server.url(""))
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let error = fails(&slow).await;
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error:?}");
    })
    .await;
}

#[test]
fn the_region_chooses_the_endpoint() {
    let model = BedrockModel::builder("amazon.nova-pro-v1:0")
        .region("eu-west-3")
        .build()
        .unwrap();
    let shown = format!("{model:?}");
    assert!(
        shown.contains(
            "https://bedrock-runtime.eu-west-3.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse"
        ),
        "{shown}"
    );
    assert_eq!(model.model(), "amazon.nova-pro-v1:0");
    assert_eq!(model.provider_name(), "aws.bedrock");
}

#[cfg(feature = "bedrock-sigv4")]
mod sigv4 {
    use std::time::{Duration, SystemTime};

    use aws_credential_types::Credentials;
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
    use aws_sigv4::sign::v4;

    use super::*;

    const ACCESS_KEY: &str = "AKIDEXAMPLE";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const TOKEN: &str = "FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN";

    /// The signature AWS computes for `received` (its signed headers, its body, the time it
    /// names), with the secret: what Bedrock compares with the one sent.
    fn expected_signature(received: &support::Received, url: &str) -> String {
        let authorization = received.header("authorization").unwrap();
        let signed: Vec<&str> = authorization
            .split("SignedHeaders=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .split(';')
            .collect();
        let headers: Vec<(&str, &str)> = received
            .headers
            .iter()
            .filter(|(name, _)| signed.contains(&name.as_str()))
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        assert_eq!(headers.len(), signed.len(), "every signed header was sent");
        let date = received.header("x-amz-date").unwrap();
        let time = parse_amz_date(date);
        let identity =
            Credentials::new(ACCESS_KEY, SECRET, Some(TOKEN.into()), None, "test").into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region("eu-central-1")
            .name("bedrock")
            .time(time)
            .settings(SigningSettings::default())
            .build()
            .unwrap()
            .into();
        let signable = SignableRequest::new(
            &received.method,
            url,
            headers.into_iter(),
            SignableBody::Bytes(&received.body),
        )
        .unwrap();
        sign(signable, &params).unwrap().signature().to_owned()
    }

    /// `20261127T061530Z` as a time.
    fn parse_amz_date(date: &str) -> SystemTime {
        let number = |range: std::ops::Range<usize>| date[range].parse::<u64>().unwrap();
        let (year, month, day) = (number(0..4), number(4..6), number(6..8));
        let seconds = number(9..11) * 3600 + number(11..13) * 60 + number(13..15);
        // Days since the epoch (the civil-from-days algorithm, inverted).
        let (y, m) = if month <= 2 {
            (year - 1, month + 9)
        } else {
            (year, month - 3)
        };
        let era = y / 400;
        let yoe = y - era * 400;
        let doy = (153 * m + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        SystemTime::UNIX_EPOCH + Duration::from_secs(days * 86_400 + seconds)
    }

    #[tokio::test]
    async fn requests_are_signed_as_aws_checks_them_plain_and_streamed() {
        guard(async {
            let server = Server::start([
                Reply::json(200, transcript("bedrock/final.json")),
                Reply::event_stream(&transcript("bedrock/final.events")),
            ])
            .await;
            let credentials =
                Credentials::new(ACCESS_KEY, SECRET, Some(TOKEN.into()), None, "test");
            let signed = BedrockModel::builder(MODEL)
                .api_key("replaced by the signature")
                .base_url(server.url(""))
                .region("eu-central-1")
                .sigv4(credentials);
            let plain = signed.clone().build().unwrap();
            let streamed = signed.streaming(true).build().unwrap();
            plain.invoke(weather_request()).await.unwrap();
            streamed.invoke(weather_request()).await.unwrap();
            for (received, path) in server.received().iter().zip([PLAIN_PATH, STREAM_PATH]) {
                let authorization = received.header("authorization").unwrap();
                assert!(
                    authorization
                        .starts_with(&format!("AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/"))
                        && authorization.contains("/eu-central-1/bedrock/aws4_request"),
                    "{authorization}"
                );
                assert_eq!(received.header("x-amz-security-token"), Some(TOKEN));
                let sent = authorization.rsplit("Signature=").next().unwrap();
                assert_eq!(sent, expected_signature(received, &server.url(path)));
                assert!(!format!("{plain:?}").contains(SECRET));
            }
        })
        .await;
    }

    #[derive(Debug)]
    struct NoCredentials;

    impl aws_credential_types::provider::ProvideCredentials for NoCredentials {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            aws_credential_types::provider::future::ProvideCredentials::ready(Err(
                aws_credential_types::provider::error::CredentialsError::not_loaded("no profile"),
            ))
        }
    }

    #[tokio::test]
    async fn missing_credentials_fail_the_call_before_anything_is_sent() {
        guard(async {
            let server = Server::start([]).await;
            let model = BedrockModel::builder(MODEL)
                .base_url(server.url(""))
                .sigv4(NoCredentials)
                .build()
                .unwrap();
            let error = fails(&model).await;
            assert_eq!(error.kind(), ModelErrorKind::Authentication, "{error:?}");
            assert!(error.to_string().contains("no AWS credentials"), "{error}");
            assert!(server.received().is_empty());
        })
        .await;
    }
}
