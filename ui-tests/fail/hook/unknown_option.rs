use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, colour = 1)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
