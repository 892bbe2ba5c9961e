//! The guard on URLs in users' messages, on every wire: a user's image in cloud storage or on a
//! private network fails the request before anything reaches the loopback server, plain and
//! streamed; inline images and public URLs still go; each provider's `user_urls` opt-in lets
//! the refused ones through.

mod support;

use futures::StreamExt;
use hookchain::message::ContentPart;
use hookchain::{Message, Model, ModelErrorKind, ModelRequest};
use hookchain_providers::UserUrls;
use hookchain_providers::anthropic::AnthropicModel;
use hookchain_providers::bedrock::BedrockModel;
use hookchain_providers::gemini::GeminiModel;
use hookchain_providers::openai::OpenAiModel;
use hookchain_providers::responses::ResponsesModel;
use support::{Reply, Server, guard, transcript};

const S3: &str = "s3://tenant-uploads/invoices/cat.png";
const GS: &str = "gs://tenant-uploads/invoices/cat.png";
const METADATA: &str = "http://169.254.169.254/latest/meta-data/iam/cat.png";
const PUBLIC: &str = "https://example.com/cat.png";
const INLINE: &str = "data:image/png;base64,iVBORw0KGgo=";

/// A user's question about an image at `url`.
fn asking_about(url: &str) -> ModelRequest {
    ModelRequest::new(vec![Message::user(vec![
        ContentPart::text("What is in this picture?"),
        ContentPart::image_url(url),
    ])])
    .with_system_prompt("You describe pictures.")
}

/// A provider's wire, for this test: its recorded final answer, and which image URLs it can
/// carry at all.
struct Wire {
    final_answer: &'static str,
    /// A public `https:` URL goes on this wire (Bedrock reads images from bytes or S3 only).
    takes_web_urls: bool,
}

/// Runs the guard's checks on the models `model` makes (for a server's URL, streaming or not,
/// with a policy).
async fn the_guard_holds_on<M: Model>(wire: Wire, model: impl Fn(String, bool, UserUrls) -> M) {
    guard(async {
        // Refused, plain and streamed, before the server hears anything (it would answer 500).
        let server = Server::start([]).await;
        for url in [S3, GS, METADATA] {
            for streaming in [false, true] {
                let model = model(server.url(""), streaming, UserUrls::new());
                let error = model.invoke(asking_about(url)).await.unwrap_err();
                assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "{error}");
                let message = error.to_string();
                assert!(message.contains("refused before sending"), "{message}");
                assert!(message.contains("user_urls(UserUrls::new()"), "{message}");
                assert!(!message.contains("invoices"), "no path shown: {message}");
                let mut events = std::pin::pin!(model.stream(asking_about(url)));
                let first = events.next().await.expect("one item");
                assert_eq!(
                    first.unwrap_err().kind(),
                    ModelErrorKind::InvalidRequest,
                    "{url}"
                );
                assert!(events.next().await.is_none(), "the error ends the stream");
            }
        }
        assert!(server.received().is_empty(), "nothing was sent");

        // Inline images, public URLs, and what each opt-in allows, go.
        let mut sent: Vec<(&str, UserUrls)> = vec![
            (INLINE, UserUrls::new()),
            (S3, UserUrls::new().allow_cloud_storage()),
            (S3, UserUrls::new().allow_host("tenant-uploads")),
            (S3, UserUrls::new().allow_scheme("s3")),
        ];
        if wire.takes_web_urls {
            sent.extend([
                (PUBLIC, UserUrls::new()),
                (GS, UserUrls::new().allow_cloud_storage()),
                (METADATA, UserUrls::new().allow_private_network()),
                (METADATA, UserUrls::new().allow_host("169.254.169.254")),
            ]);
        }
        let server = Server::start(
            sent.iter()
                .map(|_| Reply::json(200, transcript(wire.final_answer))),
        )
        .await;
        for (url, policy) in &sent {
            let model = model(server.url(""), false, policy.clone());
            let answer = model.invoke(asking_about(url)).await;
            assert!(answer.is_ok(), "{url} with {policy:?}: {answer:?}");
        }
        let received = server.received();
        assert_eq!(received.len(), sent.len());
        for ((url, _), request) in sent.iter().zip(&received) {
            let body = String::from_utf8_lossy(&request.body);
            let image = url.strip_prefix("data:image/png;base64,").unwrap_or(url);
            assert!(body.contains(image), "{url} in {body}");
        }
    })
    .await;
}

#[tokio::test]
async fn chat_completions() {
    let wire = Wire {
        final_answer: "openai/final.json",
        takes_web_urls: true,
    };
    the_guard_holds_on(wire, |url, streaming, policy| {
        OpenAiModel::builder("gpt-4.1")
            .base_url(url + "/v1")
            .streaming(streaming)
            .user_urls(policy)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn responses() {
    let wire = Wire {
        final_answer: "responses/final.json",
        takes_web_urls: true,
    };
    the_guard_holds_on(wire, |url, streaming, policy| {
        ResponsesModel::builder("o4-mini")
            .base_url(url + "/v1")
            .streaming(streaming)
            .user_urls(policy)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn anthropic_messages() {
    let wire = Wire {
        final_answer: "anthropic/final.json",
        takes_web_urls: true,
    };
    the_guard_holds_on(wire, |url, streaming, policy| {
        AnthropicModel::builder("claude-sonnet-4-5")
            .base_url(url + "/v1")
            .streaming(streaming)
            .user_urls(policy)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn gemini() {
    let wire = Wire {
        final_answer: "gemini/final.json",
        takes_web_urls: true,
    };
    the_guard_holds_on(wire, |url, streaming, policy| {
        GeminiModel::builder("gemini-2.5-flash")
            .base_url(url + "/v1beta")
            .streaming(streaming)
            .user_urls(policy)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn bedrock_converse() {
    let wire = Wire {
        final_answer: "bedrock/final.json",
        takes_web_urls: false,
    };
    the_guard_holds_on(wire, |url, streaming, policy| {
        BedrockModel::builder("us.anthropic.claude-sonnet-4-20250514-v1:0")
            .base_url(url)
            .streaming(streaming)
            .user_urls(policy)
            .build()
            .unwrap()
    })
    .await;
}

/// An application that allowed private URLs on Bedrock still meets Bedrock's own rule: web URLs
/// are refused (before sending) by the conversion, not by the guard.
#[tokio::test]
async fn bedrock_refuses_web_urls_whatever_the_policy() {
    guard(async {
        let server = Server::start([]).await;
        let model = BedrockModel::builder("us.amazon.nova-pro-v1:0")
            .base_url(server.url(""))
            .user_urls(UserUrls::new().allow_private_network())
            .build()
            .unwrap();
        for url in [PUBLIC, METADATA] {
            let error = model.invoke(asking_about(url)).await.unwrap_err();
            assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
            assert!(
                !error.to_string().contains("refused before sending"),
                "{error}"
            );
        }
        assert!(server.received().is_empty());
    })
    .await;
}
