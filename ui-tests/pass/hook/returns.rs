//! Every accepted return type, for each kind of hook: `()`, `Flow` and `Result`s with
//! `hookchain::Error` or the user's own error type.

use std::fmt;

use hookchain::prelude::*;
use hookchain::{chain, hook};

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

impl std::error::Error for MyError {}

// Sequential hooks.

#[hook(before_model)]
async fn unit(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(before_model)]
async fn unit_explicit(request: &mut ModelRequest) -> () {
    let _ = request;
}

#[hook(before_model)]
async fn flow(request: &mut ModelRequest) -> Flow {
    let _ = request;
    Flow::Continue
}

#[hook(before_model)]
fn flow_sync(request: &mut ModelRequest) -> Flow {
    let _ = request;
    Flow::respond(ModelResponse::text("early"))
}

#[hook(before_agent)]
async fn result_unit() -> Result<(), Error> {
    Ok(())
}

#[hook(after_model)]
async fn result_unit_mine(response: &mut ModelResponse) -> Result<(), MyError> {
    if response.message.content.is_empty() {
        return Err(MyError);
    }
    Ok(())
}

#[hook(after_model)]
fn result_unit_boxed(
    response: &mut ModelResponse,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let _ = response;
    Ok(())
}

#[hook(before_model)]
async fn result_flow(request: &mut ModelRequest) -> Result<Flow, Error> {
    let _ = request;
    Ok(Flow::Continue)
}

#[hook(before_agent)]
fn result_flow_mine() -> Result<Flow, MyError> {
    Ok(Flow::Continue)
}

#[hook(after_agent)]
async fn done_unit() {}

#[hook(after_agent)]
async fn done_result(cx: &mut Context) -> Result<(), MyError> {
    let _ = cx;
    Ok(())
}

// wrap_model_call

#[hook(wrap_model_call)]
async fn model_response(request: ModelRequest) -> ModelResponse {
    let _ = request;
    ModelResponse::text("x")
}

#[hook(wrap_model_call)]
async fn model_result(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    next.call(cx, request).await
}

#[hook(wrap_model_call)]
async fn model_result_mine(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, MyError> {
    next.call(cx, request).await.map_err(|_| MyError)
}

// wrap_tool_call

#[hook(wrap_tool_call)]
async fn tool_result(call: ToolCall) -> ToolResult {
    ToolResult::ok(call.id, "x")
}

#[hook(wrap_tool_call)]
async fn tool_result_ok(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    Ok(next.call(cx, call).await)
}

#[hook(wrap_tool_call)]
async fn tool_result_mine(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, MyError> {
    Ok(next.call(cx, call).await)
}

fn main() {
    let _chain = chain![
        unit,
        unit_explicit,
        flow,
        flow_sync,
        result_unit,
        result_unit_mine,
        result_unit_boxed,
        result_flow,
        result_flow_mine,
        done_unit,
        done_result,
        model_response,
        model_result,
        model_result_mine,
        tool_result,
        tool_result_ok,
        tool_result_mine,
    ];
}
