//! Reasoning items: a reasoning model's answer holds `reasoning` items (an id, the summary, and
//! with `store: false` the reasoning itself, encrypted). Without storage on OpenAI's side, the
//! model needs them back in the next request to go on from where it was (above all between a
//! function call and its result). They are kept in the assistant message's metadata under
//! [`METADATA_KEY`], which other providers ignore, as the API wrote them:
//!
//! ```json
//! [{"type": "reasoning", "id": "rs_…", "summary": [{"type": "summary_text", "text": "…"}],
//!   "encrypted_content": "gAAAAB…"}]
//! ```
//!
//! A server that sends the reasoning itself (llama.cpp: `content` of `reasoning_text` parts,
//! no summary) gets it back the same way.
//!
//! The summary (without one, the reasoning itself) is also the message's
//! [`Reasoning`](hookchain_core::message::ContentPart::Reasoning) text, without a signature: it
//! is the server's alone, and no other provider may be sent it as signed reasoning of its own.

use hookchain_core::Message;
use hookchain_core::model::ModelEvent;
use serde_json::{Value, json};

use super::wire::OutputItem;

/// The key of the reasoning items in an assistant message's metadata.
pub const METADATA_KEY: &str = "openai.reasoning_items";

/// The reasoning items of one answer, as they arrive.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReasoningItems {
    items: Vec<Value>,
}

impl ReasoningItems {
    /// Keeps a `reasoning` output item.
    pub(crate) fn keep(&mut self, item: &OutputItem) {
        let mut value = json!({"type": "reasoning", "summary": item.summary});
        if let Some(id) = &item.id {
            value["id"] = Value::String(id.clone());
        }
        if let Some(encrypted) = &item.encrypted_content {
            value["encrypted_content"] = Value::String(encrypted.clone());
        }
        // The reasoning itself, where a server sends it (llama.cpp, which also requires it back:
        // a reasoning item without `content` is a 400 there).
        let content: Vec<Value> = item
            .content
            .iter()
            .filter(|part| part.kind == "reasoning_text")
            .map(|part| json!({"type": "reasoning_text", "text": part.text.as_deref().unwrap_or("")}))
            .collect();
        if !content.is_empty() {
            value["content"] = Value::Array(content);
        }
        self.items.push(value);
    }

    /// The event that puts the items in the answer message's metadata (so that a streamed
    /// answer, assembled by whoever reads the stream, keeps them), if there are any.
    pub(crate) fn event(&self) -> Option<ModelEvent> {
        (!self.items.is_empty()).then(|| ModelEvent::Metadata {
            key: METADATA_KEY.to_owned(),
            value: Value::Array(self.items.clone()),
        })
    }
}

/// The reasoning items kept with `message` (none for a message another provider wrote, or
/// written by hand); entries that are not reasoning items are skipped.
pub(crate) fn of(message: &Message) -> impl Iterator<Item = &Value> {
    message
        .metadata
        .get(METADATA_KEY)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("reasoning"))
}
