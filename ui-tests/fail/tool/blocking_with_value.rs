//! `blocking` is a flag: it takes no value.

use hookchain::tool;

/// Charges a card through a synchronous client.
#[tool(blocking = true)]
fn charge(cents: u64) -> String {
    format!("charged {cents}")
}

fn main() {}
