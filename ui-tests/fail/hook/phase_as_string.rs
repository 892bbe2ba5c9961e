use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, phase = "input")]
fn stamp(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {}
