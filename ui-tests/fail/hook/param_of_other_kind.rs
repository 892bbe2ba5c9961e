use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn redact(response: &mut ModelResponse) {
    response.message.content = Default::default();
}

fn main() {}
