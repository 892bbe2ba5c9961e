use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Audit;

#[middleware]
impl Audit {
    #[hook(after_model)]
    fn audit(&self, response: ModelResponse) {
        let _ = response;
    }
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![Audit, Some(Audit)])
        .build().unwrap();
    let _ = agent;
}
