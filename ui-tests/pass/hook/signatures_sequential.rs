//! Every accepted signature of the sequential hooks (`before_agent`, `before_model`,
//! `after_model`, `after_agent`): with and without the context and the state, in any order,
//! `async` or not.

use hookchain::prelude::*;
use hookchain::{chain, hook};

// before_agent

#[hook(before_agent)]
async fn before_agent_bare() {}

#[hook(before_agent)]
fn before_agent_sync() {}

#[hook(before_agent)]
async fn before_agent_cx(cx: &mut Context) {
    let _ = cx.step();
}

#[hook(before_agent, state = u32)]
async fn before_agent_state(runs: &mut u32) {
    *runs += 1;
}

#[hook(before_agent, state = u32)]
fn before_agent_state_cx_sync(runs: &mut u32, cx: &mut Context) {
    *runs += cx.step() as u32;
}

// before_model

#[hook(before_model)]
async fn before_model_request(request: &mut ModelRequest) {
    request.system_prompt = Some("hi".into());
}

#[hook(before_model)]
fn before_model_sync(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(before_model)]
async fn before_model_bare() {}

#[hook(before_model)]
async fn before_model_cx(cx: &mut Context, request: &mut ModelRequest) {
    let _ = (cx, request);
}

#[hook(before_model)]
async fn before_model_cx_after(request: &mut hookchain::ModelRequest, _cx: &mut Context) {
    let _ = request;
}

#[hook(before_model, state = u32)]
async fn before_model_all(cx: &mut Context, calls: &mut u32, request: &mut ModelRequest) {
    *calls += 1;
    let _ = (cx, request);
}

#[hook(before_model, state = Vec<String>)]
fn before_model_state_sync(seen: &mut Vec<String>, request: &mut ModelRequest) {
    seen.extend(request.system_prompt.clone());
}

// after_model

#[hook(after_model)]
async fn after_model_response(response: &mut ModelResponse) {
    response.message.content.push_text("!");
}

#[hook(after_model)]
fn after_model_sync(response: &mut ModelResponse) {
    let _ = response;
}

#[hook(after_model)]
async fn after_model_cx(cx: &mut Context, response: &mut ModelResponse) {
    let _ = (cx, response);
}

#[hook(after_model, state = u64)]
fn after_model_all_sync(response: &mut ModelResponse, tokens: &mut u64, cx: &mut Context) {
    *tokens += cx.usage().total();
    let _ = response;
}

// after_agent

#[hook(after_agent)]
async fn after_agent_bare() {}

#[hook(after_agent)]
fn after_agent_sync(cx: &mut Context) {
    let _ = cx.model_calls();
}

#[hook(after_agent, state = u32)]
async fn after_agent_state(cx: &mut Context, runs: &mut u32) {
    let _ = (cx, runs);
}

fn main() {
    let _chain = chain![
        before_agent_bare,
        before_agent_sync,
        before_agent_cx,
        before_agent_state,
        before_agent_state_cx_sync,
        before_model_request,
        before_model_sync,
        before_model_bare,
        before_model_cx,
        before_model_cx_after,
        before_model_all,
        before_model_state_sync,
        after_model_response,
        after_model_sync,
        after_model_cx,
        after_model_all_sync,
        after_agent_bare,
        after_agent_sync,
        after_agent_state,
    ];
}
