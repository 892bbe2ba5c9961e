use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model)]
async fn stamp(request: ModelRequest) {
    let _ = request;
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![stamp])
        .build().unwrap();
    let _ = agent;
}
