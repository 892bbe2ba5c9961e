//! Requests the providers' tests share.

use hookchain_core::message::ContentPart;
use hookchain_core::{Message, ModelRequest, ToolCall, ToolResult};
use serde_json::json;

/// A history whose tool result holds audio, a text resource and a blob resource: parts no
/// provider's wire takes in a tool result, sent as their text.
pub(crate) fn tool_result_with_audio_and_resources() -> ModelRequest {
    ModelRequest::new(vec![
        Message::user("Record it."),
        Message::assistant_with_tool_calls("", [ToolCall::new("call_1", "record", json!({}))]),
        Message::tool(ToolResult::ok(
            "call_1",
            vec![
                ContentPart::audio_base64("audio/wav", "UklGRg=="),
                ContentPart::resource_text("test://notes", "text/plain", "hi"),
                ContentPart::resource_blob("test://raw", "application/octet-stream", "AAAA"),
            ],
        )),
    ])
}
