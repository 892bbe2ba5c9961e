//! Property tests: the recorded answers and streams, corrupted, convert or fail with a clear
//! error, never a panic.

use hookchain_core::ModelErrorKind;
use proptest::collection::vec;
use proptest::prelude::*;

use super::transcript;
use crate::bedrock::stream::ConverseDecoder;
use crate::bedrock::wire::ConverseResponse;
use crate::http::corrupt::{
    any_corruption, any_stream_edit, config, corrupt, corrupt_stream, decode_checked,
};
use crate::http::parse_transcript;

const ANSWERS: [&str; 5] = [
    transcript!("bedrock/final.json"),
    transcript!("bedrock/tool_use.json"),
    transcript!("bedrock/redacted.json"),
    transcript!("bedrock/guardrail.json"),
    transcript!("bedrock/tool_use_cut.json"),
];

const STREAMS: [&str; 4] = [
    transcript!("bedrock/final.events"),
    transcript!("bedrock/tool_use.events"),
    transcript!("bedrock/tool_use_cut.events"),
    transcript!("bedrock/throttled.events"),
];

proptest! {
    #![proptest_config(config(512))]

    /// "A malformed answer is a clear error, never a panic".
    #[test]
    fn a_corrupt_answer_converts_or_is_malformed_never_a_panic(
        which in 0..ANSWERS.len(),
        corruptions in vec(any_corruption(), 1..4),
    ) {
        let mut json: serde_json::Value = serde_json::from_str(ANSWERS[which]).unwrap();
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        let Ok(wire) = serde_json::from_value::<ConverseResponse>(json) else {
            return Ok(());
        };
        if let Err(error) = ConverseDecoder::new().answer(wire) {
            prop_assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{}", error);
        }
    }

    /// "A malformed stream is a clear error, never a panic": events dropped, repeated,
    /// swapped, corrupted or cut, the stream cut anywhere.
    #[test]
    fn a_corrupt_stream_decodes_consistently_or_is_malformed_never_a_panic(
        which in 0..STREAMS.len(),
        edits in vec(any_stream_edit(), 0..5),
        keep in proptest::option::of(any::<usize>()),
    ) {
        let events = corrupt_stream(parse_transcript(STREAMS[which]), &edits, keep);
        decode_checked(ConverseDecoder::new(), &events)?;
    }
}
