//! What an AG-UI client sends to run an agent (`RunAgentInput`), read leniently, and what a
//! turn takes from it: the new user message, or the answers to a pause.

use hookchain_core::Message;
use hookchain_core::message::{ContentPart, ImageSource};
use serde::Deserialize;
use serde_json::Value;

/// A request to run the agent: a new turn of a thread, or the answers that resume its pause.
///
/// AG-UI clients send the whole conversation with every request; the server keeps its own
/// (the thread store), so only the **last** message is read, and only if it is the user's: the
/// new turn. Tools, context, state and forwarded properties are accepted and not used.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunAgentInput {
    /// The conversation.
    pub thread_id: String,
    /// This run (the client's id for it: a request sent again with the same id joins the
    /// run, and never starts a second).
    pub run_id: String,
    /// The conversation as the client has it; the last, the user's, is the new turn.
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    /// The answers to a pause, when this request resumes one.
    #[serde(default)]
    pub resume: Vec<ResumeEntry>,
}

/// A message as AG-UI writes it (only what a turn reads of it).
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct InputMessage {
    /// The client's id of the message: a turn sent again (a retry) has the same.
    #[serde(default)]
    pub id: Option<String>,
    /// `user`, `assistant`, `tool`, …
    pub role: String,
    /// Text, or a list of input parts (text, images).
    #[serde(default)]
    pub content: Value,
}

/// An answer to one interrupt of a pause.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeEntry {
    /// The interrupt answered (its id in the `RUN_FINISHED` event's outcome).
    pub interrupt_id: String,
    /// `resolved` (answered with `payload`) or `cancelled`.
    pub status: ResumeStatus,
    /// The answer: what the interrupt's raiser reads (an approval's decisions, a form's
    /// values).
    #[serde(default)]
    pub payload: Option<Value>,
}

/// Whether an interrupt was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeStatus {
    /// Answered.
    Resolved,
    /// Given up: the pause is abandoned.
    Cancelled,
}

/// Why a request's input cannot start a turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// No message, or the last is not the user's, and nothing is resumed.
    #[error("the last message must be the user's new turn")]
    NoUserMessage,
    /// The user's message has no text nor image.
    #[error("the user's message is empty")]
    EmptyMessage,
    /// A part of the user's message is of a kind this server does not take.
    #[error("a part of the user's message is not text nor an image: `{0}`")]
    UnsupportedPart(String),
    /// Some interrupts are answered and some cancelled: a pause is answered whole, or given up
    /// whole.
    #[error("answer every interrupt of the pause, or cancel them all")]
    MixedResume,
    /// An identifier is empty or too long.
    #[error("`{0}` must be 1 to {MAX_ID_LEN} bytes")]
    BadId(&'static str),
    /// The thread's id holds `/` or NUL (a `/` separates a tenant's namespace from the id in
    /// the server's keys).
    #[error("`threadId` must not hold `/` or NUL")]
    ThreadIdCharacter,
}

/// The longest thread or run id taken.
pub const MAX_ID_LEN: usize = 256;

impl RunAgentInput {
    /// Checks the ids: 1 to [`MAX_ID_LEN`] bytes, and a thread's without `/` or NUL.
    pub fn check_ids(&self) -> Result<(), InputError> {
        for (name, id) in [("threadId", &self.thread_id), ("runId", &self.run_id)] {
            if id.is_empty() || id.len() > MAX_ID_LEN {
                return Err(InputError::BadId(name));
            }
        }
        if self.thread_id.contains(['/', '\0']) {
            return Err(InputError::ThreadIdCharacter);
        }
        Ok(())
    }

    /// The client's id of the new turn's message (the last), if it gave one.
    pub fn user_message_id(&self) -> Option<&str> {
        self.messages.last()?.id.as_deref()
    }

