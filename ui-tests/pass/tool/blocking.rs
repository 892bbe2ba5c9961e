//! `#[tool(blocking)]` on a plain `fn`, on an impl block whose type is `Clone`, and with
//! `crate = path`: synchronous bodies run on tokio's blocking threads.

#![deny(warnings)]

use std::sync::Arc;

use hookchain::prelude::*;
use hookchain::{Tool, tool};

mod renamed {
    pub use hookchain::*;
}

/// Hashes a text, slowly.
#[tool(blocking)]
fn digest(
    /// The text.
    text: String,
) -> Result<u64, std::io::Error> {
    Ok(text.bytes().map(u64::from).sum())
}

/// A synchronous payment client.
#[derive(Clone)]
struct Payments {
    key: Arc<str>,
}

#[tool(name = "charge", blocking)]
impl Payments {
    /// Charges a card.
    fn charge(&self, cents: u64) -> String {
        format!("charged {cents} with {}", self.key)
    }
}

/// Shouts.
#[tool(blocking, crate = crate::renamed)]
fn shout(text: String) -> String {
    text.to_uppercase()
}

fn main() {
    assert_eq!(digest::call("ab".to_owned()).unwrap(), 195);
    assert_eq!(shout.spec().name, "shout");
    let payments = Payments { key: "k".into() };
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(digest)
        .tool(payments)
        .build()
        .unwrap();
    let _ = agent;
}
