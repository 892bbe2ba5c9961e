//! What both providers share: the HTTP client, error classification and the SSE decoder.

mod client;
#[cfg(test)]
pub(crate) mod corrupt;
mod error;
mod limits;
mod protocol;
mod setters;
mod sse;
mod stream;

pub use client::BuildError;
pub use error::ApiError;

pub(crate) use client::{HttpClient, HttpConfig};
pub(crate) use error::{classify_api_error, malformed};
pub(crate) use protocol::{Protocol, ProviderClient};
pub(crate) use setters::http_setters;
#[cfg(test)]
pub(crate) use sse::parse_transcript;
pub(crate) use sse::{Event, SseStream};
pub(crate) use stream::{Decoder, EventStream, events};
