//! A blocking method tool whose type is not `Clone`: each call's thread owns a clone of it.

use hookchain::tool;

/// A synchronous payment client.
struct Payments {
    key: String,
}

#[tool(blocking)]
impl Payments {
    /// Charges a card.
    fn charge(&self, cents: u64) -> String {
        format!("charged {cents} with {}", self.key)
    }
}

fn main() {}
