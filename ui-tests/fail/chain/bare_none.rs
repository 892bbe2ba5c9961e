use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![stamp, None])
        .build().unwrap();
    let _ = agent;
}
