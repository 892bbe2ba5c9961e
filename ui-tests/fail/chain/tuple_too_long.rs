use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {
    let s = stamp;
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain((s, s, s, s, s, s, s, s, s, s, s, s, s))
        .build();
    let _ = agent;
}
