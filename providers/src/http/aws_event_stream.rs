//! AWS's binary event stream (`application/vnd.amazon.eventstream`, Bedrock's `ConverseStream`):
//! a parser bounded in what it holds, whose messages come out as the same [`Event`]s as
//! server-sent events, so that a provider's decoder reads both alike.
//!
//! A message is a 12-byte prelude (its total length, its headers' length, the CRC-32 of those
//! eight bytes), its headers, its payload, and the CRC-32 of all before it. Headers are typed
//! name–value pairs; `:message-type` says whether the message is an `event` (then
//! `:event-type` names it), an `exception` (`:exception-type`) or an `error` (`:error-code`,
//! `:error-message`).

use std::collections::VecDeque;
use std::fmt;

use super::Event;
use super::limits::size;

/// The prelude: total length, headers' length, their CRC.
const PRELUDE: usize = 12;
/// The prelude and the message's CRC: the smallest message.
const OVERHEAD: usize = PRELUDE + 4;

/// Why a body is not an event stream we read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// A message is larger than the limit (or says so in its prelude).
    TooLarge(usize),
    /// A prelude's or a message's checksum does not match: the body is corrupt.
    Checksum,
    /// A message's lengths or headers do not add up.
    Malformed(&'static str),
    /// A message's payload or a header's text is not UTF-8.
    NotUtf8,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge(limit) => write!(
                f,
                "a message of the event stream is larger than the limit of {}",
                size(*limit)
            ),
            FrameError::Checksum => f.write_str("a message of the event stream is corrupt"),
            FrameError::Malformed(what) => {
                write!(f, "a message of the event stream is malformed ({what})")
            }
            FrameError::NotUtf8 => f.write_str("a message of the event stream is not UTF-8"),
        }
    }
}

/// Splits a body, fed in pieces as they arrive, into messages. A message's bytes are copied
/// once, into a buffer that never holds more than one message beyond the piece being read, and
/// never a message over the limit: its prelude, checked first, announces its length.
#[derive(Debug)]
pub(crate) struct EventStreamParser {
    max_message: usize,
    /// Bytes of the message being read (and of those after it, from the same piece).
    buffer: Vec<u8>,
}

impl EventStreamParser {
    /// A parser refusing messages over `max_message` bytes of headers and payload.
    pub(crate) fn new(max_message: usize) -> Self {
        Self {
            max_message,
            buffer: Vec::new(),
        }
    }

    /// Reads the next piece of the body, appending the messages it completes to `out`.
    pub(crate) fn feed(
        &mut self,
        piece: &[u8],
        out: &mut VecDeque<Event>,
    ) -> Result<(), FrameError> {
        self.buffer.extend_from_slice(piece);
        let mut at = 0;
        let read = loop {
            match self.message_at(at) {
                Ok(Some((event, length))) => {
                    out.push_back(event);
                    at += length;
                }
                Ok(None) => break Ok(()),
                Err(error) => break Err(error),
            }
        };
        self.buffer.drain(..at);
        read
    }

