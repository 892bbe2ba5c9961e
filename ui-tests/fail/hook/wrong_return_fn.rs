// A plain `fn` hook runs through its synchronous form: a wrong return type is still reported
// once, at the user's `-> T`.
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
