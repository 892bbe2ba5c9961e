use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn stamp(cx: &mut Context, again: &mut Context, request: &mut ModelRequest) {
    let _ = (cx, again, request);
}

fn main() {}
