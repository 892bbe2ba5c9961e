use hookchain::prelude::*;

struct Settings;

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(Settings)
        .build();
    let _ = agent;
}
