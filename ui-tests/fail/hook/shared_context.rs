use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn stamp(cx: &Context, request: &mut ModelRequest) {
    request.system_prompt = Some(cx.step().to_string());
}

fn main() {}
