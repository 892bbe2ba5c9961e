//! The expansion names nothing through the prelude: a crate shadowing `Result`, `Option`,
//! `String`, `Some` and `Send` still compiles.

#![deny(warnings)]
#![allow(dead_code)]

use hookchain::tool;

struct Result;
struct Option;
struct String;
struct Some;
struct Send;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
