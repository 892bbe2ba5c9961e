//! Property tests: the recorded answers and streams, corrupted, convert or fail with a clear
//! error, never a panic.

use hookchain_core::ModelErrorKind;
use proptest::collection::vec;
use proptest::prelude::*;

use super::transcript;
use crate::http::corrupt::{
    any_corruption, any_stream_edit, config, corrupt, corrupt_stream, decode_checked,
};
use crate::http::parse_transcript;
use crate::responses::stream::{ResponseDecoder, answer};
use crate::responses::wire::Response;

fn answers() -> Vec<serde_json::Value> {
    [
        transcript!("responses/final.json"),
        transcript!("responses/tool_call.json"),
        transcript!("responses/call_cut.json"),
        transcript!("responses/refusal.json"),
        transcript!("llamacpp/responses_reasoning_call.json"),
    ]
    .into_iter()
    .map(|text| serde_json::from_str(text).unwrap())
    .collect()
}

const STREAMS: [&str; 10] = [
    transcript!("responses/final.sse"),
    transcript!("responses/tool_call.sse"),
    transcript!("responses/call_cut.sse"),
    transcript!("responses/refusal.sse"),
    transcript!("responses/failed.sse"),
    transcript!("responses/error.sse"),
    transcript!("responses/error_nested.sse"),
    transcript!("responses/failed_rate_limit.sse"),
    transcript!("responses/failed_invalid_prompt.sse"),
    transcript!("llamacpp/responses_reasoning_call.sse"),
];

proptest! {
    #![proptest_config(config(512))]

    /// "A malformed answer is a clear error, never a panic": any recorded answer with a few of
    /// its values replaced, copied or removed converts, or fails with `MalformedResponse` (or
    /// the error it reports).
    #[test]
    fn a_corrupt_answer_converts_or_is_malformed_never_a_panic(
        which in 0..5_usize,
        corruptions in vec(any_corruption(), 1..4),
    ) {
        let mut json = answers().swap_remove(which);
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        // What does not fit the wire type fails in the client, as a decoding error.
        let Ok(wire) = serde_json::from_value::<Response>(json) else {
            return Ok(());
        };
        let reports_error = wire.status.as_deref() == Some("failed");
        if let Err(error) = answer(wire) {
            prop_assert!(
                error.kind() == ModelErrorKind::MalformedResponse || reports_error,
                "{}", error
            );
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
        decode_checked(ResponseDecoder::new(), &events)?;
    }
}
