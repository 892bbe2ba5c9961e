// `.build()` is left out: its own error (a follow-on from `AgentBuilder::build`'s bound) is not
// this test's subject.
use hookchain::prelude::*;

struct Settings;

fn main() {
    let builder = Agent::builder(ScriptedModel::new([])).chain(Settings);
    let _ = builder;
}
