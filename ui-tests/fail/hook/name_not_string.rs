use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, name = 3)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
