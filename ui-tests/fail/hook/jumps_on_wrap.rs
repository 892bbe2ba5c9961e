use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_model_call, jumps = [end])]
async fn retry(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    next.call(cx, request).await
}

fn main() {}