    /// The new turn: the last message, the user's, as a hookchain message.
    pub fn user_message(&self) -> Result<Message, InputError> {
        let last = self
            .messages
            .last()
            .filter(|message| message.role == "user")
            .ok_or(InputError::NoUserMessage)?;
        let parts = match &last.content {
            Value::String(text) => vec![ContentPart::text(text.as_str())],
            Value::Array(parts) => parts.iter().map(part).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        let parts: Vec<ContentPart> = parts
            .into_iter()
            .filter(|part| !matches!(part, ContentPart::Text { text } if text.is_empty()))
            .collect();
        if parts.is_empty() {
            return Err(InputError::EmptyMessage);
        }
        Ok(Message::user(parts))
    }

    /// Whether this request resumes a pause, and how: `Some(true)` to answer it, `Some(false)`
    /// to give it up.
    pub fn resumes(&self) -> Result<Option<bool>, InputError> {
        if self.resume.is_empty() {
            return Ok(None);
        }
        let cancelled = self
            .resume
            .iter()
            .filter(|entry| entry.status == ResumeStatus::Cancelled)
            .count();
        match cancelled {
            0 => Ok(Some(true)),
            all if all == self.resume.len() => Ok(Some(false)),
            _ => Err(InputError::MixedResume),
        }
    }
}

/// One input part: `{"type": "text", "text"}`, or `{"type": "image", "source": {"type":
/// "data", "value", "mimeType"} | {"type": "url", "value"}}`.
fn part(part: &Value) -> Result<ContentPart, InputError> {
    let kind = part["type"].as_str().unwrap_or_default();
    match kind {
        "text" => Ok(ContentPart::text(part["text"].as_str().unwrap_or_default())),
        "image" => {
            let source = &part["source"];
            let value = source["value"].as_str().unwrap_or_default().to_owned();
            let image = match source["type"].as_str() {
                Some("data") => ImageSource::Base64 {
                    media_type: source["mimeType"]
                        .as_str()
                        .unwrap_or("image/png")
                        .to_owned(),
                    data: value,
                },
                Some("url") => ImageSource::Url { url: value },
                _ => return Err(InputError::UnsupportedPart("image".into())),
            };
            Ok(ContentPart::Image {
                source: Box::new(image),
            })
        }
        other => Err(InputError::UnsupportedPart(
            other.chars().take(40).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(value: Value) -> RunAgentInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_new_turn_is_the_last_message_the_users_with_its_text_and_images() {
        let request = input(json!({
            "threadId": "t", "runId": "r", "state": null, "tools": [], "context": [],
            "forwardedProps": {},
            "messages": [
                {"id": "1", "role": "user", "content": "Earlier"},
                {"id": "2", "role": "assistant", "content": "Reply"},
                {"id": "3", "role": "user", "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
                    {"type": "image", "source": {"type": "url", "value": "https://x/cat.jpg"}},
                ]},
            ],
        }));
        request.check_ids().unwrap();
        let message = request.user_message().unwrap();
        assert_eq!(message.text(), "What is this?");
        assert_eq!(message.content.parts().len(), 3);
        assert_eq!(request.resumes(), Ok(None));
    }

    #[test]
    fn odd_inputs_are_clear_errors() {
        let ends_with_assistant = input(json!({"threadId": "t", "runId": "r",
            "messages": [{"id": "1", "role": "assistant", "content": "Hi"}]}));
        assert_eq!(
            ends_with_assistant.user_message().unwrap_err(),
            InputError::NoUserMessage
        );
        let empty = input(json!({"threadId": "t", "runId": "r",
            "messages": [{"id": "1", "role": "user", "content": ""}]}));
        assert_eq!(empty.user_message().unwrap_err(), InputError::EmptyMessage);
        let audio = input(json!({"threadId": "t", "runId": "r",
            "messages": [{"id": "1", "role": "user", "content": [{"type": "audio"}]}]}));
        assert!(matches!(
            audio.user_message().unwrap_err(),
            InputError::UnsupportedPart(kind) if kind == "audio"
        ));
        let no_id = input(json!({"threadId": "", "runId": "r"}));
        assert_eq!(no_id.check_ids(), Err(InputError::BadId("threadId")));
        let long = input(json!({"threadId": "t", "runId": "r".repeat(MAX_ID_LEN + 1)}));
        assert_eq!(long.check_ids(), Err(InputError::BadId("runId")));
        for thread in ["acme/t", "t\u{0}"] {
            let slash = input(json!({"threadId": thread, "runId": "r"}));
            assert_eq!(slash.check_ids(), Err(InputError::ThreadIdCharacter));
        }
    }

    #[test]
    fn a_pause_is_answered_whole_or_given_up_whole() {
        let resume = |statuses: &[&str]| {
            let entries: Vec<Value> = statuses
                .iter()
                .enumerate()
                .map(|(at, status)| json!({"interruptId": at.to_string(), "status": status, "payload": {"ok": true}}))
                .collect();
            input(json!({"threadId": "t", "runId": "r", "resume": entries})).resumes()
        };
        assert_eq!(resume(&["resolved", "resolved"]), Ok(Some(true)));
        assert_eq!(resume(&["cancelled"]), Ok(Some(false)));
        assert_eq!(
            resume(&["resolved", "cancelled"]),
            Err(InputError::MixedResume)
        );
    }
}
