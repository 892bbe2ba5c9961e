//! Anthropic's Messages API (feature `anthropic`).
//!
//! The system prompt (and any system message) is sent apart as `system`; the conversation as
//! alternating user and assistant turns of content blocks: text, `tool_use` for the model's
//! calls, `tool_result` (with `is_error`) for their results, the results of one round merged
//! into one user turn. `max_tokens` is required by the API: the request's setting, or the
//! builder's default. Usage counts the cached input tokens in the input, and apart as
//! `cache_read_tokens` / `cache_write_tokens`.
//!
//! # What a request keeps of each message
//!
//! - User messages: text and image blocks (an image by URL or inline, base64). An image URL
//!   in cloud storage, on a private network or of another scheme than `http`, `https` and
//!   `data` fails the request before sending, unless [`AnthropicBuilder::user_urls`] allows it
//!   (see [`UserUrls`](crate::UserUrls)).
//! - Tool results: a `tool_result` whose content is the string it always was when the result
//!   is text only, and otherwise blocks: text, images (by URL or base64) as image blocks, a
//!   JSON part as a text block of compact JSON, a resource link as a text block
//!   (`Resource: <title, else name> <<uri>>`), an embedded resource as a text block (a text
//!   resource's URI then its text; a binary resource as a placeholder,
//!   `[resource: <uri> (<type>, <size> bytes)]`), audio as a placeholder
//!   (`[audio: audio/wav, <size> bytes]`): the model is told what was returned but does not
//!   hear it. Each as
//!   [`Content::to_text_lossy`](hookchain_core::message::Content::to_text_lossy) writes it.
//!   Nothing a tool returns is dropped; empty text is left out (Anthropic refuses it).
//! - Assistant messages: text, tool calls, and thinking that carries Anthropic's signature
//!   (signed or redacted); another provider's unsigned reasoning is left out.
//!
//! ```no_run
//! use hookchain::Agent;
//! use hookchain::providers::anthropic::AnthropicModel;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = AnthropicModel::builder("claude-sonnet-4-5")
//!     .api_key(std::env::var("ANTHROPIC_API_KEY")?)
//!     .build()?;
//! let agent = Agent::builder(model).build()?;
//! let output = agent.run("Say hello.").await?;
//! println!("{}", output.text().unwrap_or_default());
//! # Ok(())
//! # }
//! ```

mod client;
pub(crate) mod convert;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{
    AnthropicBuilder, AnthropicModel, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_VERSION,
};
