//! `#[middleware]` on a hand-written impl whose `HOOKS` leaves out the wrap it overrides: the
//! chain would skip the wrap, so the impl is refused at `HOOKS`, in `cargo check`.

use hookchain::middleware;
use hookchain::middleware::HookSet;
use hookchain::prelude::*;

struct Sneaky;

#[middleware]
impl Middleware for Sneaky {
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);

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

fn main() {}
