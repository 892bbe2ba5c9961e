//! The `next` handed to wrap hooks: the rest of the onion, callable any number of times.

use std::future::Future;

use super::{Hook, Middleware};
use crate::context::{Context, ToolContext};
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
    ///
    /// Pass the hook's own context; the inner layers see the same run with their own state.
    fn call<S: Send>(
        &mut self,
        cx: &mut Context<'_, S>,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send;
}

impl<N: ModelNext + ?Sized> ModelNext for &mut N {
    fn call<S: Send>(
        &mut self,
        cx: &mut Context<'_, S>,
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
    fn call<S: Sync>(
        &mut self,
        cx: &ToolContext<'_, S>,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send;
}

impl<N: ToolNext + ?Sized> ToolNext for &mut N {
    fn call<S: Sync>(
        &mut self,
        cx: &ToolContext<'_, S>,
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
    async fn call<S: Send>(
        &mut self,
        cx: &mut Context<'_, S>,
        request: ModelRequest,
    ) -> Result<ModelResponse, Error> {
        let mut own = Context::new(&mut *cx.run, &mut *self.state);
        self.middleware
            .wrap_model_call(&mut own, request, &mut self.next)
            .await
            .map_err(|error| error.attribute(M::NAME, Hook::WrapModelCall))
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
    async fn call<S: Sync>(
        &mut self,
        cx: &ToolContext<'_, S>,
        call: ToolCall,
    ) -> Result<ToolResult, Error> {
        let own = ToolContext::new(cx.run, self.state);
        self.middleware
            .wrap_tool_call(&own, call, &mut self.next)
            .await
            .map_err(|error| error.attribute(M::NAME, Hook::WrapToolCall))
    }
}
