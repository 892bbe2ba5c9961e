// expect: a middleware named in a `before`, `after` or `requires` constraint has no identity: set `Middleware::IDENTITY` in its hand-written impl
use hookchain::middleware::{False, HookSet, phase};
use hookchain::prelude::*;
use hookchain::{chain, middleware};

/// Hand-written, with no `IDENTITY`: it cannot be named.
struct Redact;

impl Middleware for Redact {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Redact";
    const HOOKS: HookSet = HookSet::NONE;
}

struct Audit;

#[middleware(after = Redact)]
impl Audit {
    #[hook(before_model)]
    fn audit(&self) {}
}

fn main() {
    let _chain = chain![Redact, Audit];
}
