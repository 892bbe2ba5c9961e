//! Amazon Bedrock's Converse API (feature `bedrock`): `Converse` and `ConverseStream`, one
//! wire for every model Bedrock serves (Claude, Nova, Llama, Mistral, …).
//!
//! The system prompt (and any system message) is sent apart as `system` blocks; the
//! conversation as alternating `user` and `assistant` turns of content blocks: text, images
//! (as bytes — base64, or a `data:` URL — or from S3, `s3://`; a web URL is refused with an
//! `InvalidRequest` error before anything is sent, as Bedrock would refuse it), `toolUse`
//! blocks for the model's calls and `toolResult` blocks for their results (text, JSON as
//! `json`, images; resource links, embedded resources and audio as text, as
//! [`Content::to_text_lossy`](hookchain_core::message::Content::to_text_lossy) writes them:
//! audio and a binary resource as a placeholder naming its type and size; `status: error` for
//! a failure), the results of one round in one user turn.
//! A response format becomes an instruction to answer with JSON of its schema (check the
//! answer with the [`ValidatedOutput`](hookchain_core::builtin::ValidatedOutput) built-in).
//! Sampling settings go in `inferenceConfig`; a request's extras at the top level
//! (`guardrailConfig`, `performanceConfig`, …), but `additionalModelRequestFields`, which
//! extends [`BedrockBuilder::additional_request_fields`].
//!
//! Bedrock reads an `s3://` image with the application's AWS credentials: in a user's message,
//! it fails the request before sending (as does any image URL the
//! [`UserUrls`](crate::UserUrls) policy refuses) unless [`BedrockBuilder::user_urls`] allows
//! it, with `UserUrls::new().allow_cloud_storage()`, or `.allow_host("<bucket>")` for one
//! bucket. The images of tools' results are the application's, and go as they are.
//!
//! # Authentication
//!
//! A Bedrock API key ([`BedrockBuilder::api_key`], sent as a bearer token), or, with the
//! feature `bedrock-sigv4`, AWS Signature Version 4 with IAM credentials
//! ([`BedrockBuilder::sigv4`]): static keys, or any credentials provider of the AWS SDK.
//!
//! # Reasoning
//!
//! A model that thinks (Claude with `thinking` in its request fields) returns reasoning
//! blocks, signed or redacted, and requires them back with its tool calls' results. They are
//! kept in the answer message's [`metadata`](hookchain_core::Message::metadata) under
//! [`METADATA_KEY`] and sent back from there; the reasoning's text is in the content as
//! [`Reasoning`](hookchain_core::message::ContentPart::Reasoning) parts without a signature,
//! so another provider (a routed fallback) never receives Bedrock's signatures as its own.
//!
//! # Answers
//!
//! `max_tokens` and `model_context_window_exceeded` stop for `MaxTokens` (a tool call cut off
//! is dropped, never run), `guardrail_intervened` and `content_filtered` for `ContentFilter`;
//! `malformed_model_output` and `malformed_tool_use` are `MalformedResponse` errors. An
//! exception in a stream (`throttlingException`, `modelStreamErrorException`, …) ends it with
//! an error classified as its HTTP form would be. Usage counts the cached tokens in the input
//! and apart (`cache_read_tokens`, `cache_write_tokens`). Prompt caching
//! ([`PromptCaching`](hookchain_core::builtin::PromptCaching)) sends `cachePoint` blocks,
//! at most 4, with Bedrock's default TTL.
//!
//! ```no_run
//! use hookchain::Agent;
//! use hookchain::providers::bedrock::BedrockModel;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = BedrockModel::builder("us.anthropic.claude-sonnet-4-20250514-v1:0")
//!     .region("us-west-2")
//!     .api_key(std::env::var("AWS_BEARER_TOKEN_BEDROCK")?)
//!     .build()?;
//! let agent = Agent::builder(model).build()?;
//! let output = agent.run("Say hello.").await?;
//! println!("{}", output.text().unwrap_or_default());
//! # Ok(())
//! # }
//! ```

mod client;
pub(crate) mod convert;
mod reasoning;
#[cfg(feature = "bedrock-sigv4")]
mod sigv4;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{BedrockBuilder, BedrockModel, DEFAULT_REGION};
pub use reasoning::METADATA_KEY;

/// AWS credentials for [`BedrockBuilder::sigv4`] (re-exported from `aws-credential-types`).
#[cfg(feature = "bedrock-sigv4")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock-sigv4")))]
pub use aws_credential_types::Credentials;
