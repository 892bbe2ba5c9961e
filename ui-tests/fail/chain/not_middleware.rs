use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model)]
async fn audit(request: &mut ModelRequest) {
    let _ = request;
}

struct Settings;

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![audit, Settings, audit])
        .build().unwrap();
    let _ = agent;
}
