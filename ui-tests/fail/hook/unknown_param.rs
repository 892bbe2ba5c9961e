use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn stamp(request: &mut ModelRequest, x: u32) {
    request.system_prompt = Some(x.to_string());
}

fn main() {}
