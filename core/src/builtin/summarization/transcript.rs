//! The summarizer's request: the messages to summarize written out as one transcript.
//!
//! A transcript rather than the messages themselves: a summarizer asked with tool calls and
//! results in its history but no tools offered is refused by some providers, and a request
//! with a trailing assistant message is read as one to continue.

use std::fmt::Write as _;

use crate::message::{Message, Role};

/// `messages` as text, one entry per message: `User: …`, `Assistant: …`, the calls an
/// assistant made with their arguments, `Tool result (name): …`; earlier summaries as such.
/// A message's content is written as [`Content::to_text_lossy`](crate::message::Content::to_text_lossy)
/// writes it: the summarizer reads a tool's JSON and links, and a placeholder for an image.
pub(crate) fn transcript(messages: &[Message], is_summary: impl Fn(&Message) -> bool) -> String {
    let mut text = String::new();
    for message in messages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        let body = message.content.to_text_lossy();
        // `write!` to a `String` cannot fail.
        let _ = match message.role {
            _ if is_summary(message) => write!(text, "Summary of what came before: {body}"),
            Role::System => write!(text, "System: {body}"),
            Role::User => write!(text, "User: {body}"),
            Role::Assistant => write!(text, "Assistant: {body}"),
            Role::Tool => {
                let failed = if message.is_error { " (failed)" } else { "" };
                match &message.name {
                    Some(tool) => write!(text, "Tool result of `{tool}`{failed}: {body}"),
                    None => write!(text, "Tool result{failed}: {body}"),
                }
            }
        };
        for call in &message.tool_calls {
            let _ = write!(text, "\n[called `{}` with {}]", call.name, call.arguments);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{ToolCall, ToolResult};

    #[test]
    fn every_role_and_call_is_written_out() {
        let messages = [
            Message::user("Weather in Paris?"),
            Message::assistant_with_tool_calls(
                "Let me look.",
                [ToolCall::new("c1", "weather", json!({ "city": "Paris" }))],
            ),
            Message::tool(ToolResult::ok("c1", "sunny")).with_name("weather"),
        ];
        assert_eq!(
            transcript(&messages, |_| false),
            "User: Weather in Paris?\n\nAssistant: Let me look.\n[called `weather` with \
             {\"city\":\"Paris\"}]\n\nTool result of `weather`: sunny"
        );
    }

    #[test]
    fn a_rich_result_is_written_as_text_with_its_json_and_a_placeholder() {
        use crate::message::ContentPart;

        let result = ToolResult::ok(
            "c1",
            vec![
                ContentPart::text("The chart:"),
                ContentPart::image_base64("image/png", "iVBORw0KGgo="),
                ContentPart::json(json!({ "q3": 1204 })),
            ],
        );
        let messages = [Message::tool(result).with_name("chart")];
        assert_eq!(
            transcript(&messages, |_| false),
            "Tool result of `chart`: The chart:\n[image: image/png]\n{\"q3\":1204}"
        );
    }
}
