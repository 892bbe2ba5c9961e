// expect: middleware `Retry` must be listed before `Cache` (it declares `before = Cache`)
use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Cache;

#[middleware]
impl Cache {
    #[hook(before_model)]
    fn lookup(&self) {}
}

struct Retry;

#[middleware(before = [Cache])]
impl Retry {
    #[hook(after_model)]
    fn check(&self) {}
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![Cache, Retry])
        .build().unwrap();
    let _ = agent;
}
