//! What a client reads is bounded, and how long it waits: huge error bodies and answers, endless
//! lines and events of a stream, servers that stall or trickle. Each ends with a classified
//! error naming the limit, the server sees the client stop reading, and nothing hangs (the
//! timeouts are tested on tokio's paused clock).

mod support;

use std::time::Duration;

use futures::StreamExt;
use hookchain::{Message, Model, ModelErrorKind, ModelRequest};
use hookchain_providers::anthropic::AnthropicModel;
use hookchain_providers::openai::OpenAiModel;
use support::{Reply, Server, guard, paused_guard, transcript};
use tokio::time::Instant;

const MIB: usize = 1024 * 1024;

fn openai(server: &Server) -> OpenAiModel {
    OpenAiModel::builder("m")
        .base_url(server.url("/v1"))
        .build()
        .expect("client builds")
}

fn anthropic(server: &Server) -> AnthropicModel {
    AnthropicModel::builder("m")
        .base_url(server.url("/v1"))
        .build()
        .expect("client builds")
}

fn request() -> ModelRequest {
    ModelRequest::new(vec![Message::user("Hello?")])
}

/// An OpenAI answer whose text is `bytes` bytes of `a`.
fn huge_answer(bytes: usize) -> Reply {
    Reply::json(
        200,
        r#"{"choices":[{"message":{"role":"assistant","content":""#,
    )
    .filler(b'a', bytes, r#""},"finish_reason":"stop"}]}"#)
}

#[tokio::test]
async fn a_huge_error_body_is_read_up_to_its_limit_and_no_further() {
    guard(async {
        let body = r#"{"error":{"type":"server_error","message":""#;
        let server = Server::start([
            Reply::json(500, body).filler(b'x', 64 * MIB, r#""}}"#),
            Reply::json(500, body)
                .filler(b'x', 64 * MIB, r#""}}"#)
                .pieces(64 * 1024),
        ])
        .await;
        let model = openai(&server);
        for framing in ["with a length", "chunked"] {
            let error = model.invoke(request()).await.unwrap_err();
            assert_eq!(
                error.kind(),
                ModelErrorKind::Overloaded,
                "{framing}: {error}"
            );
            assert_eq!(error.status(), Some(500));
            let cause = std::error::Error::source(&error).unwrap().to_string();
            assert!(cause.len() < 3000, "{framing}: {} bytes", cause.len());
        }
        // The client stopped reading at 64 KiB: the server could not send more than the
        // sockets' buffers hold.
        for sent in server.sent() {
            assert!(sent < 16 * MIB, "the server sent {sent} bytes");
        }
    })
    .await;
}

#[tokio::test]
async fn a_huge_answer_fails_at_its_limit_unread() {
    guard(async {
        let server = Server::start([
            huge_answer(64 * MIB),
            huge_answer(64 * MIB).pieces(64 * 1024),
            huge_answer(64 * MIB),
        ])
        .await;
        let model = openai(&server);
        for framing in ["with a length", "chunked"] {
            let error = model.invoke(request()).await.unwrap_err();
            assert_eq!(
                error.kind(),
                ModelErrorKind::MalformedResponse,
                "{framing}: {error}"
            );
            assert!(!error.is_retryable());
            assert!(error.to_string().contains("limit of 32 MiB"), "{error}");
        }
        let error = anthropic(&server).invoke(request()).await.unwrap_err();
        assert!(error.to_string().contains("limit of 32 MiB"), "{error}");
        // An answer announced too large is not read at all; one that turns out too large is
        // read up to the limit (the rest of what the server sent is in the sockets' buffers).
        let sent = server.sent();
        assert!(
            sent[0] < 16 * MIB && sent[2] < 16 * MIB,
            "the server sent {sent:?}"
        );
        assert!(sent[1] < 48 * MIB, "the server sent {sent:?}");
    })
    .await;
}

#[tokio::test]
async fn an_answer_within_a_lowered_limit_is_read_and_one_past_it_is_not() {
    guard(async {
        let server = Server::start([huge_answer(1000), huge_answer(1000).pieces(100)]).await;
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .max_answer_size(1100)
            .build()
            .unwrap();
        let response = model.invoke(request()).await.unwrap();
        assert_eq!(response.message.text().len(), 1000);
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .max_answer_size(1000)
            .build()
            .unwrap();
        let error = model.invoke(request()).await.unwrap_err();
        assert!(error.to_string().contains("limit of 1000 bytes"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn an_endless_line_of_a_stream_fails_at_its_limit() {
    guard(async {
        let line = || Reply::sse("data: ").filler(b'x', 64 * MIB, "\n\n");
        let server = Server::start([line(), line()]).await;
        let items: Vec<_> = openai(&server).stream(request()).collect().await;
        let [Err(error)] = &items[..] else {
            panic!("{items:?}")
        };
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(
            error
                .to_string()
                .contains("line of the stream is longer than the limit of 8 MiB"),
            "{error}"
        );
        let error = anthropic(&server).invoke(request()).await;
        let error = error.unwrap_err();
        // An Anthropic client streams only when asked; its plain call reads an SSE body as a
        // (bounded) answer.
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        let sent = server.sent();
        assert!(sent[0] < 24 * MIB, "the server sent {sent:?}");
        assert!(sent[1] < 48 * MIB, "the server sent {sent:?}");
    })
    .await;
}

#[tokio::test]
async fn an_event_of_endless_data_lines_fails_at_its_limit() {
    guard(async {
        let line = format!("data: {}\n", "x".repeat(1017));
        let body = line.repeat(9 * 1024);
        let server = Server::start([Reply::sse(body).pieces(64 * 1024)]).await;
        let items: Vec<_> = openai(&server).stream(request()).collect().await;
        let [Err(error)] = &items[..] else {
            panic!("{} items", items.len())
        };
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(
            error
                .to_string()
                .contains("event of the stream is larger than the limit of 8 MiB"),
            "{error}"
        );
    })
    .await;
}

#[tokio::test]
async fn lowered_stream_limits_apply_to_both_providers() {
    guard(async {
        let text = transcript("openai/final.sse");
        let server = Server::start([Reply::sse(text.clone()), Reply::sse(text)]).await;
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .max_line_size(20)
            .streaming(true)
            .build()
            .unwrap();
        let error = model.invoke(request()).await.unwrap_err();
        assert!(error.to_string().contains("limit of 20 bytes"), "{error}");
        let model = AnthropicModel::builder("m")
            .base_url(server.url("/v1"))
            .max_event_size(20)
            .streaming(true)
            .build()
            .unwrap();
        let error = model.invoke(request()).await.unwrap_err();
        assert!(error.to_string().contains("limit of 20 bytes"), "{error}");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_answer_that_trickles_forever_times_out_after_the_default_600_s() {
    paused_guard(async {
        // One byte a minute: never silent long enough for the idle timeout.
        let reply = huge_answer(1_000_000).trickle(Duration::from_secs(60));
        let server = Server::start([reply]).await;
        let start = Instant::now();
        let error = openai(&server).invoke(request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
        assert!(error.is_retryable());
        assert!(error.to_string().contains("600 s"), "{error}");
        assert_eq!(start.elapsed().as_secs(), 600);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_error_body_that_trickles_forever_is_read_for_one_idle_period() {
    paused_guard(async {
        let body = r#"{"error":{"type":"server_error","message":"overloaded "#;
        let reply = Reply::json(503, body)
            .filler(b'.', 1_000_000, "")
            .trickle(Duration::from_secs(60));
        let server = Server::start([reply]).await;
        let start = Instant::now();
        // A stream: no total timeout bounds it.
        let items: Vec<_> = openai(&server).stream(request()).collect().await;
        let [Err(error)] = &items[..] else {
            panic!("{items:?}")
        };
        assert_eq!(error.kind(), ModelErrorKind::Overloaded, "{error}");
        assert_eq!(error.status(), Some(503));
        assert_eq!(start.elapsed().as_secs(), 300);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_stalled_stream_times_out_after_the_default_300_s_of_silence() {
    paused_guard(async {
        let text = transcript("openai/final.sse");
        let in_text = text.find("sunny").unwrap();
        let server =
            Server::start([Reply::sse(text).pause_after(in_text, Duration::from_secs(86_000))])
                .await;
        let start = Instant::now();
        let items: Vec<_> = openai(&server).stream(request()).collect().await;
        let (last, before) = items.split_last().unwrap();
        assert!(!before.is_empty() && before.iter().all(Result::is_ok));
        let error = last.as_ref().unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
        assert_eq!(start.elapsed().as_secs(), 300);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn timeouts_are_configured_or_switched_off() {
    paused_guard(async {
        let slow =
            || Reply::json(200, transcript("openai/final.json")).stall(Duration::from_secs(5000));
        let server = Server::start([slow(), slow(), slow()]).await;
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let start = Instant::now();
        let error = model.invoke(request()).await.unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
        assert!(error.to_string().contains("30 s"), "{error}");
        assert_eq!(start.elapsed().as_secs(), 30);
        // Silent before the answer starts: the idle timeout.
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .read_timeout(Duration::from_secs(40))
            .build()
            .unwrap();
        let error = model.invoke(request()).await.unwrap_err();
        assert!(error.to_string().contains("silent for 40 s"), "{error}");
        let model = OpenAiModel::builder("m")
            .base_url(server.url("/v1"))
            .timeout(None)
            .read_timeout(None)
            .build()
            .unwrap();
        let response = model.invoke(request()).await.unwrap();
        assert!(!response.message.text().is_empty());
    })
    .await;
}
