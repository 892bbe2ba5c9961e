use hookchain::prelude::*;
use hookchain::hook;

#[hook(before_modle)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
