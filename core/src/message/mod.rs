//! Conversation messages: what the model reads and writes.

mod audio;
mod content;
mod embedded_resource;
// A tool call's outcome as its result carries it: what failed, and the answer that ends the
// run. Their public paths are the tool module's, which re-exports them.
pub(crate) mod final_answer;
mod history;
mod resource_link;
mod rewrite;
mod text_lossy;
pub(crate) mod tool_error;
pub(crate) mod tool_failure;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use final_answer::FinalAnswer;
use tool_failure::ToolFailure;

pub use audio::Audio;
pub use content::{Content, ContentPart, ImageSource, Reasoning};
pub use embedded_resource::{EmbeddedResource, ResourceContents};
pub use history::{HistoryError, validate_history};
pub(crate) use history::{
    check_editable, close_interior, close_pending, rename_repeated_ids, repeated_call_id,
};
pub use resource_link::ResourceLink;

/// Who wrote a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person (or program) the agent works for.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, answering one [`ToolCall`] by its id.
    Tool,
}

/// One message of a conversation.
///
/// Its [`Content`] is text, or parts: text, images, the model's reasoning, and in a tool message
/// what the tool returned (structured JSON, resources and links to them, audio). An assistant
/// message may carry [`ToolCall`]s; a tool message answers exactly one of them through
/// [`tool_call_id`](Self::tool_call_id), and names the tool.
///
/// Its serde form is part of checkpoints and threads: fields are added with defaults, so what an
/// older version wrote still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Who wrote the message.
    pub role: Role,
    /// What the message says (may be empty for an assistant message that only calls tools);
    /// [`text`](Self::text) is its text.
    pub content: Content,
    /// Tool calls requested by the model (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The id of the tool call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Whether a tool message reports a failure (tool messages only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The tool that answered (tool messages the agent adds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tags and notes of the application or of middleware (`"summary"`, `"cleared"`, an id):
    /// never sent to the model.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, serde_json::Value>,
}

