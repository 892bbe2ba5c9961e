use hookchain::builtin::ModelRetry;
use hookchain::prelude::*;

fn main() {
    let builder = Agent::builder(ScriptedModel::new([])).chain(ModelRetry::builder().build());
    let _ = builder;
}
