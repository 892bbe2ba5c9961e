use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, phase = input, phase = wrap)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
