//! Model providers for [hookchain](https://docs.rs/hookchain): real models behind the
//! [`Model`](hookchain_core::Model) trait.
//!
//! - `openai` (feature `openai`): the OpenAI-compatible Chat Completions API, spoken by
//!   OpenAI, Azure-style endpoints, Ollama, vLLM, llama.cpp's server, Groq, DeepSeek,
//!   OpenRouter, Mistral and more; the server is chosen by its base URL.
//! - `responses` (feature `openai`): OpenAI's Responses API (`/responses`), with reasoning
//!   models' encrypted reasoning kept across turns and nothing stored at OpenAI by default.
//! - `anthropic` (feature `anthropic`): Anthropic's Messages API.
//! - `gemini` (feature `gemini`): Google's Gemini API (`generateContent`).
//! - `bedrock` (feature `bedrock`): Amazon Bedrock's Converse API, with a Bedrock API key, or
//!   with AWS SigV4 signing (feature `bedrock-sigv4`).
//!
//! Every feature is off by default. Through the facade, enable `hookchain`'s features of the
//! same names and use `hookchain::providers::openai::…`.
//!
//! # Rules every provider follows
//!
//! - **Errors are classified** as a [`ModelErrorKind`](hookchain_core::ModelErrorKind): HTTP 429
//!   is `RateLimited` with the `Retry-After` delay, 5xx and Anthropic's 529 are `Overloaded`,
//!   401/403 `Authentication`, a prompt too long for the model `ContextLengthExceeded`, other 4xx
//!   `InvalidRequest`, client timeouts `Timeout`, refused or broken connections `Connection`.
//!   Where the provider's own code says more than its status, the code decides: OpenAI's
//!   `invalid_prompt` (a prompt its usage policy flagged) is `ContentFiltered`, Gemini's
//!   `API_KEY_INVALID` (an `ErrorInfo` reason, sent with a 400) `Authentication`. A rate limit
//!   that gives no delay in a header or a field takes the one its message names ("Please try
//!   again in 2.6s.", "in 1m3s"), as OpenAI's stream errors state it.
//!   The provider's own error text is kept as the error's [`source`](std::error::Error::source).
//! - **A malformed or truncated answer is an error** (`MalformedResponse`): undecodable JSON, no
//!   choices, a stream that ends before its finish or inside a tool call. Never a panic, never
//!   a silent empty answer.
//! - **What is read is bounded, and how long it takes**: an unstreamed answer up to 32 MiB, the
//!   first 64 KiB of an error body, stream lines and events up to 8 MiB each, read piece by
//!   piece and never buffered past the limit (the builders' `max_*_size` setters change them).
//!   An unstreamed call may take 600 s in all, and the server may stay silent 300 s (before
//!   the answer, or between two pieces of a stream; `timeout` and `read_timeout`, `None` for
//!   no limit). Past a size limit the call fails with `MalformedResponse` naming the limit (not
//!   retryable: the same answer would come again), past a timeout with `Timeout` (retryable).
//! - **Wire types are lenient**: missing optional fields take defaults and unknown fields are
//!   ignored, so that the many servers speaking "the same" API all parse.
//! - **The API key never appears in an error message** or a `Debug` output, nor in a trace;
//!   neither do the query and credentials of the base URL (a gateway's `?key=…`), which are
//!   shown as `[redacted]`. A base URL's query is sent after the path:
//!   `https://gw.example/v1?key=…` calls `https://gw.example/v1/chat/completions?key=…`.
//! - **Errors carry the provider's request id** (`request-id`, `x-request-id`), if it sent one:
//!   [`ModelError::request_id`](hookchain_core::ModelError::request_id), and the end of the
//!   error's message.
//! - **A refusal is an answer**, streamed or not: its text is the message's, and the stop
//!   reason is `Refusal`. A tool call cut off by the token limit (its arguments do not parse)
//!   is dropped, never run: the answer stops for `MaxTokens`.
//! - **URLs in users' messages are checked before anything is sent**: an image URL that is
//!   cloud storage (`s3://`, `gs://`, …), on a private network (`http://169.254.169.254/`,
//!   `http://10.…`, `localhost`) or of another scheme than `http`, `https` and `data` fails the
//!   request with `InvalidRequest`, unless the application allows it with the builder's
//!   `user_urls` (see `UserUrls`): a served agent's users cannot make the provider fetch what
//!   only the server may reach.
//! - Streaming and unstreamed calls return the same [`ModelResponse`](hookchain_core::ModelResponse):
//!   a streamed answer is assembled by [`ResponseAssembler`](hookchain_core::model::ResponseAssembler).

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The code the providers share is built with any of them (the feature `http` alone only brings
// the dependencies: without a provider, the code would be dead).
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
mod http;

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
pub use http::{ApiError, BuildError};

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
mod system_text;

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
mod user_urls;

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
pub use user_urls::UserUrls;

#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
pub mod anthropic;
#[cfg(feature = "bedrock")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
pub mod bedrock;
#[cfg(feature = "gemini")]
#[cfg_attr(docsrs, doc(cfg(feature = "gemini")))]
pub mod gemini;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub mod openai;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub mod responses;

#[cfg(all(
    test,
    any(
        feature = "openai",
        feature = "anthropic",
        feature = "gemini",
        feature = "bedrock"
    )
))]
mod test_requests;

#[cfg(all(
    test,
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
mod cross_provider_tests;
