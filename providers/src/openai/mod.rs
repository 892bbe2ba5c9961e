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
mod convert;
mod stream;
mod wire;

#[cfg(test)]
mod tests;

pub use client::{DEFAULT_BASE_URL, OpenAiBuilder, OpenAiModel};
