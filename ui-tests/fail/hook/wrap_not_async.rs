use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_model_call)]
fn cached(request: ModelRequest, next: impl ModelNext) -> ModelResponse {
    let _ = (request, next);
    ModelResponse::text("cached")
}

fn main() {}
