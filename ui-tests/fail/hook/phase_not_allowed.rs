use hookchain::hook;
use hookchain::prelude::*;

#[hook(after_model, phase = input)]
async fn redact(response: &mut ModelResponse) {
    response.message.content = Default::default();
}

fn main() {}
