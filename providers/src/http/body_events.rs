//! A streamed answer's body as events, whatever its framing: server-sent events, or AWS's
//! binary event stream, both read as [`Event`]s so that a provider's decoder reads either.

use std::collections::VecDeque;
use std::fmt;

use hookchain_core::ModelError;

use super::HttpClient;
#[cfg(feature = "bedrock")]
use super::aws_event_stream::EventStreamParser;
use super::client::{request_id, with_request_id};
use super::error::malformed;
use super::limits::Limits;
use super::sse::{Event, SseParser};

/// How a streamed answer's body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events (`text/event-stream`): every provider but Bedrock.
    Sse,
    /// AWS's binary event stream (`application/vnd.amazon.eventstream`): Bedrock.
    #[cfg(feature = "bedrock")]
    AwsEventStream,
}

/// Cuts a body into events as its framing says.
#[derive(Debug)]
enum Framer {
    Sse(SseParser),
    #[cfg(feature = "bedrock")]
    AwsEventStream(EventStreamParser),
}

impl Framer {
    fn new(framing: Framing, limits: &Limits) -> Self {
        match framing {
            Framing::Sse => Framer::Sse(SseParser::new(limits)),
            // A message is an event: the event limit bounds it.
            #[cfg(feature = "bedrock")]
            Framing::AwsEventStream => Framer::AwsEventStream(EventStreamParser::new(limits.event)),
        }
    }

    /// Reads the next piece of the body; an error says, in words, why the body is not events.
    fn feed(&mut self, piece: &[u8], out: &mut VecDeque<Event>) -> Result<(), String> {
        match self {
            Framer::Sse(parser) => parser.feed(piece, out).map_err(|error| error.to_string()),
            #[cfg(feature = "bedrock")]
            Framer::AwsEventStream(parser) => {
                parser.feed(piece, out).map_err(|error| error.to_string())
            }
        }
    }
}

/// The events of a response body (server-sent events, or AWS's event stream), read piece by
/// piece within the client's limits and idle timeout.
pub(crate) struct BodyEvents {
    response: reqwest::Response,
    http: HttpClient,
    framer: Framer,
    events: VecDeque<Event>,
    /// The body ended, or failed.
    ended: bool,
    /// The id the provider gave the request.
    request_id: Option<String>,
}

impl fmt::Debug for BodyEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyEvents")
            .field("http", &self.http)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl BodyEvents {
    /// Decodes the body of `response`, which `http` opened, cut into events as `framing` says.
    pub(crate) fn new(response: reqwest::Response, http: HttpClient, framing: Framing) -> Self {
        Self {
            request_id: request_id(response.headers()),
            response,
            framer: Framer::new(framing, http.limits()),
            http,
            events: VecDeque::new(),
            ended: false,
        }
    }

    /// `error`, a failure of this stream, with the request's id.
    pub(crate) fn identify(&self, error: ModelError) -> ModelError {
        with_request_id(error, self.request_id.clone())
    }

    /// The next event; `None` at the end of the body (whether or not the answer was complete:
    /// the provider decides that). After an error, nothing more.
    pub(crate) async fn next(&mut self) -> Option<Result<Event, ModelError>> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(Ok(event));
            }
            if self.ended {
                return None;
            }
            match self.http.next_piece(&mut self.response).await {
                Ok(Some(piece)) => {
                    if let Err(error) = self.framer.feed(&piece, &mut self.events) {
                        self.ended = true;
                        self.events.clear();
                        return Some(Err(malformed(self.http.provider(), &error)));
                    }
                }
                // An event not closed by a blank line is dropped, as the format says.
                Ok(None) => self.ended = true,
                Err(error) => {
                    self.ended = true;
                    return Some(Err(error));
                }
            }
        }
    }
}
