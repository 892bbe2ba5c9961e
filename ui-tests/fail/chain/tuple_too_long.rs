// A tuple is a chain of up to 12 members; the message says `chain![..]` takes any number.
// `.build()` is left out: its own error (a follow-on from `AgentBuilder::build`'s bound) is not
// this test's subject.
use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    let _ = request;
}

fn main() {
    let s = stamp;
    let builder =
        Agent::builder(ScriptedModel::new([])).chain((s, s, s, s, s, s, s, s, s, s, s, s, s));
    let _ = builder;
}
