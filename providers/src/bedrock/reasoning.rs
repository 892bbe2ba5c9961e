//! Bedrock's reasoning, kept for the turns after: a model that thinks (Claude on Bedrock)
//! requires its reasoning blocks back, signed as it signed them, with the results of its tool
//! calls. They are kept in the answer message's metadata under [`METADATA_KEY`], as Converse
//! wrote them, which other providers ignore:
//!
//! ```json
//! [{"reasoningText": {"text": "The user wants…", "signature": "EqQB…"}},
//!  {"redactedContent": "c2VjcmV0…"}]
//! ```
//!
//! The reasoning's text is also in the message's content, as
//! [`Reasoning`](hookchain_core::message::ContentPart::Reasoning) parts without a signature —
//! shown, never sent back as such, and never taken by another provider for its own.

use hookchain_core::Message;
use hookchain_core::model::ModelEvent;
use serde_json::Value;

use super::wire::ReasoningContent;

/// The key of the reasoning blocks in an assistant message's metadata.
pub const METADATA_KEY: &str = "bedrock.reasoning";

/// The reasoning blocks of `message` to send back, as Bedrock wrote them; a value of another
/// shape (a metadata entry written by hand) is left out rather than sent to be refused.
pub(crate) fn of(message: &Message) -> impl Iterator<Item = &Value> {
    message
        .metadata
        .get(METADATA_KEY)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| {
            block.get("reasoningText").is_some_and(|text| {
                text.get("text").is_some_and(Value::is_string)
                    && text.get("signature").is_none_or(Value::is_string)
            }) || block.get("redactedContent").is_some_and(Value::is_string)
        })
}

/// The event that puts an answer's reasoning blocks in its metadata (so that a streamed answer,
/// assembled by whoever reads the stream, keeps them), if it has any.
pub(crate) fn event(blocks: &[ReasoningContent]) -> Option<ModelEvent> {
    if blocks.is_empty() {
        return None;
    }
    let value = serde_json::to_value(blocks).ok()?;
    Some(ModelEvent::Metadata {
        key: METADATA_KEY.to_owned(),
        value,
    })
}
