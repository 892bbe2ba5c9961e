#![deny(dead_code)]

use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn never_used(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {}
