use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model, phase = input)]
async fn scrub(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(after_model, phase = output)]
async fn redact(response: &mut ModelResponse) {
    let _ = response;
}

#[hook(before_model)]
async fn audit(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {
    let _chain = chain![audit, redact, scrub];
}
