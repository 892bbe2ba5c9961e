//! `crate = path` names the hookchain crate by the given path (a renamed dependency).

#![deny(warnings)]

mod renamed {
    pub use hookchain::*;
}

use renamed::{Tool, tool};

/// Adds two numbers.
#[tool(crate = crate::renamed)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Shouts.
#[tool(crate = "crate::renamed")]
fn shout(text: String) -> String {
    text.to_uppercase()
}

fn main() {
    assert_eq!(add.spec().name, "add");
    assert_eq!(shout.spec().name, "shout");
}
