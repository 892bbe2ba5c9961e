//! Server-sent events of a streamed answer, with failures classified.

use std::fmt;
use std::pin::Pin;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use hookchain_core::ModelError;

use super::error::{classify_transport, malformed};

type Events = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// The SSE events of a response body, decoded by `eventsource-stream`.
pub(crate) struct SseStream {
    events: Events,
    provider: &'static str,
}

impl fmt::Debug for SseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseStream")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

impl SseStream {
    /// Decodes the body of `response` as server-sent events.
    pub(crate) fn new(response: reqwest::Response, provider: &'static str) -> Self {
        Self {
            events: Box::pin(response.bytes_stream().eventsource()),
            provider,
        }
    }

    /// The next event; `None` at the end of the body (whether or not the answer was complete:
    /// the provider decides that).
    pub(crate) async fn next(&mut self) -> Option<Result<Event, ModelError>> {
        let event = self.events.next().await?;
        Some(event.map_err(|error| {
            match error {
                EventStreamError::Transport(error) => classify_transport(self.provider, error),
                EventStreamError::Utf8(error) => {
                    malformed(self.provider, "the stream is not UTF-8").with_source(error)
                }
                EventStreamError::Parser(error) => {
                    malformed(self.provider, "the stream is not valid server-sent events")
                        .with_source(error.to_string())
                }
            }
        }))
    }
}

/// The events of an SSE transcript, parsed the simple way (one `event:` and one `data:` line
/// per event, as providers send them): lets decoders be tested without a server.
#[cfg(test)]
pub(crate) fn parse_transcript(text: &str) -> Vec<Event> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = Event {
                event: "message".to_owned(),
                data: String::new(),
                id: String::new(),
                retry: None,
            };
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event.event = name.to_owned();
                } else if let Some(data) = line.strip_prefix("data: ") {
                    event.data = data.to_owned();
                }
            }
            event
        })
        .collect()
}
