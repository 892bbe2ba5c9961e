//! `#[middleware]` on a hand-written Input impl with an `after_model` hook: refused at `Phase`,
//! in `cargo check`.

use hookchain::middleware;
use hookchain::middleware::phase;
use hookchain::prelude::*;

struct Leaky;

#[middleware]
impl Middleware for Leaky {
    type Phase = phase::Input;

    async fn after_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        _response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        Ok(Flow::Continue)
    }
}

fn main() {}
