use hookchain::builtin::ModelRetry;
use hookchain::chain;
use hookchain::prelude::*;

fn main() {
    let builder = Agent::builder(ScriptedModel::new([])).chain(chain![ModelRetry::builder()]);
    let _ = builder;
}
