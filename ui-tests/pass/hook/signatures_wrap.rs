//! Every accepted signature of the wrap hooks: `next` as `impl Trait` or as a type parameter
//! (inline bound or `where` clause), with and without the context and the state.

use hookchain::prelude::*;
use hookchain::{chain, hook};

// wrap_model_call

#[hook(wrap_model_call)]
async fn model_impl_next(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    next.call(cx, request).await
}

#[hook(wrap_model_call)]
async fn model_generic_next<N: ModelNext>(
    cx: &mut Context,
    request: ModelRequest,
    mut next: N,
) -> Result<ModelResponse, Error> {
    next.call(cx, request).await
}

#[hook(wrap_model_call)]
async fn model_where_next<N>(
    cx: &mut Context,
    request: ModelRequest,
    mut next: N,
) -> Result<ModelResponse, Error>
where
    N: ModelNext,
{
    next.call(cx, request).await
}

#[hook(wrap_model_call)]
async fn model_no_next(request: ModelRequest) -> ModelResponse {
    ModelResponse::text(format!("{} messages", request.messages.len()))
}

#[hook(wrap_model_call)]
async fn model_short_circuit() -> ModelResponse {
    ModelResponse::text("cached")
}

#[hook(wrap_model_call, state = u32)]
async fn model_with_state(
    attempts: &mut u32,
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    *attempts += 1;
    next.call(cx, request).await
}

// wrap_tool_call

#[hook(wrap_tool_call)]
async fn tool_impl_next(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    Ok(next.call(cx, call).await)
}

#[hook(wrap_tool_call)]
async fn tool_generic_next<N: ToolNext>(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: N,
) -> Result<ToolResult, Error> {
    Ok(next.call(cx, call).await)
}

#[hook(wrap_tool_call)]
async fn tool_no_next(call: ToolCall) -> ToolResult {
    ToolResult::ok(call.id, "done")
}

#[hook(wrap_tool_call, state = u32)]
async fn tool_with_state(
    limit: &u32,
    call: ToolCall,
    cx: ToolContext<'_>,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    if cx.tool_calls() > *limit as usize {
        return Ok(ToolResult::error(call.id, "too many tool calls"));
    }
    Ok(next.call(cx, call).await)
}

fn main() {
    let _chain = chain![
        model_impl_next,
        model_generic_next,
        model_where_next,
        model_no_next,
        model_short_circuit,
        model_with_state,
        tool_impl_next,
        tool_generic_next,
        tool_no_next,
        tool_with_state,
    ];
}
