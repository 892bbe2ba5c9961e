use aws_smithy_types::DateTime;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

fn event(name: &str, data: &str) -> Event {
    Event {
        event: name.to_owned(),
        data: data.to_owned(),
    }
}

/// Feeds `body` cut at `cuts`, returning the events or the first error.
fn parse(body: &[u8], cuts: &[usize], max: usize) -> Result<Vec<Event>, FrameError> {
    let mut parser = EventStreamParser::new(max);
    let mut out = VecDeque::new();
    let mut from = 0;
    for &cut in cuts.iter().chain([&body.len()]) {
        parser.feed(&body[from..cut], &mut out)?;
        from = cut;
    }
    Ok(out.into())
}

fn delta(text: &str) -> Vec<u8> {
    encode(
        &[
            (":event-type", "contentBlockDelta"),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        format!(r#"{{"contentBlockIndex":0,"delta":{{"text":"{text}"}}}}"#).as_bytes(),
    )
}

/// AWS's own encoder (the SDKs'), with headers of every type: a check of the parser that
/// shares nothing with it.
fn written_by_aws(headers: Vec<Header>, payload: &str) -> Vec<u8> {
    let message = Message::new_from_parts(headers, payload.as_bytes().to_vec());
    let mut bytes = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(&message, &mut bytes).unwrap();
    bytes
}

#[test]
fn messages_written_by_aws_cut_anywhere_read_as_their_events() {
    let typed = |name: &str, value: HeaderValue| Header::new(name.to_owned(), value);
    let mut body = written_by_aws(
        vec![
            typed(":message-type", HeaderValue::String("event".into())),
            typed(
                ":date",
                HeaderValue::Timestamp(DateTime::from_secs(1_700_000_000)),
            ),
            typed("flag", HeaderValue::Bool(true)),
            typed("off", HeaderValue::Bool(false)),
            typed("b", HeaderValue::Byte(-1)),
            typed("s", HeaderValue::Int16(7)),
            typed("i", HeaderValue::Int32(-7)),
            typed("l", HeaderValue::Int64(1 << 40)),
            typed("raw", HeaderValue::ByteArray(vec![0, 1, 2].into())),
            typed("id", HeaderValue::Uuid(0x0123_4567_89ab_cdef)),
            typed(":event-type", HeaderValue::String("messageStart".into())),
        ],
        r#"{"role":"assistant"}"#,
    );
    body.extend(written_by_aws(
        vec![
            Header::new(":message-type", HeaderValue::String("exception".into())),
            Header::new(
                ":exception-type",
                HeaderValue::String("throttlingException".into()),
            ),
        ],
        r#"{"message":"Too many tokens, please wait before trying again."}"#,
    ));
    body.extend(written_by_aws(
        vec![
            Header::new(":message-type", HeaderValue::String("error".into())),
            Header::new(":error-code", HeaderValue::String("InternalFailure".into())),
            Header::new(":error-message", HeaderValue::String("é broke".into())),
        ],
        "",
    ));
    let expected = vec![
        event("messageStart", r#"{"role":"assistant"}"#),
        event(
            "exception:throttlingException",
            r#"{"message":"Too many tokens, please wait before trying again."}"#,
        ),
        event("error:InternalFailure", "é broke"),
    ];
    assert_eq!(parse(&body, &[], 1 << 20).unwrap(), expected);
    for cut in 0..=body.len() {
        assert_eq!(
            parse(&body, &[cut], 1 << 20).unwrap(),
            expected,
            "cut {cut}"
        );
    }
    let every_byte: Vec<usize> = (1..body.len()).collect();
    assert_eq!(parse(&body, &every_byte, 1 << 20).unwrap(), expected);
    // Ours writes what AWS's reads.
    let ours = delta("Hi");
    let read = aws_smithy_eventstream::frame::read_message_from(&ours[..]).unwrap();
    assert_eq!(
        &read.payload()[..],
        br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#
    );
}

#[test]
fn a_message_over_the_limit_is_refused_from_its_prelude_before_it_is_read() {
    let message = delta(&"x".repeat(100));
    let inside = message.len() - OVERHEAD;
    assert!(parse(&message, &[], inside).is_ok());
    assert_eq!(
        parse(&message, &[], inside - 1),
        Err(FrameError::TooLarge(inside - 1))
    );
    // A prelude announcing 4 GiB: refused on its 12 bytes, nothing more held.
    let mut prelude = u32::MAX.to_be_bytes().to_vec();
    prelude.extend(0_u32.to_be_bytes());
    prelude.extend(crc32fast::hash(&prelude).to_be_bytes());
    let mut parser = EventStreamParser::new(1 << 20);
    assert_eq!(
        parser.feed(&prelude, &mut VecDeque::new()),
        Err(FrameError::TooLarge(1 << 20))
    );
}

#[test]
fn corrupt_lengths_checksums_and_headers_are_errors() {
    let message = delta("Hi");
    let mut flipped = message.clone();
    flipped[20] ^= 1;
    assert_eq!(parse(&flipped, &[], 1 << 20), Err(FrameError::Checksum));
    let mut bad_prelude = message.clone();
    bad_prelude[9] ^= 1;
    assert_eq!(parse(&bad_prelude, &[], 1 << 20), Err(FrameError::Checksum));
    // Lengths that do not add up, with a valid prelude checksum.
    for (total, headers) in [(15_u32, 0_u32), (20, 5)] {
        let mut prelude = total.to_be_bytes().to_vec();
        prelude.extend(headers.to_be_bytes());
        prelude.extend(crc32fast::hash(&prelude).to_be_bytes());
        prelude.resize(total.max(16) as usize, 0);
        assert!(
            matches!(parse(&prelude, &[], 1 << 20), Err(FrameError::Malformed(_))),
            "{total} {headers}"
        );
    }
    let no_type = encode(&[(":message-type", "event")], b"{}");
    assert!(matches!(
        parse(&no_type, &[], 1 << 20),
        Err(FrameError::Malformed(_))
    ));
    let not_utf8 = encode(&[(":event-type", "x")], b"\xff");
    assert_eq!(parse(&not_utf8, &[], 1 << 20), Err(FrameError::NotUtf8));
    // A body cut inside a message yields the messages before it and waits for the rest.
    let mut two = message.clone();
    two.extend(&message[..10]);
    assert_eq!(parse(&two, &[], 1 << 20).unwrap().len(), 1);
}

proptest! {
    #![proptest_config(crate::http::corrupt::config(256))]

    /// Bytes flipped, cut or inserted anywhere in a stream: the parser returns events or an
    /// error, never panics, and never holds more than a message and a piece.
    #[test]
    fn corrupted_streams_never_panic(
        changes in vec((any::<usize>(), any::<u8>(), 0..3_u8), 0..8),
        cuts in vec(any::<usize>(), 0..8),
    ) {
        let mut body: Vec<u8> = ["Hi", "there", "é"].iter().flat_map(|text| delta(text)).collect();
        for (at, byte, how) in changes {
            let at = at % (body.len() + 1);
            match how {
                0 if at < body.len() => body[at] = byte,
                1 => body.insert(at, byte),
                _ => body.truncate(at),
            }
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut % (body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parser = EventStreamParser::new(256);
        let mut out = VecDeque::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&body.len()]) {
            if parser.feed(&body[from..cut], &mut out).is_err() {
                break;
            }
            prop_assert!(parser.buffer.len() <= 256 + OVERHEAD + (cut - from));
            from = cut;
        }
    }
}
