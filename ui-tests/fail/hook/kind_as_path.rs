use hookchain::hook;
use hookchain::prelude::*;

#[hook(Hook::BeforeModel)]
fn stamp(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {}
