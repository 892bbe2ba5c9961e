//! What the model reads of an MCP tool's result.

use hookchain_core::ToolError;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The tool's output for the model from the MCP result of a call of `tool`: the text parts
/// joined by newlines; the `structuredContent` as compact JSON when there is no text part;
/// images, audio and resources as short placeholders (`[image: image/png]`). A result with
/// `isError: true` is a [`ToolError::ForModel`]: the model reads the server's text, as MCP
/// means it to (the tool ran and says what went wrong).
///
/// To become rich `Content` (images, structured JSON, resource links given to the model as
/// they are) when `Tool::call` returns it: this is the one place that turns an MCP result
/// into what the model reads.
pub(crate) fn tool_output(tool: &str, result: CallToolResult) -> Result<String, ToolError> {
    let mut parts = Vec::with_capacity(result.content.len());
    let mut has_text = false;
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => {
                has_text = true;
                parts.push(text.text.clone());
            }
            ContentBlock::Image(image) => parts.push(format!("[image: {}]", image.mime_type)),
            ContentBlock::Audio(audio) => parts.push(format!("[audio: {}]", audio.mime_type)),
            ContentBlock::Resource(embedded) => parts.push(match &embedded.resource {
                ResourceContents::TextResourceContents { uri, .. } => format!("[resource: {uri}]"),
                ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
                _ => "[resource]".to_owned(),
            }),
            ContentBlock::ResourceLink(link) => {
                parts.push(format!("[resource link: {}]", link.uri))
            }
            // A kind of content newer than this crate: say so rather than drop it silently.
            _ => parts.push("[content]".to_owned()),
        }
    }
    if !has_text && let Some(structured) = &result.structured_content {
        // Placeholders of other parts stay after the JSON.
        parts.insert(0, structured.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        let message = if text.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            text
        };
        return Err(ToolError::for_model(tool, message));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    #[test]
    fn text_parts_are_joined_by_newlines() {
        let result =
            CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        assert_eq!(tool_output("t", result).unwrap(), "a\nb");
    }

    #[test]
    fn structured_content_is_compact_json_when_there_is_no_text() {
        let output = tool_output(
            "t",
            result(json!({"content": [], "structuredContent": {"temperature": 21.5, "unit": "C"}})),
        )
        .unwrap();
        assert_eq!(output, r#"{"temperature":21.5,"unit":"C"}"#);
        // With a text part, the text is what the model reads.
        let output = tool_output(
            "t",
            result(json!({
                "content": [{"type": "text", "text": "21.5 C"}],
                "structuredContent": {"temperature": 21.5}
            })),
        )
        .unwrap();
        assert_eq!(output, "21.5 C");
    }

    #[test]
    fn images_and_resources_are_short_placeholders() {
        let output = tool_output(
            "t",
            result(json!({"content": [
                {"type": "text", "text": "Here:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "long text"}},
                {"type": "resource_link", "uri": "file:///b.txt", "name": "b"}
            ]})),
        )
        .unwrap();
        assert_eq!(
            output,
            "Here:\n[image: image/png]\n[resource: file:///a.txt]\n[resource link: file:///b.txt]"
        );
    }

    #[test]
    fn an_error_result_is_a_tool_error_the_model_reads() {
        let error = tool_output(
            "t",
            result(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
        )
        .unwrap_err();
        assert!(
            matches!(&error, ToolError::ForModel { tool, message } if tool == "t" && message == "no such file"),
            "{error:?}"
        );
    }
}
