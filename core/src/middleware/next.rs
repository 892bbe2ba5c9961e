//! The `next` handed to wrap hooks: the rest of the onion, callable any number of times.

use std::future::Future;

use super::Middleware;
use crate::context::Context;
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::model::{ModelRequest, ModelResponse};

/// The inner part of the model-call onion, as seen by a `wrap_model_call` hook.
///
/// Call it zero times (short-circuit, cache hit), once (the normal case) or several times
/// (retry, fallback). Each call runs every inner wrap from the request it is given, so an inner
/// layer's edit to the request appears exactly once per attempt.
pub trait ModelNext: Send {
    /// Runs the inner layers and the model on `request`.
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send;
}

impl<N: ModelNext + ?Sized> ModelNext for &mut N {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        (**self).call(cx, request)
    }
}

/// The inner part of the tool-call onion, as seen by a `wrap_tool_call` hook.
///
/// Like [`ModelNext`]: call it zero, one or more times. Tool failures arrive as `Ok` results with
/// [`ToolResult::is_error`] set; `Err` means a hook failed.
pub trait ToolNext: Send {
    /// Runs the inner layers and the tool on `call`.
    fn call(
        &mut self,
        cx: &Context,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send;
}

impl<N: ToolNext + ?Sized> ToolNext for &mut N {
    fn call(
        &mut self,
        cx: &Context,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        (**self).call(cx, call)
    }
}

/// One wrapping member of the model-call onion: calls `M::wrap_model_call` with `M`'s own state
/// and the inner layers as `next`.
#[derive(Debug)]
pub struct ModelLayer<'a, M: Middleware, N> {
    middleware: &'a M,
    state: &'a mut M::State,
    next: N,
}

impl<'a, M: Middleware, N> ModelLayer<'a, M, N> {
    pub(crate) fn new(middleware: &'a M, state: &'a mut M::State, next: N) -> Self {
        Self {
            middleware,
            state,
            next,
        }
    }
}

impl<M: Middleware, N: ModelNext> ModelNext for ModelLayer<'_, M, N> {
    // Returns the hook's future itself: a layer adds no future of its own, so each wrapping
    // member nests exactly one future (see the crate docs on onion depth).
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        self.middleware
            .wrap_model_call(cx, self.state, request, &mut self.next)
    }
}

/// One wrapping member of the tool-call onion: calls `M::wrap_tool_call` with `M`'s own state and
/// the inner layers as `next`.
#[derive(Debug)]
pub struct ToolLayer<'a, M: Middleware, N> {
    middleware: &'a M,
    state: &'a M::State,
    next: N,
}

impl<'a, M: Middleware, N> ToolLayer<'a, M, N> {
    pub(crate) fn new(middleware: &'a M, state: &'a M::State, next: N) -> Self {
        Self {
            middleware,
            state,
            next,
        }
    }
}

impl<M: Middleware, N: ToolNext> ToolNext for ToolLayer<'_, M, N> {
    fn call(
        &mut self,
        cx: &Context,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        self.middleware
            .wrap_tool_call(cx, self.state, call, &mut self.next)
    }
}
