//! Server-sent events of a streamed answer: a parser linear in the body's length and bounded in
//! what it holds.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::limits::{Limits, push_capped, push_str_capped, size};

/// One server-sent event: its type (`message` unless the server named one) and its data (the
/// data lines joined by `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) event: String,
    pub(crate) data: String,
}

/// Why a body is not a stream of events we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SseError {
    /// A line is longer than the limit.
    LineTooLong(usize),
    /// An event's data is larger than the limit.
    EventTooLarge(usize),
    /// A line is not UTF-8.
    NotUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::LineTooLong(limit) => write!(
                f,
                "a line of the stream is longer than the limit of {}",
                size(*limit)
            ),
            SseError::EventTooLarge(limit) => write!(
                f,
                "an event of the stream is larger than the limit of {}",
                size(*limit)
            ),
            SseError::NotUtf8 => f.write_str("the stream is not UTF-8"),
        }
    }
}

/// Splits a body, fed in pieces as they arrive, into events (the WHATWG `text/event-stream`
/// format: lines ended by `\n`, `\r\n` or `\r`; `event:` and `data:` fields; comments; a blank
/// line ends an event; an event cut by the end of the body is dropped).
///
/// Each byte is looked at once: a line's start waiting for its end is kept apart and never
/// scanned again, so a body of n bytes costs O(n) however it is cut. Nothing it holds passes
/// the limits: a line waiting for its end, and the data of an event waiting for its blank line.
#[derive(Debug)]
pub(crate) struct SseParser {
    max_line: usize,
    max_event: usize,
    /// The start of a line whose end has not arrived; it holds no line end.
    line: Vec<u8>,
    /// The last piece ended with `\r`: a `\n` opening the next piece ends no other line.
    after_cr: bool,
    /// No line was read yet (a byte order mark may open the body).
    first_line: bool,
    /// The event being read.
    name: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub(crate) fn new(limits: &Limits) -> Self {
        Self {
            max_line: limits.line,
            max_event: limits.event,
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            name: String::new(),
            data: String::new(),
            has_data: false,
        }
    }

    /// Reads the next piece of the body, appending the events it completes to `out`.
    pub(crate) fn feed(&mut self, piece: &[u8], out: &mut VecDeque<Event>) -> Result<(), SseError> {
        if piece.is_empty() {
            return Ok(());
        }
        let mut rest = piece;
        if std::mem::take(&mut self.after_cr)
            && let Some(tail) = rest.strip_prefix(b"\n")
        {
            rest = tail;
        }
        while let Some(at) = memchr::memchr2(b'\n', b'\r', rest) {
            let (end, mut tail) = (&rest[..at], &rest[at + 1..]);
            if rest[at] == b'\r' {
                match tail.strip_prefix(b"\n") {
                    Some(after) => tail = after,
                    None => self.after_cr = tail.is_empty(),
                }
            }
            if self.line.is_empty() {
                self.check_line(end.len())?;
                self.line_ended(end, out)?;
            } else {
                if !push_capped(&mut self.line, end, self.max_line) {
                    return Err(SseError::LineTooLong(self.max_line));
                }
                let line = std::mem::take(&mut self.line);
                let read = self.line_ended(&line, out);
                self.line = line;
                self.line.clear();
                read?;
            }
            rest = tail;
        }
        if !push_capped(&mut self.line, rest, self.max_line) {
            return Err(SseError::LineTooLong(self.max_line));
        }
        Ok(())
    }

    fn check_line(&self, len: usize) -> Result<(), SseError> {
        if len > self.max_line {
            return Err(SseError::LineTooLong(self.max_line));
        }
        Ok(())
    }

    /// One whole line, without its end.
    fn line_ended(&mut self, line: &[u8], out: &mut VecDeque<Event>) -> Result<(), SseError> {
        let mut line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            if std::mem::take(&mut self.has_data) {
                let name = std::mem::take(&mut self.name);
                out.push_back(Event {
                    event: if name.is_empty() {
                        "message".to_owned()
                    } else {
                        name
                    },
                    data: std::mem::take(&mut self.data),
                });
            } else {
                self.name.clear();
            }
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            // A comment (an empty field name): keep-alives.
            "" => {}
            "event" => {
                self.name.clear();
                self.name.push_str(value);
            }
            "data" => {
                let separator = if self.has_data { "\n" } else { "" };
                if !(push_str_capped(&mut self.data, separator, self.max_event)
                    && push_str_capped(&mut self.data, value, self.max_event))
                {
                    return Err(SseError::EventTooLarge(self.max_event));
                }
                self.has_data = true;
            }
            // `id`, `retry` and unknown fields: no provider's answer needs them.
            _ => {}
        }
        Ok(())
    }
}

