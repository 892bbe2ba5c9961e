//! An optional built-in whose builder's `Result` is left inside the `Option`: the fix is
//! `.transpose()?`.

use hookchain::builtin::ModelRetry;
use hookchain::prelude::*;

fn main() {
    let retries = Some(3);
    let retry = retries.map(|attempts| ModelRetry::builder().max_retries(attempts).build());
    let _ = Agent::builder(ScriptedModel::new([])).chain(retry);
}
