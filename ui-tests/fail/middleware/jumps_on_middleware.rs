use hookchain::middleware;
use hookchain::prelude::*;

struct Stop;

#[middleware(jumps = [end])]
impl Stop {
    #[hook(before_model)]
    fn stop(&self, request: &mut ModelRequest) -> Flow {
        let _ = request;
        Flow::end()
    }
}

fn main() {}
