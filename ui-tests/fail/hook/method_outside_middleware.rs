use hookchain::hook;
use hookchain::prelude::*;

struct Audit;

impl Audit {
    #[hook(before_model)]
    async fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
