//! Property tests: the recorded answers and streams of every server kind, corrupted, convert or
//! fail with a clear error, never a panic.

use hookchain_core::ModelErrorKind;
use hookchain_core::model::ModelEvent;
use proptest::collection::vec;
use proptest::prelude::*;

use super::odd_answer;
use crate::http::corrupt::{
    any_corruption, any_stream_edit, config, corrupt, corrupt_stream, decode_checked,
};
use crate::http::parse_transcript;
use crate::openai::convert::answer;
use crate::openai::stream::ChunkDecoder;
use crate::openai::wire::ChatResponse;

fn answers() -> Vec<serde_json::Value> {
    [
        transcript!("openai/final.json"),
        transcript!("openai/tool_call.json"),
        transcript!("ollama/tool_call.json"),
    ]
    .into_iter()
    .map(|text| serde_json::from_str(text).unwrap())
    .chain([odd_answer()])
    .collect()
}

const STREAMS: [&str; 6] = [
    transcript!("openai/final.sse"),
    transcript!("openai/tool_call.sse"),
    transcript!("vllm/tool_call.sse"),
    transcript!("llamacpp/tool_call.sse"),
    transcript!("ollama/tool_call.sse"),
    transcript!("llamacpp/tool_call_after_reasoning.sse"),
];

proptest! {
    #![proptest_config(config(512))]

    /// "A malformed answer is a clear error, never a panic": any recorded answer with a few of
    /// its values replaced, copied or removed converts, or fails with `MalformedResponse`.
    #[test]
    fn a_corrupt_answer_converts_or_is_malformed_never_a_panic(
        which in 0..4_usize,
        corruptions in vec(any_corruption(), 1..4),
    ) {
        let mut json = answers().swap_remove(which);
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        // What does not fit the wire type fails in the client, as a decoding error.
        let Ok(wire) = serde_json::from_value::<ChatResponse>(json) else {
            return Ok(());
        };
        if let Err(error) = answer(wire) {
            prop_assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{}", error);
        }
    }

    /// "A malformed stream is a clear error, never a panic": any recorded stream with chunks
    /// dropped, repeated, swapped, corrupted or cut short, and the stream cut anywhere, decodes
    /// to consistent events or fails with `MalformedResponse`; reasoning, text and tool calls
    /// keep their blocks (0, 1, then one per call).
    #[test]
    fn a_corrupt_stream_decodes_consistently_or_is_malformed_never_a_panic(
        which in 0..STREAMS.len(),
        edits in vec(any_stream_edit(), 0..5),
        keep in proptest::option::of(any::<usize>()),
    ) {
        let events = corrupt_stream(parse_transcript(STREAMS[which]), &edits, keep);
        for event in decode_checked(ChunkDecoder::new(), &events)? {
            match event {
                ModelEvent::ReasoningDelta { index, .. } => prop_assert_eq!(index, 0),
                ModelEvent::TextDelta { index, .. } => prop_assert_eq!(index, 1),
                ModelEvent::ToolCallStart { index, .. }
                | ModelEvent::ToolCallDelta { index, .. }
                | ModelEvent::ToolCallEnd { index, .. } => prop_assert!(index >= 2),
                _ => {}
            }
        }
    }
}
