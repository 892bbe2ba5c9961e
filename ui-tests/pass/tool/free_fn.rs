//! A free `async fn` and a plain `fn` as tools, both registered and called directly, under
//! `#![deny(warnings)]` (the expansion adds no warning) and with public items documented.

#![deny(warnings, missing_docs)]

use hookchain::prelude::*;
use hookchain::{ToolError, tool};

/// Adds two numbers.
#[tool]
pub async fn add(a: i64, b: i64) -> Result<i64, ToolError> {
    Ok(a + b)
}

/// Says hello.
#[tool(name = "say_hello", description = "Greets someone by name.")]
fn hello(name: String) -> String {
    format!("hello, {name}")
}

/// Does nothing, and says so.
#[tool]
async fn nothing() {}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(add)
        .tool(hello)
        .tool(nothing)
        .build().unwrap();
    let _ = agent;
    let _sum = add::call(1, 2);
    let _greeting: String = hello::call("Ada".to_owned());
    let _unit = nothing::call();
}
