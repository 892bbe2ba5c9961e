use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_tool_call)]
async fn late_calls(cx: &mut Context, call: ToolCall) -> ToolResult {
    ToolResult::error(call.id, format!("step {} is too late for tools", cx.step()))
}

fn main() {}