/// A duration as people write it in an error: `300 s`, `1.5 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
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

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;

    fn limits(line: usize, event: usize) -> Limits {
        Limits {
            line,
            event,
            ..Limits::default()
        }
    }

    fn event(name: &str, data: &str) -> Event {
        Event {
            event: name.to_owned(),
            data: data.to_owned(),
        }
    }

    /// Feeds `body` cut at `cuts`, returning the events or the first error.
    fn parse(body: &[u8], cuts: &[usize], limits: &Limits) -> Result<Vec<Event>, SseError> {
        let mut parser = SseParser::new(limits);
        let mut out = VecDeque::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&body.len()]) {
            parser.feed(&body[from..cut], &mut out)?;
            from = cut;
        }
        Ok(out.into())
    }

    const BODY: &str = "\u{feff}: keep-alive\r\nevent: ping\r\ndata: {\"a\":1}\r\n\r\n\
        data:first\rdata: second\r\rid: 7\nretry: 10\nfield-without-colon\nevent: only-a-name\n\n\
        data\n\nevent: message_stop\ndata: {\"é\":\"ü\"}\n\ndata: cut by the end";

    fn expected() -> Vec<Event> {
        vec![
            event("ping", "{\"a\":1}"),
            event("message", "first\nsecond"),
            event("message", ""),
            event("message_stop", "{\"é\":\"ü\"}"),
        ]
    }

    #[test]
    fn every_line_end_field_and_comment_cut_anywhere_parse_the_same() {
        let body = BODY.as_bytes();
        let limits = Limits::default();
        assert_eq!(parse(body, &[], &limits).unwrap(), expected());
        for cut in 0..=body.len() {
            assert_eq!(
                parse(body, &[cut], &limits).unwrap(),
                expected(),
                "cut {cut}"
            );
        }
        let every_byte: Vec<usize> = (1..body.len()).collect();
        assert_eq!(parse(body, &every_byte, &limits).unwrap(), expected());
    }

    #[test]
    fn a_line_or_an_event_past_its_limit_is_an_error_however_it_arrives() {
        let long_line = format!("data: {}\n\n", "x".repeat(100));
        for cuts in [vec![], vec![3], (1..long_line.len()).collect()] {
            assert_eq!(
                parse(long_line.as_bytes(), &cuts, &limits(99, 1000)),
                Err(SseError::LineTooLong(99))
            );
            assert!(parse(long_line.as_bytes(), &cuts, &limits(106, 1000)).is_ok());
        }
        // An endless line is refused once the limit is passed, never buffered past it.
        let mut parser = SseParser::new(&limits(1000, 1000));
        let mut out = VecDeque::new();
        let refused = (0..).find(|_| parser.feed(&[b'x'; 64], &mut out).is_err());
        assert_eq!(refused, Some(15));
        assert!(parser.line.capacity() <= 1000);
        let many_lines = "data: 0123456789\n".repeat(10) + "\n";
        assert_eq!(
            parse(many_lines.as_bytes(), &[], &limits(1000, 100)),
            Err(SseError::EventTooLarge(100))
        );
        assert_eq!(
            parse(many_lines.as_bytes(), &[], &limits(1000, 109))
                .unwrap()
                .len(),
            1
        );
    }

    /// One event as a server may write it: comments, an optional name, data lines (none of
    /// them holds a line end), and the line end each line uses.
    fn any_event() -> impl Strategy<Value = (Option<String>, Vec<String>, Vec<usize>, bool)> {
        (
            proptest::option::of("[a-z_]{1,12}"),
            vec("[^\r\n]{0,40}", 1..4),
            vec(0..3_usize, 8),
            any::<bool>(),
        )
    }

    proptest! {
        #![proptest_config(crate::http::corrupt::config(256))]

        /// "Each byte read once, however the body is cut": any events, written with any line
        /// ends and comments, cut anywhere, parse to the events written.
        #[test]
        fn any_events_cut_anywhere_parse_to_the_events_written(
            events in vec(any_event(), 0..6),
            cuts in vec(any::<usize>(), 0..12),
        ) {
            const ENDS: [&str; 3] = ["\n", "\r\n", "\r"];
            let mut body = String::new();
            let mut expected = Vec::new();
            for (name, lines, ends, comment) in &events {
                let mut end = ends.iter().cycle().map(|at| ENDS[*at]);
                if *comment {
                    body.push_str(": keep-alive");
                    body.push_str(end.next().unwrap());
                }
                if let Some(name) = name {
                    body.push_str(&format!("event: {name}"));
                    body.push_str(end.next().unwrap());
                }
                let mut last = "";
                for line in lines {
                    body.push_str(&format!("data: {line}"));
                    last = end.next().unwrap();
                    body.push_str(last);
                }
                // The blank line; after a `\r`, a lone `\n` would only complete its `\r\n`.
                match end.next().unwrap() {
                    "\n" if last == "\r" => body.push_str("\r\n"),
                    blank => body.push_str(blank),
                }
                expected.push(event(
                    name.as_deref().unwrap_or("message"),
                    &lines.join("\n"),
                ));
            }
            let body = body.as_bytes();
            let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (body.len() + 1)).collect();
            cuts.sort_unstable();
            prop_assert_eq!(parse(body, &cuts, &Limits::default()).unwrap(), expected);
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        assert_eq!(
            parse(b"data: \xff\n\n", &[], &Limits::default()),
            Err(SseError::NotUtf8)
        );
    }
}
