use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_model_call)]
async fn retry(
    cx: &mut Context,
    request: ModelRequest,
    next: &mut impl ModelNext,
) -> Result<ModelResponse, Error> {
    next.call(cx, request).await
}

fn main() {}
