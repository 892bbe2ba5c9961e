//! `spawn_blocking` is not an option of `#[tool]`: the message names `blocking`.

use hookchain::tool;

/// Charges a card through a synchronous client.
#[tool(spawn_blocking)]
fn charge(cents: u64) -> String {
    format!("charged {cents}")
}

fn main() {}
