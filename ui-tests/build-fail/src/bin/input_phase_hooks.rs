// expect: middleware `Leaky` is in the Input phase but has `after_*`, `on_model_event` or wrap hooks
use hookchain::middleware::{False, HookSet, phase};
use hookchain::prelude::*;

/// A hand-written Input middleware with an `after_model` hook: the macros reject this at the
/// attribute; a hand-written impl fails when the chain is built.
struct Leaky;

impl Middleware for Leaky {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Input;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Leaky";
    const HOOKS: HookSet = HookSet::of(Hook::AfterModel);
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([])).chain((Leaky,)).build().unwrap();
    let _ = futures::executor::block_on(agent.run("hi"));
}
