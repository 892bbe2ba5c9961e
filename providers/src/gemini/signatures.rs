//! Thought signatures: Gemini signs the parts it writes (a function call above all) and requires
//! the signatures back on the same parts in later turns. They are kept in the assistant
//! message's metadata, under [`METADATA_KEY`], which other providers ignore:
//!
//! ```json
//! {"calls": [{"position": 0, "id": "call_1", "name": "get_weather", "signature": "Cu4B…"}],
//!  "text": "Ee8C…"}
//! ```
//!
//! A call's signature is found by its id, else by its position and name: the agent renames a
//! call whose id repeats one of the history's (`call_1` → `call_1_2`), and keeps the order.
//! `text` is the signature of the answer's last non-call part (text or thought), sent back on
//! the turn's last text part.

use hookchain_core::model::ModelEvent;
use hookchain_core::{Message, ToolCall};
use serde_json::{Value, json};

/// The key of the signatures in an assistant message's metadata.
pub const METADATA_KEY: &str = "gemini.thought_signatures";

/// The signatures of one answer, as they arrive.
#[derive(Debug, Default, Clone)]
pub(crate) struct Signatures {
    calls: Vec<Value>,
    text: Option<String>,
}

impl Signatures {
    /// The call at `position` among the answer's calls has `signature`.
    pub(crate) fn call(&mut self, position: usize, id: &str, name: &str, signature: String) {
        self.calls.push(json!({
            "position": position,
            "id": id,
            "name": name,
            "signature": signature,
        }));
    }

    /// A text or thought part has `signature` (the last one is kept: Gemini signs the last).
    pub(crate) fn text(&mut self, signature: String) {
        self.text = Some(signature);
    }

    /// The event that puts the signatures in the answer message's metadata (so that a streamed
    /// answer, assembled by whoever reads the stream, keeps them), if there are any.
    pub(crate) fn event(&self) -> Option<ModelEvent> {
        if self.calls.is_empty() && self.text.is_none() {
            return None;
        }
        let mut value = json!({});
        if !self.calls.is_empty() {
            value["calls"] = Value::Array(self.calls.clone());
        }
        if let Some(text) = &self.text {
            value["text"] = Value::String(text.clone());
        }
        Some(ModelEvent::Metadata {
            key: METADATA_KEY.to_owned(),
            value,
        })
    }
}

/// The signature of `call`, the `position`th call of `message`.
pub(crate) fn of_call<'a>(
    message: &'a Message,
    position: usize,
    call: &ToolCall,
) -> Option<&'a str> {
    let calls = message
        .metadata
        .get(METADATA_KEY)?
        .get("calls")?
        .as_array()?;
    let by_id = calls.iter().find(|entry| entry["id"] == call.id.as_str());
    let by_position = || {
        calls.iter().find(|entry| {
            entry["position"].as_u64() == Some(position as u64)
                && entry["name"] == call.name.as_str()
        })
    };
    by_id.or_else(by_position)?["signature"].as_str()
}

/// The signature of `message`'s last text part.
pub(crate) fn of_text(message: &Message) -> Option<&str> {
    message.metadata.get(METADATA_KEY)?.get("text")?.as_str()
}
