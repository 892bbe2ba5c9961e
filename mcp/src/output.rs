//! What the model reads of an MCP tool's result.

use hookchain_core::ToolError;
use hookchain_core::message::{Content, ContentPart, EmbeddedResource, ResourceLink};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::result_bound::within_bound;

/// What the model reads of the MCP result of a call of `tool`, part by part:
///
/// | MCP | hookchain |
/// |---|---|
/// | text | a text part |
/// | image (base64) | an image part (a provider that takes no images in tool results writes a placeholder: see its docs) |
/// | resource link | a resource link part |
/// | embedded resource, text or binary | a resource part (a provider sends a text resource's URI and text, a binary resource as a placeholder naming its type and size) |
/// | audio | an audio part (no provider takes audio in a tool result: each sends a placeholder naming its type and size) |
/// | `structuredContent`, when there is no text part | a JSON part |
///
/// The parts are bounded to `max_bytes` (the server's
/// [`max_result_bytes`](crate::McpServer::max_result_bytes)): text cut, images, audio, binary
/// resources and links dropped, with a note saying what (see `within_bound`).
///
/// A result with `isError: true` is a [`ToolError::ForModel`] with the result's text (its
/// parts written as text: [`Content::to_text_lossy`]): the model reads the server's account,
/// as MCP means it to (the tool ran and says what went wrong).
pub(crate) fn tool_output(
    tool: &str,
    result: CallToolResult,
    max_bytes: usize,
) -> Result<Content, ToolError> {
    let has_text = result
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::Text(_)));
    let mut parts = Vec::with_capacity(result.content.len() + 1);
    if !has_text && let Some(structured) = result.structured_content {
        parts.push(ContentPart::json(structured));
    }
    parts.extend(result.content.into_iter().map(part_of));
    let content = Content::from(within_bound(parts, max_bytes));
    if result.is_error == Some(true) {
        let message = content.to_text_lossy();
        let message = if message.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            message.into_owned()
        };
        return Err(ToolError::for_model(tool, message));
    }
    Ok(content)
}

/// The hookchain part of one MCP content block.
fn part_of(block: ContentBlock) -> ContentPart {
    match block {
        ContentBlock::Text(text) => ContentPart::text(text.text),
        ContentBlock::Image(image) => ContentPart::image_base64(image.mime_type, image.data),
        ContentBlock::Audio(audio) => ContentPart::audio_base64(audio.mime_type, audio.data),
        ContentBlock::Resource(embedded) => {
            let (resource, mime_type) = match embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => (EmbeddedResource::text(uri, text), mime_type),
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => (EmbeddedResource::blob(uri, blob), mime_type),
                // A kind of resource newer than this crate: say so rather than drop it silently.
                _ => return ContentPart::text("[resource]"),
            };
            ContentPart::from(match mime_type {
                Some(mime_type) => resource.with_mime_type(mime_type),
                None => resource,
            })
        }
        ContentBlock::ResourceLink(resource) => {
            let mut link = ResourceLink::new(resource.uri, resource.name);
            link.title = resource.title;
            link.description = resource.description;
            link.mime_type = resource.mime_type;
            ContentPart::from(link)
        }
        // A kind of content newer than this crate: say so rather than drop it silently.
        _ => ContentPart::text("[content]"),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;

    /// A bound no result of these tests reaches.
    const MAX: usize = 1 << 20;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    fn parts(content: &Content) -> Vec<ContentPart> {
        content.parts().to_vec()
    }

    #[test]
    fn text_parts_stay_parts() {
        let result =
            CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        let content = tool_output("t", result, MAX).unwrap();
        assert_eq!(
            parts(&content),
            [ContentPart::text("a"), ContentPart::text("b")]
        );
    }

    #[test]
    fn structured_content_is_a_json_part_when_there_is_no_text() {
        let content = tool_output(
            "t",
            result(json!({"content": [], "structuredContent": {"temperature": 21.5, "unit": "C"}})),
            MAX,
        )
        .unwrap();
        assert_eq!(
            parts(&content),
            [ContentPart::json(json!({"temperature": 21.5, "unit": "C"}))]
        );
        // With a text part (MCP asks servers to write the structured result as text too), the
        // text is what the model reads.
        let content = tool_output(
            "t",
            result(json!({
                "content": [{"type": "text", "text": "21.5 C"}],
                "structuredContent": {"temperature": 21.5}
            })),
            MAX,
        )
        .unwrap();
        assert_eq!(content, "21.5 C");
    }

    #[test]
    fn images_links_resources_and_audio_keep_what_they_are() {
        let content = tool_output(
            "t",
            result(json!({"content": [
                {"type": "text", "text": "Here:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "long text"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
                {"type": "resource_link", "uri": "file:///b.txt", "name": "b", "title": "B"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
            ]})),
            MAX,
        )
        .unwrap();
        assert_eq!(
            parts(&content),
            [
                ContentPart::text("Here:"),
                ContentPart::image_base64("image/png", "iVBORw0KGgo="),
                ContentPart::from(EmbeddedResource::text("file:///a.txt", "long text")),
                ContentPart::resource_blob("file:///a.bin", "application/octet-stream", "AAAA"),
                ContentPart::from(ResourceLink::new("file:///b.txt", "b").with_title("B")),
                ContentPart::audio_base64("audio/wav", "AAAA"),
            ]
        );
    }

    #[test]
    fn an_error_result_with_an_image_is_read_as_text() {
        let error = tool_output(
            "t",
            result(json!({"content": [
                {"type": "text", "text": "the chart failed:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ], "isError": true})),
            MAX,
        )
        .unwrap_err();
        let ToolError::ForModel { message, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(message.starts_with("the chart failed:"), "{message}");
        assert!(message.contains("[image: image/png]"), "{message}");
    }

    #[test]
    fn an_error_result_is_a_tool_error_the_model_reads() {
        let error = tool_output(
            "t",
            result(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
            MAX,
        )
        .unwrap_err();
        assert!(
            matches!(&error, ToolError::ForModel { tool, message } if tool == "t" && message == "no such file"),
            "{error:?}"
        );
    }
}
