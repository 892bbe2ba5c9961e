// A return type whose syntax shows it is wrong (a number, a reference, an `Option`) is reported
// by the macro, once per hook, at the user's `-> T`, for a plain `fn` hook as for an `async fn`.
use hookchain::prelude::*;
use hookchain::{hook, middleware};

#[hook(after_model)]
fn stamp(response: &mut ModelResponse) -> usize {
    response.message.text().len()
}

#[hook(before_agent)]
fn greet() -> &'static str {
    "hello"
}

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn check(&self, request: &ModelRequest) -> Option<Flow> {
        let _ = request;
        None
    }
}

fn main() {}
