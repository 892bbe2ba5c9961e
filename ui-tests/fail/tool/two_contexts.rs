use hookchain::{ToolContext, tool};

/// Tells the call's id.
#[tool]
async fn whoami(cx: ToolContext<'_>, again: ToolContext<'_>) -> String {
    format!("{} {}", cx.call_id(), again.call_id())
}

fn main() {}
