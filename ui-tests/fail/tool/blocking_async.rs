//! `#[tool(blocking)]` on an `async fn`: the body of a blocking tool is synchronous.

use hookchain::tool;

/// Charges a card through a synchronous client.
#[tool(blocking)]
async fn charge(cents: u64) -> String {
    format!("charged {cents}")
}

fn main() {}
