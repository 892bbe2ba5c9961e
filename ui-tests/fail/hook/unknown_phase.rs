use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, phase = early)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
