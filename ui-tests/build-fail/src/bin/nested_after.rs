// expect: middleware `Audit` must be listed after `Redact` (it declares `after = Redact`)
//
// The constraint also holds across nested chains: the agent checks the flattened chain.
use hookchain::prelude::*;
use hookchain::middleware;

struct Redact;

#[middleware]
impl Redact {
    #[hook(before_model)]
    fn redact(&self) {}
}

struct Audit;

#[middleware(after = Redact)]
impl Audit {
    #[hook(before_model)]
    fn audit(&self) {}
}

fn main() {
    // Plain tuples: no `chain!` check, so the agent's check must catch it.
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(((Audit,), (Redact,)))
        .build().unwrap();
    let _ = futures::executor::block_on(agent.run("hi"));
}
