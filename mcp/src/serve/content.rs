//! What an MCP client reads of a hookchain tool result.

use hookchain_core::ToolResult;
use hookchain_core::message::{ContentPart, EmbeddedResource, ImageSource, ResourceContents};
use rmcp::model::{self, CallToolResult, ContentBlock, Resource};

/// The MCP result of a hookchain tool result, part by part, `isError` set for an error result
/// (the tool failed, or the chain made an error result of the call):
///
/// | hookchain | MCP |
/// |---|---|
/// | text | a text block |
/// | image, inline (base64) | an image block |
/// | image, by URL | a resource link to the URL (MCP images are inline only) |
/// | JSON | a text block of compact JSON; a result that is one JSON object is also the result's `structuredContent` |
/// | resource link | a resource link block |
/// | resource, text or binary | an embedded resource block (`text`, or `blob` in base64) |
/// | audio | an audio block |
/// | reasoning | nothing (a model's, never a tool's) |
pub(crate) fn call_tool_result(result: ToolResult) -> CallToolResult {
    let parts = result.content.parts();
    let structured = match parts {
        [ContentPart::Json { value }] if value.is_object() => Some((**value).clone()),
        _ => None,
    };
    let content: Vec<ContentBlock> = parts.iter().filter_map(block_of).collect();
    let mut mcp = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    mcp.structured_content = structured;
    mcp
}

/// The MCP block of one part of a tool result, if it has one.
fn block_of(part: &ContentPart) -> Option<ContentBlock> {
    Some(match part {
        ContentPart::Text { text } => ContentBlock::text(text.clone()),
        ContentPart::Image { source } => match &**source {
            ImageSource::Base64 { media_type, data } => {
                ContentBlock::image(data.clone(), media_type.clone())
            }
            ImageSource::Url { url } => {
                ContentBlock::resource_link(Resource::new(url.clone(), "image"))
            }
            // A kind of source newer than this crate: its text, as other readers get it.
            _ => ContentBlock::text(part.to_text_lossy().into_owned()),
        },
        ContentPart::Json { value } => ContentBlock::text(value.to_string()),
        ContentPart::ResourceLink(link) => {
            let mut resource = Resource::new(link.uri.clone(), link.name.clone());
            resource.title = link.title.clone();
            resource.description = link.description.clone();
            resource.mime_type = link.mime_type.clone();
            ContentBlock::resource_link(resource)
        }
        ContentPart::Resource(resource) => match embedded(resource) {
            Some(contents) => ContentBlock::resource(contents),
            None => ContentBlock::text(part.to_text_lossy().into_owned()),
        },
        ContentPart::Audio(audio) => {
            ContentBlock::audio(audio.data.clone(), audio.media_type.clone())
        }
        // Reasoning is a model's; a kind of part newer than this crate is written as text.
        ContentPart::Reasoning(_) | ContentPart::RedactedReasoning { .. } => return None,
        other => ContentBlock::text(other.to_text_lossy().into_owned()),
    })
}

/// The MCP contents of `resource`; `None` for a kind of contents newer than this crate.
fn embedded(resource: &EmbeddedResource) -> Option<model::ResourceContents> {
    let (uri, mime_type) = (resource.uri.clone(), resource.mime_type.clone());
    Some(match &resource.contents {
        ResourceContents::Text(text) => model::ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: text.clone(),
            meta: None,
        },
        ResourceContents::Blob(blob) => model::ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob: blob.clone(),
            meta: None,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_one_text_block_and_an_error_result_sets_is_error() {
        let ok = serde_json::to_value(call_tool_result(ToolResult::ok("c1", "5"))).unwrap();
        assert_eq!(
            ok["content"],
            serde_json::json!([{"type": "text", "text": "5"}])
        );
        assert_ne!(ok["isError"], serde_json::json!(true));
        let error = call_tool_result(ToolResult::error("c2", "the disk is full"));
        assert_eq!(error.is_error, Some(true));
        let error = serde_json::to_value(error).unwrap();
        assert_eq!(error["content"][0]["text"], "the disk is full");
    }

    #[test]
    fn each_part_becomes_its_block() {
        use hookchain_core::message::{Content, ResourceLink};
        use serde_json::json;

        let content = Content::from(vec![
            ContentPart::text("a chart:"),
            ContentPart::image_base64("image/png", "iVBORw0KGgo="),
            ContentPart::image_url("https://example.com/cat.png"),
            ContentPart::json(json!([1, 2])),
            ContentPart::from(
                ResourceLink::new("file:///r.csv", "r.csv").with_mime_type("text/csv"),
            ),
            ContentPart::reasoning("never a tool's"),
            ContentPart::resource_text("test://notes", "text/plain", "hi"),
            ContentPart::from(EmbeddedResource::blob("test://raw", "AAAA")),
            ContentPart::audio_base64("audio/wav", "UklGRg=="),
        ]);
        let mcp = serde_json::to_value(call_tool_result(ToolResult::ok("c1", content))).unwrap();
        assert_eq!(
            mcp["content"],
            json!([
                {"type": "text", "text": "a chart:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "https://example.com/cat.png", "name": "image"},
                {"type": "text", "text": "[1,2]"},
                {"type": "resource_link", "uri": "file:///r.csv", "name": "r.csv", "mimeType": "text/csv"},
                {"type": "resource", "resource":
                    {"uri": "test://notes", "mimeType": "text/plain", "text": "hi"}},
                {"type": "resource", "resource": {"uri": "test://raw", "blob": "AAAA"}},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
            ])
        );
        assert!(mcp.get("structuredContent").is_none(), "{mcp}");

        // One JSON object: the structured result too, and its text for older clients.
        let object = ToolResult::ok("c2", Content::from(ContentPart::json(json!({"sum": 5}))));
        let mcp = serde_json::to_value(call_tool_result(object)).unwrap();
        assert_eq!(mcp["structuredContent"], json!({"sum": 5}));
        assert_eq!(
            mcp["content"],
            json!([{"type": "text", "text": "{\"sum\":5}"}])
        );
    }
}
