//! A `ToolContext` in a blocking tool: it borrows the run, which the blocking thread cannot.

use hookchain::prelude::*;
use hookchain::tool;

/// Charges a card through a synchronous client.
#[tool(blocking)]
fn charge(cx: ToolContext<'_>, cents: u64) -> String {
    format!("charged {cents} for call {}", cx.call_id())
}

fn main() {}
