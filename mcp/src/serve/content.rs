//! What an MCP client reads of a hookchain tool result.

use hookchain_core::ToolResult;
use rmcp::model::{CallToolResult, ContentBlock};

/// The MCP result of a hookchain tool result: its content as one text block, `isError` set
/// for an error result (the tool failed, or the chain made an error result of the call).
///
/// The one place that reads a tool result's content on the serving side: when results become
/// rich content (images, structured JSON), this is what maps each part to its MCP block.
pub(crate) fn call_tool_result(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.content)];
    if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
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
}
