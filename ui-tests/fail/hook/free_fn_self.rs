use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
fn stamp(&self, request: &mut ModelRequest) {
    let _ = request;
}

fn main() {}
