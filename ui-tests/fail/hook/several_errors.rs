use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, colour = 1, phase = early)]
async fn stamp(request: &mut ModelRequest, x: u32) {
    let _ = (request, x);
}

fn main() {}
