use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }

    #[hook(before_model)]
    fn log(&self, request: &mut ModelRequest) {
        let _ = request;
    }
}

fn main() {}
