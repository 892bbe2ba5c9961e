//! What a streamed model call yields: provider-neutral, block-indexed events.

use serde::{Deserialize, Serialize};

use super::{StopReason, Usage};
use crate::message::ToolCall;

/// One event of a streamed model call.
///
/// The answer is made of *blocks* numbered by `index`: a run of text, a run of reasoning, or one
/// tool call. Providers number them as they like (indices need not start at 0 nor be dense) but
/// a block keeps one kind, and the blocks' order by index is the order of the answer. A
/// [`ResponseAssembler`](super::ResponseAssembler) turns a sequence of events back into the
/// [`ModelResponse`](super::ModelResponse) an unstreamed call would return.
///
/// Serialized as an object tagged by `event` (`{"event": "text_delta", "index": 0, "text":
/// "…"}`; a usage report's fields beside the tag): what a recording of a stream writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelEvent {
    /// More text of the text block `index`.
    TextDelta {
        /// The block.
        index: usize,
        /// The new text.
        text: String,
    },
    /// More reasoning ("thinking") text of the reasoning block `index`.
    ReasoningDelta {
        /// The block.
        index: usize,
        /// The new reasoning text.
        text: String,
    },
    /// The signature of the reasoning block `index` (Anthropic signs its thinking; the
    /// signature must go back with the reasoning in later requests).
    ReasoningSignature {
        /// The block.
        index: usize,
        /// The signature (signature events of one block are concatenated).
        signature: String,
    },
    /// A whole block of reasoning the provider returned encrypted (Anthropic's redacted
    /// thinking), to send back as it is.
    RedactedReasoning {
        /// The block.
        index: usize,
        /// The provider's opaque data.
        data: String,
    },
    /// The model began the tool call `index`.
    ToolCallStart {
        /// The block.
        index: usize,
        /// The id of the call.
        id: String,
        /// The name of the tool called.
        name: String,
    },
    /// A fragment of the JSON text of the arguments of tool call `index`. Fragments split the
    /// JSON anywhere, even inside a string or a number; only their concatenation is JSON.
    ToolCallDelta {
        /// The block.
        index: usize,
        /// The next fragment of the arguments' JSON text.
        arguments: String,
    },
    /// The tool call `index` is complete.
    ToolCallEnd {
        /// The block.
        index: usize,
        /// The assembled call, its arguments parsed.
        call: ToolCall,
    },
    /// Tokens used so far. Each usage event is a running total: a later event's counts include
    /// the earlier ones, so the assembler keeps, per count, the largest value seen.
    Usage(Usage),
    /// Data the provider needs kept with the answer and sent back with it in later requests
    /// (Gemini's thought signatures, the Responses API's encrypted reasoning items): it goes
    /// into the answer message's [`metadata`](crate::Message::metadata) under `key` (a later
    /// event of the same key replaces it). Not text: nobody is shown it.
    Metadata {
        /// The metadata key (the provider's own: other providers ignore it).
        key: String,
        /// The value.
        value: serde_json::Value,
    },
    /// The model finished its answer.
    Finish {
        /// Why it stopped.
        stop_reason: StopReason,
    },
}
