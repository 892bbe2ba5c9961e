use hookchain::hook;
use hookchain::prelude::*;

#[hook(wrap_model_call)]
async fn retry(
    cx: &mut Context,
    request: ModelRequest,
    next: impl ToolNext,
) -> Result<ModelResponse, Error> {
    let _ = (cx, request, next);
    Ok(ModelResponse::text("x"))
}

fn main() {}
