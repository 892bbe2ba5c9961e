use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(after_model, phase = output)]
async fn redact(response: &mut ModelResponse) {
    response.message.content = response.message.text().replace("secret", "***").into();
}

#[hook(before_model)]
async fn audit(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {
    let _chain = chain![redact, audit];
}
