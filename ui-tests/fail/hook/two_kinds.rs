use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, after_model)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
