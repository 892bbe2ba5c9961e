//! Google's Gemini API, `generateContent` (feature `gemini`).
//!
//! The system prompt (and any system message) is sent apart as `systemInstruction`; the
//! conversation as alternating `user` and `model` turns of parts: text, images (inline as
//! `inlineData`, by URL as `fileData`), `functionCall` parts for the model's calls and
//! `functionResponse` parts for their results, the results of one round in one `user` turn.
//! Tool schemas are mapped to Gemini's subset with
//! [`gemini_schema`](hookchain_core::tool::gemini_schema), and so is a response format's
//! schema (`responseSchema`, with `responseMimeType: application/json`). The API key goes in
//! the `x-goog-api-key` header.
//!
//! # Calls, their ids and thought signatures
//!
//! Gemini gives calls no ids: this client names them `call_1`, `call_2`, … in the order of the
//! answer (or takes the id Gemini sends, where it sends one). A result goes back as a
//! `functionResponse` with the call's name, `{"result": …}` (`{"error": …}` for a failure) as
//! its response: the JSON a tool returned as it is, anything else as text.
//!
//! Gemini signs the parts it writes (`thoughtSignature`, on function calls above all) and
//! requires the signatures back on the same parts. They are kept in the answer message's
//! [`metadata`](hookchain_core::Message::metadata) under [`METADATA_KEY`] and sent back with
//! the history; other providers ignore them. A streamed answer carries them as a
//! [`ModelEvent::Metadata`](hookchain_core::model::ModelEvent::Metadata) before its finish, so
//! an agent that streams its model's events keeps them too. A history that lost them (written
//! by hand, or by another provider) is sent without.
//!
//! # What a request keeps of each message
//!
//! - User messages: text and images. An image URL in cloud storage (`gs://`, which Gemini
//!   reads with the project's credentials, and the like), on a private network or of another
//!   scheme than `http`, `https` and `data` fails the request before sending, unless
//!   [`GeminiBuilder::user_urls`] allows it (see [`UserUrls`](crate::UserUrls)).
//! - Tool results: a `functionResponse`, then the images the tool returned as parts of the
//!   same turn; JSON parts, resource links and text as text, and embedded resources and audio
//!   as text too (a text resource's URI and text; audio and a binary resource as a
//!   placeholder naming its type and size)
//!   ([`Content::to_text_lossy`](hookchain_core::message::Content::to_text_lossy)).
//! - Model messages: text and calls, with their signatures. Thoughts are not sent back (their
//!   signatures carry them).
//!
//! # Answers
//!
//! `thought` parts are [`Reasoning`](hookchain_core::message::ContentPart::Reasoning), never
//! the answer's text (ask for them with [`GeminiBuilder::include_thoughts`]). `MAX_TOKENS`
//! stops for `MaxTokens` (a function call that was the last part is dropped, never run);
//! `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII` and a blocked prompt
//! (`promptFeedback.blockReason`) for `ContentFilter`; `MALFORMED_FUNCTION_CALL` and
//! `UNEXPECTED_TOOL_CALL` are `MalformedResponse` errors. Usage counts the cached tokens in the
//! input and apart as `cache_read_tokens`, the thoughts in the output.
//!
//! ```no_run
//! use hookchain::Agent;
//! use hookchain::providers::gemini::GeminiModel;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = GeminiModel::builder("gemini-2.5-flash")
//!     .api_key(std::env::var("GEMINI_API_KEY")?)
//!     .build()?;
//! let agent = Agent::builder(model).build()?;
//! let output = agent.run("Say hello.").await?;
//! println!("{}", output.text().unwrap_or_default());
//! # Ok(())
//! # }
//! ```

mod client;
pub(crate) mod convert;
mod signatures;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{DEFAULT_BASE_URL, GeminiBuilder, GeminiModel};
pub use signatures::METADATA_KEY;
