use hookchain::hook;
use hookchain::prelude::*;

#[hook(after_model, live_stream = true)]
fn observe(response: &mut ModelResponse) {
    let _ = response;
}

fn main() {}
