//! The OpenAI-compatible Chat Completions API (feature `openai`).
//!
//! One client for every server that speaks it; the server is chosen by its base URL:
//!
//! | Server | Base URL | API key |
//! |---|---|---|
//! | OpenAI | `https://api.openai.com/v1` (the default) | yes |
//! | Ollama | `http://localhost:11434/v1` | no |
//! | vLLM | `http://localhost:8000/v1` | if started with `--api-key` |
//! | llama.cpp server | `http://localhost:8080/v1` | if started with `--api-key` |
//! | Groq | `https://api.groq.com/openai/v1` | yes |
//! | Azure-style | `https://<resource>.openai.azure.com/openai/v1` | as `.header("api-key", ..)` |
//!
//! Server quirks it survives: a first tool-call chunk without `arguments` (vLLM), arguments
//! streamed token by token (llama.cpp), reasoning in `reasoning_content` or `reasoning`
//! (DeepSeek, vLLM, llama.cpp, Ollama), no usage chunk (then usage is zero), a body that ends
//! after the finish without `[DONE]`. llama.cpp treats a named `tool_choice` as `auto`: the
//! model may then call another tool, or none.
//!
//! # What a request keeps of each message
//!
//! - User messages: text and images (as `image_url` parts; an inline image as a `data:` URL).
//!   A JSON part, a resource link, an embedded resource or audio is sent as a text part, as
//!   [`Content::to_text_lossy`](hookchain_core::message::Content::to_text_lossy) writes it.
//!   An image URL in cloud storage, on a private network (`http://169.254.169.254/…`,
//!   `http://10.…`, `localhost`) or of another scheme than `http`, `https` and `data` fails the
//!   request before sending, as a self-hosted server would fetch it from inside the network,
//!   unless [`OpenAiBuilder::user_urls`] allows it (see [`UserUrls`](crate::UserUrls)).
//! - Tool results: a `tool` message takes text only, so the whole result is one string,
//!   written by `Content::to_text_lossy`: text as it is, JSON as compact JSON, a resource link
//!   as `Resource: <name> <<uri>>`, a text resource as its URI then its text, and an **image,
//!   audio or a binary resource as a placeholder** (`[image: image/png]`,
//!   `[audio: audio/wav, <size> bytes]`): the model is told what was returned but does not see
//!   or hear it. A result that is one piece
//!   of text is sent as that string, as it always was.
//! - Assistant messages: text and tool calls; reasoning is not sent back.
//!
//! ```no_run
//! use hookchain::Agent;
//! use hookchain::providers::openai::OpenAiModel;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAiModel::builder("llama3.2")
//!     .base_url("http://localhost:11434/v1")
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

pub use client::{DEFAULT_BASE_URL, OpenAiBuilder, OpenAiModel};
