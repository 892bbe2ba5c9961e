//! `chain![]` is the empty chain.

use hookchain::chain;
use hookchain::prelude::*;

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello"));
}
