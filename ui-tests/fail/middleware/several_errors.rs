use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn stamp(&self, request: ModelRequest) {
        let _ = request;
    }

    #[hook(after_model)]
    fn redact(&self, response: &mut ModelRequest) {
        let _ = response;
    }
}

fn main() {}
