//! OpenAI's Responses API, `POST /responses` (feature `openai`).
//!
//! The system prompt (and any system message) is sent as `instructions`; the conversation as
//! input items: `message` items for the user's words (`input_text`, `input_image`) and the
//! model's (`output_text`), a `function_call` item per call the model made and a
//! `function_call_output` item per result. Tools are `function` tools with `strict: false`
//! (a tool's schema need not be a strict-mode one); a response format is
//! `text.format` (`json_schema`). The API key goes as a bearer token.
//!
//! # Nothing stored, reasoning kept
//!
//! Requests say `store: false` unless [`ResponsesBuilder::store`] says otherwise: OpenAI keeps
//! no copy of the conversation. A reasoning model's reasoning is then asked back encrypted
//! (`include: ["reasoning.encrypted_content"]`, for a model that reasons: see
//! [`ResponsesBuilder::reasoning`]) and every `reasoning` item of an answer (its id, summary and
//! encrypted reasoning) is kept in the answer message's
//! [`metadata`](hookchain_core::Message::metadata) under [`METADATA_KEY`], then sent back
//! before that message's text and calls in later requests, as the API requires of a reasoning
//! model between a call and its result. Other providers ignore them. The summary (ask for one
//! with [`ResponsesBuilder::reasoning_summary`]) is also the message's
//! [`Reasoning`](hookchain_core::message::ContentPart::Reasoning), without a signature.
//!
//! The reasoning items reach the answer however it is read: [`Model::invoke`]
//! (streamed with [`ResponsesBuilder::streaming`] or not), or [`Model::stream`], whose events
//! carry them as a [`ModelEvent::Metadata`](hookchain_core::model::ModelEvent::Metadata)
//! before the finish (so an agent that streams its model's events keeps them too).
//!
//! [`Model::invoke`]: hookchain_core::Model::invoke
//! [`Model::stream`]: hookchain_core::Model::stream
//!
//! # What a request keeps of each message
//!
//! - User messages: text and images (`input_image`, by URL or as a `data:` URL); JSON parts,
//!   resource links, embedded resources and audio as text. An image URL in cloud storage, on
//!   a private network or of another scheme than `http`, `https` and `data` fails the request
//!   before sending, unless [`ResponsesBuilder::user_urls`] allows it (see
//!   [`UserUrls`](crate::UserUrls)).
//! - Tool results: a `function_call_output` whose `output` is one string, written by
//!   [`Content::to_text_lossy`](hookchain_core::message::Content::to_text_lossy): an **image,
//!   audio or a binary resource as a placeholder** (`[image: image/png]`,
//!   `[audio: audio/wav, <size> bytes]`), a text resource as its URI then its text. The API
//!   now also takes parts there, but the servers that speak the Responses API besides
//!   OpenAI's (vLLM, Ollama, gateways) take a string, so this client sends one, as the Chat
//!   Completions client does.
//! - Assistant messages: their reasoning items, text and calls; reasoning parts are not sent
//!   as text (their items carry them).
//! - Stop sequences (the settings' `stop`): the Responses API has none; they are not sent.
//!
//! # Answers
//!
//! `output_text` is the text; a `refusal` is the text too, and stops for `Refusal`. An
//! `incomplete` answer stops for `ContentFilter` if a filter cut it, else for `MaxTokens`
//! (a function call it cut is dropped, never run). A `failed` response, or an `error` event
//! (its error nested, as OpenAI sends it, or flat), is the error it reports, classified by its
//! `code`: `rate_limit_exceeded` and `too_many_requests` are `RateLimited`, with the delay
//! its message names ("Please try again in 2.6s"), `server_error` is `Overloaded`, a prompt
//! flagged by the usage policy (`invalid_prompt`) `ContentFiltered`. Usage counts the cached tokens in the input and apart
//! as `cache_read_tokens`, the reasoning in the output; an answer without usage has unknown
//! usage. The built-in tools' items (web search, file search, …) are ignored.
//!
//! ```no_run
//! use hookchain::Agent;
//! use hookchain::providers::responses::ResponsesModel;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ResponsesModel::builder("gpt-5-mini")
//!     .api_key(std::env::var("OPENAI_API_KEY")?)
//!     .reasoning_effort("low")
//!     .build()?;
//! let agent = Agent::builder(model).build()?;
//! let output = agent.run("Say hello.").await?;
//! println!("{}", output.text().unwrap_or_default());
//! # Ok(())
//! # }
//! ```

mod client;
pub(crate) mod convert;
mod reasoning_items;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{DEFAULT_BASE_URL, ResponsesBuilder, ResponsesModel};
pub use reasoning_items::METADATA_KEY;
