use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model)]
async fn a(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(after_model)]
async fn b(response: &mut ModelResponse) {
    let _ = response;
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![a b])
        .build().unwrap();
    let _ = agent;
}
