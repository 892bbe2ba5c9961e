use hookchain::hook;
use hookchain::prelude::*;

#[derive(Default)]
struct Counts {
    calls: u32,
}

#[hook(before_model)]
async fn count(counts: &mut Counts, request: &mut ModelRequest) {
    counts.calls += 1;
    let _ = request;
}

fn main() {}
