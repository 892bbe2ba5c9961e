use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware(phase = input)]
impl Middleware for Audit {
    async fn before_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        _request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        Ok(Flow::Continue)
    }
}

fn main() {}
