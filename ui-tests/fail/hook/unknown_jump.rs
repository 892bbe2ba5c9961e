use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model, jumps = [finish])]
async fn stop(request: &mut ModelRequest) -> Flow {
    let _ = request;
    Flow::end()
}

fn main() {}