    /// The message starting at `at` and its length, `None` while it is incomplete.
    fn message_at(&self, at: usize) -> Result<Option<(Event, usize)>, FrameError> {
        let bytes = &self.buffer[at..];
        let Some(prelude) = bytes.get(..PRELUDE) else {
            return Ok(None);
        };
        let total = be32(&prelude[0..4]) as usize;
        let headers = be32(&prelude[4..8]) as usize;
        if crc32fast::hash(&prelude[..8]) != be32(&prelude[8..12]) {
            return Err(FrameError::Checksum);
        }
        if total.saturating_sub(OVERHEAD) > self.max_message {
            return Err(FrameError::TooLarge(self.max_message));
        }
        if total < OVERHEAD || headers > total - OVERHEAD {
            return Err(FrameError::Malformed("its lengths do not add up"));
        }
        let Some(message) = bytes.get(..total) else {
            return Ok(None);
        };
        let (body, crc) = message.split_at(total - 4);
        if crc32fast::hash(body) != be32(crc) {
            return Err(FrameError::Checksum);
        }
        let (header_bytes, payload) = body[PRELUDE..].split_at(headers);
        let event = event(&read_headers(header_bytes)?, payload)?;
        Ok(Some((event, total)))
    }
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The headers of a message; of their values, only text is kept (every header a stream's
/// reader needs is text), the others are skipped by their size.
fn read_headers(mut bytes: &[u8]) -> Result<Vec<(&str, &str)>, FrameError> {
    let truncated = FrameError::Malformed("a header is cut off");
    let mut headers = Vec::new();
    while let Some((&name_length, rest)) = bytes.split_first() {
        let (name, rest) = split(rest, usize::from(name_length)).ok_or(truncated.clone())?;
        let (&kind, rest) = rest.split_first().ok_or(truncated.clone())?;
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            _ => return Err(FrameError::Malformed("a header has an unknown type")),
        };
        let (value, rest) = match fixed {
            Some(length) => split(rest, length).ok_or(truncated.clone())?,
            None => {
                let (length, rest) = split(rest, 2).ok_or(truncated.clone())?;
                split(
                    rest,
                    usize::from(u16::from_be_bytes([length[0], length[1]])),
                )
                .ok_or(truncated.clone())?
            }
        };
        if kind == 7 {
            let name = std::str::from_utf8(name).map_err(|_| FrameError::NotUtf8)?;
            let value = std::str::from_utf8(value).map_err(|_| FrameError::NotUtf8)?;
            headers.push((name, value));
        }
        bytes = rest;
    }
    Ok(headers)
}

fn split(bytes: &[u8], at: usize) -> Option<(&[u8], &[u8])> {
    (at <= bytes.len()).then(|| bytes.split_at(at))
}

/// A message as an [`Event`]: an event by its `:event-type` with its payload as data; an
/// exception as `exception:<its type>` with its payload; an error as `error:<its code>` with
/// its message.
fn event(headers: &[(&str, &str)], payload: &[u8]) -> Result<Event, FrameError> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| *value)
    };
    let payload = || {
        std::str::from_utf8(payload)
            .map(str::to_owned)
            .map_err(|_| FrameError::NotUtf8)
    };
    let missing = FrameError::Malformed("a header it needs is missing");
    Ok(match header(":message-type").unwrap_or("event") {
        "event" => Event {
            event: header(":event-type").ok_or(missing)?.to_owned(),
            data: payload()?,
        },
        "exception" => Event {
            event: format!("exception:{}", header(":exception-type").ok_or(missing)?),
            data: payload()?,
        },
        "error" => Event {
            event: format!("error:{}", header(":error-code").ok_or(missing)?),
            data: header(":error-message").unwrap_or("").to_owned(),
        },
        _ => return Err(FrameError::Malformed("its message type is unknown")),
    })
}

/// Writes one message with text headers, as AWS does: for tests and transcripts.
#[cfg(test)]
pub(crate) fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut header_bytes = Vec::new();
    for (name, value) in headers {
        header_bytes.push(u8::try_from(name.len()).unwrap());
        header_bytes.extend_from_slice(name.as_bytes());
        header_bytes.push(7);
        header_bytes.extend_from_slice(&u16::try_from(value.len()).unwrap().to_be_bytes());
        header_bytes.extend_from_slice(value.as_bytes());
    }
    let total = OVERHEAD + header_bytes.len() + payload.len();
    let mut message = Vec::with_capacity(total);
    message.extend_from_slice(&u32::try_from(total).unwrap().to_be_bytes());
    message.extend_from_slice(&u32::try_from(header_bytes.len()).unwrap().to_be_bytes());
    message.extend_from_slice(&crc32fast::hash(&message).to_be_bytes());
    message.extend_from_slice(&header_bytes);
    message.extend_from_slice(payload);
    message.extend_from_slice(&crc32fast::hash(&message).to_be_bytes());
    message
}

#[cfg(test)]
mod tests;
