use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model, phase = input)]
fn redact(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(after_model, phase = output)]
fn scrub(response: &mut ModelResponse) {
    let _ = response;
}

fn main() {
    // The empty chain has no phase of its own: it may stand before an Input member and after an
    // Output member.
    let _chain = chain![chain![], redact, chain![], scrub, chain![]];
}
