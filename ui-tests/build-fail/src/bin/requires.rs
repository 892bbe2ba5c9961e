// expect: middleware `Approval` requires `Checkpointing` in the same chain (it declares `requires = Checkpointing`): add `Checkpointing` to the chain
use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Checkpointing;

#[middleware]
impl Checkpointing {
    #[hook(after_model)]
    fn save(&self) {}
}

struct Approval;

#[middleware(requires = Checkpointing)]
impl Approval {
    #[hook(before_model)]
    fn ask(&self) {}
}

fn main() {
    let _chain = chain![Approval];
}
