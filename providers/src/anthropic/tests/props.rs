//! Property tests: the recorded answers and streams, corrupted, convert or fail with a clear
//! error, never a panic.

use hookchain_core::ModelErrorKind;
use proptest::collection::vec;
use proptest::prelude::*;

use super::{STOP_INSIDE_A_CALL, redacted_answer};
use crate::anthropic::convert::answer;
use crate::anthropic::stream::EventDecoder;
use crate::anthropic::wire::MessagesResponse;
use crate::http::corrupt::{
    any_corruption, any_stream_edit, config, corrupt, corrupt_stream, decode_checked,
};
use crate::http::parse_transcript;

fn answers() -> Vec<serde_json::Value> {
    [
        transcript!("anthropic/final.json"),
        transcript!("anthropic/tool_use.json"),
    ]
    .into_iter()
    .map(|text| serde_json::from_str(text).unwrap())
    .chain([redacted_answer("end_turn")])
    .collect()
}

const STREAMS: [&str; 5] = [
    transcript!("anthropic/final.sse"),
    transcript!("anthropic/tool_use.sse"),
    transcript!("anthropic/overloaded.sse"),
    transcript!("llamacpp/messages_thinking_tool_use.sse"),
    STOP_INSIDE_A_CALL,
];

proptest! {
    #![proptest_config(config(512))]

    /// "A malformed answer is a clear error, never a panic": any recorded answer with a few of
    /// its values replaced, copied or removed converts, or fails with `MalformedResponse`.
    #[test]
    fn a_corrupt_answer_converts_or_is_malformed_never_a_panic(
        which in 0..3_usize,
        corruptions in vec(any_corruption(), 1..4),
    ) {
        let mut json = answers().swap_remove(which);
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        // What does not fit the wire type fails in the client, as a decoding error.
        let Ok(wire) = serde_json::from_value::<MessagesResponse>(json) else {
            return Ok(());
        };
        if let Err(error) = answer(wire) {
            prop_assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{}", error);
        }
    }

    /// "A malformed stream is a clear error, never a panic": any recorded stream with events
    /// dropped, repeated, swapped, corrupted or cut short, and the stream cut anywhere, decodes
    /// to consistent events or fails with `MalformedResponse` (or the error the server sent).
    #[test]
    fn a_corrupt_stream_decodes_consistently_or_is_malformed_never_a_panic(
        which in 0..STREAMS.len(),
        edits in vec(any_stream_edit(), 0..5),
        keep in proptest::option::of(any::<usize>()),
    ) {
        let events = corrupt_stream(parse_transcript(STREAMS[which]), &edits, keep);
        decode_checked(EventDecoder::new(), &events)?;
    }
}
