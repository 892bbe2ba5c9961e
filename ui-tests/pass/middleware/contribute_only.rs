//! A `#[middleware]` block with a `#[contribute]` method and no hook is a middleware.

use hookchain::middleware;
use hookchain::middleware::Contributions;
use hookchain::prelude::*;

struct Guidelines;

#[middleware]
impl Guidelines {
    #[contribute]
    fn pieces(&self, to: &mut Contributions) {
        to.system_prompt("Answer in English.");
    }
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(Guidelines)
        .build()
        .unwrap();
    assert_eq!(agent.chain().describe().contributions().len(), 1);
}
