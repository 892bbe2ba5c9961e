//! A hand-written middleware that sets `IDENTITY` can be named in constraints, like one
//! written with the macros (its `Identified` is derived).

use hookchain::middleware::{False, HookSet, phase};
use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Redact;

impl Middleware for Redact {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Redact";
    const IDENTITY: Option<&'static str> = Some("ui::Redact");
    const HOOKS: HookSet = HookSet::NONE;
}

struct Audit;

#[middleware(after = Redact, requires = Redact)]
impl Audit {
    #[hook(before_model)]
    fn audit(&self) {}
}

fn main() {
    let chain = chain![Redact, Audit];
    assert_eq!(chain.describe().members().len(), 2);
}
