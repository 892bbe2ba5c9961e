use hookchain::middleware;
use hookchain::prelude::*;

struct Redact;

#[middleware(phase = output)]
impl Redact {
    #[hook(before_model)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
