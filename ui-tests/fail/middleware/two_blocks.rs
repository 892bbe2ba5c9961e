use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

#[middleware]
impl Audit {
    #[hook(after_model)]
    fn check(&self, response: &mut ModelResponse) {
        let _ = response;
    }
}

fn main() {}