impl Message {
    fn new(role: Role, content: impl Into<Content>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            name: None,
            metadata: BTreeMap::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<Content>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message: text, or parts such as images.
    ///
    /// ```
    /// use hookchain::Message;
    /// use hookchain::message::ContentPart;
    ///
    /// let plain = Message::user("Hello!");
    /// let with_image = Message::user(vec![
    ///     ContentPart::text("What is in this picture?"),
    ///     ContentPart::image_url("https://example.com/cat.png"),
    /// ]);
    /// assert_eq!(with_image.text(), "What is in this picture?");
    /// # let _ = plain;
    /// ```
    pub fn user(content: impl Into<Content>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// An assistant message that calls tools (with optional accompanying text).
    pub fn assistant_with_tool_calls(
        content: impl Into<Content>,
        tool_calls: impl IntoIterator<Item = ToolCall>,
    ) -> Self {
        Self {
            tool_calls: tool_calls.into_iter().collect(),
            ..Self::new(Role::Assistant, content)
        }
    }

    /// A tool message carrying `result`.
    #[must_use]
    pub fn tool(result: ToolResult) -> Self {
        Self {
            tool_call_id: Some(result.call_id),
            is_error: result.is_error,
            ..Self::new(Role::Tool, result.content)
        }
    }

    /// The message with the name of the tool that answered.
    #[must_use]
    pub fn with_name(mut self, tool: impl Into<String>) -> Self {
        self.name = Some(tool.into());
        self
    }

    /// The message with `value` under `key` in its [`metadata`](Self::metadata).
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// The text of the message: its text parts, joined (see [`Content::text`]).
    #[inline]
    #[must_use]
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        self.content.text()
    }

    /// Whether this is an assistant message that calls at least one tool.
    #[must_use]
    pub fn has_tool_calls(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// Identifies the call; the tool message that answers it carries the same id.
    pub id: String,
    /// The name of the tool to call.
    pub name: String,
    /// The arguments, as JSON (normally an object matching the tool's schema).
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// The outcome of one tool call, as the model will read it.
///
/// Its [`content`](Self::content) is text, or parts: images, audio, structured JSON, resources
/// and links to them (see [`ContentPart`]). Text-only content serializes as the string it was before
/// results could hold parts, so older checkpoints and threads still load.
///
/// ```
/// use hookchain::ToolResult;
/// use hookchain::message::ContentPart;
///
/// let plain = ToolResult::ok("call_1", "18°C and sunny");
/// assert_eq!(plain.text(), "18°C and sunny");
///
/// let chart = ToolResult::ok(
///     "call_2",
///     vec![
///         ContentPart::text("The chart:"),
///         ContentPart::image_base64("image/png", "iVBORw0KGgo="),
///     ],
/// );
/// assert_eq!(chart.content.parts().len(), 2);
/// ```
///
/// Failures are results too: an unknown tool, arguments that do not match the schema, an error or
/// a panic in the tool all become a result with [`is_error`](Self::is_error) set, so the model can
/// read what went wrong and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this result answers.
    pub call_id: String,
    /// What the tool returned, or what went wrong.
    pub content: Content,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// Whether this stands for a call that paused the run (see [`is_paused`](Self::is_paused)).
    #[serde(skip)]
    pub(crate) paused: bool,
    /// Why the call failed, for wraps and the application (never sent to the model).
    #[serde(skip)]
    pub(crate) failure: Option<Arc<ToolFailure>>,
    /// The answer the call gives the whole run, ending it (see [`ends_run`](Self::ends_run)):
    /// kept in a checkpoint with the result, so that a step resumed after a pause still ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ends_run: Option<Box<FinalAnswer>>,
}

impl ToolResult {
    /// A successful result: text, a [`ContentPart`], a `Vec` of them or [`Content`].
    pub fn ok(call_id: impl Into<String>, content: impl Into<Content>) -> Self {
        Self {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
            paused: false,
            failure: None,
            ends_run: None,
        }
    }

    /// A failed result; `content` tells the model what went wrong.
    pub fn error(call_id: impl Into<String>, content: impl Into<Content>) -> Self {
        Self {
            call_id: call_id.into(),
            content: content.into(),
            is_error: true,
            paused: false,
            failure: None,
            ends_run: None,
        }
    }

    /// The error result of a call that failed with `failure`: the model reads its
    /// [`message`](ToolFailure::message), wraps and the application see the failure itself.
    pub fn failed(call_id: impl Into<String>, failure: ToolFailure) -> Self {
        Self {
            failure: Some(Arc::new(failure)),
            ..Self::error(call_id, String::new())
        }
        .with_content_from_failure()
    }

    /// The content the model reads: the failure's message.
    fn with_content_from_failure(mut self) -> Self {
        if let Some(failure) = &self.failure {
            self.content = failure.message().into();
        }
        self
    }

    /// The text parts of the content, joined (see [`Content::text`]); for all of it as text
    /// (JSON, links, placeholders for images), [`Content::to_text_lossy`].
    #[must_use]
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        self.content.text()
    }

    /// The answer this call gives the whole run, if its tool ended the run with one
    /// ([`ToolContext::end_run_with`](crate::ToolContext::end_run_with)).
    #[must_use]
    pub fn ends_run(&self) -> Option<&FinalAnswer> {
        self.ends_run.as_deref()
    }

    /// Why the call failed, classified, with the full error: set on the results the agent
    /// makes of failures (a tool's error, a hook's error, a panic), `None` on others.
    #[must_use]
    pub fn failure(&self) -> Option<&ToolFailure> {
        self.failure.as_deref()
    }

    /// What a wrap's `next` returns when an inner layer or the tool paused the run: the call
    /// has no result yet. It never reaches the model (the run pauses); it is an error result,
    /// so that a wrap that keeps successes (a cache) does not keep it.
    pub(crate) fn paused(call_id: impl Into<String>) -> Self {
        Self {
            paused: true,
            ..Self::error(
                call_id,
                "the call paused the run for outside input; it has no result yet",
            )
        }
    }

    /// Whether the call paused the run instead of producing a result: an interrupt was raised
    /// inside (see [`interrupt`](crate::interrupt)). The run pauses whatever a wrap does with
    /// this result; a wrap should pass it on as it is (not retry it, not cache it).
    #[must_use]
    pub fn is_paused(&self) -> bool {
        self.paused
    }
}

impl From<ToolResult> for Message {
    fn from(result: ToolResult) -> Self {
        Message::tool(result)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_result_written_as_a_string_still_loads() {
        let old = json!({"call_id": "call_1", "content": "18°C", "is_error": false});
        let result: ToolResult = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(result, ToolResult::ok("call_1", "18°C"));
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            old,
            "and is written the same"
        );
        let message: Message = serde_json::from_value(
            json!({"role": "tool", "content": "18°C", "tool_call_id": "call_1", "name": "weather"}),
        )
        .unwrap();
        assert_eq!(message, Message::tool(result).with_name("weather"));
    }

    #[test]
    fn a_rich_tool_result_round_trips_into_its_message() {
        let result = ToolResult::ok(
            "call_1",
            vec![
                ContentPart::json(json!({"celsius": 18})),
                ContentPart::image_url("https://example.com/sky.png"),
            ],
        );
        let back: ToolResult =
            serde_json::from_value(serde_json::to_value(&result).unwrap()).unwrap();
        assert_eq!(back, result);
        let message = Message::tool(result.clone());
        assert_eq!(message.content, result.content);
        assert_eq!(message.role, Role::Tool);
    }
}
