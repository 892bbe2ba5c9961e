// expect: middleware `Sneaky`: `WrapsModel` must be `True` exactly when `HOOKS` contains `Hook::WrapModelCall`
use hookchain::middleware::{False, phase};
use hookchain::prelude::*;

/// Overrides wrap_model_call by hand but says `WrapsModel = False`, with `HOOKS` left at "all":
/// the chain would skip the wrap silently, so the build fails instead.
struct Sneaky;

impl Middleware for Sneaky {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Sneaky";

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([])).chain(Sneaky).build().unwrap();
    let _ = futures::executor::block_on(agent.run("hi"));
}
