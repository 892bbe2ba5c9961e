//! What the providers share: the HTTP client, error classification, and the decoders of
//! streamed bodies (server-sent events, AWS's event stream).

#[cfg(feature = "bedrock")]
mod aws_event_stream;
mod body_events;
mod client;
#[cfg(test)]
pub(crate) mod corrupt;
mod delay_in_message;
mod error;
mod error_codes;
mod limits;
mod protocol;
mod setters;
mod sse;
mod stream;

pub use client::BuildError;
pub use error::ApiError;

pub(crate) use body_events::{BodyEvents, Framing};
#[cfg(feature = "bedrock-sigv4")]
pub(crate) use client::SignRequest;
pub(crate) use client::{HttpClient, HttpConfig};
pub(crate) use error::{classify_api_error, malformed};
pub(crate) use protocol::Protocol;
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub(crate) use protocol::ProviderClient;
#[cfg(any(feature = "gemini", feature = "bedrock"))]
pub(crate) use protocol::SplitEndpoints;
pub(crate) use setters::http_setters;
pub(crate) use sse::Event;
#[cfg(test)]
pub(crate) use sse::parse_transcript;
pub(crate) use stream::{Decoder, EventStream, events};
