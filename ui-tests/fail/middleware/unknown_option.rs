use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware(priority = 1)]
impl Audit {
    #[hook(before_model)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
