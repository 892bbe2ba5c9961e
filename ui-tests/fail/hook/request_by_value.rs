use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn stamp(request: ModelRequest) {
    let _ = request;
}

fn main() {}
