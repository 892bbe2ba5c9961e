use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_tool_call)]
async fn guard(
    cx: &mut Context,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    next.call(cx, call).await
}

fn main() {}
