use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_model_call)]
async fn retry(
    cx: &mut Context,
    request: &mut ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    next.call(cx, request.clone()).await
}

fn main() {}
