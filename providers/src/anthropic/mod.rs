//! Anthropic's Messages API (feature `anthropic`).
//!
//! The system prompt (and any system message) is sent apart as `system`; the conversation as
//! alternating user and assistant turns of content blocks: text, `tool_use` for the model's
//! calls, `tool_result` (with `is_error`) for their results, the results of one round merged
//! into one user turn. `max_tokens` is required by the API: the request's setting, or the
//! builder's default. Usage counts the cached input tokens in the input, and apart as
//! `cache_read_tokens` / `cache_write_tokens`.
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
mod convert;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{
    AnthropicBuilder, AnthropicModel, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_VERSION,
};
