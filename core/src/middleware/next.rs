//! The `next` handed to wrap hooks: the rest of the onion, callable any number of times.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use super::Internal;
use super::{Hook, Middleware};
use crate::context::{Context, Raiser, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::model::{ModelRequest, ModelResponse};
use crate::tool::ToolFailure;

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
/// Like [`ModelNext`]: call it zero, one or more times. The tool path does not fail: a tool's
/// failure, and an error that escapes an inner hook, arrive as a result with
/// [`ToolResult::is_error`] set. An interrupt raised inside pauses the run whatever this layer
/// does with the result (which then [`is_paused`](ToolResult::is_paused)).
pub trait ToolNext: Send {
    /// Runs the inner layers and the tool on `call`.
    fn call<'c>(
        &mut self,
        cx: ToolContext<'c>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send;
}

impl<N: ToolNext + ?Sized> ToolNext for &mut N {
    fn call<'c>(
        &mut self,
        cx: ToolContext<'c>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        (**self).call(cx, call)
    }
}

/// One wrapping member of the model-call onion: calls `M::wrap_model_call` with `M`'s own state
/// and the inner layers as `next`.
#[derive(Debug)]
pub struct ModelLayer<'a, M: Middleware, N> {
    middleware: &'a M,
    state: &'a mut M::State,
    thread: &'a mut M::ThreadState,
    next: N,
}

impl<'a, M: Middleware, N> ModelLayer<'a, M, N> {
    pub(crate) fn new(
        middleware: &'a M,
        state: &'a mut M::State,
        thread: &'a mut M::ThreadState,
        next: N,
    ) -> Self {
        Self {
            middleware,
            state,
            thread,
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
            .wrap_model_call(cx, self.state, self.thread, request, &mut self.next)
    }
}

/// One wrapping member of the tool-call onion: calls `M::wrap_tool_call` with `M`'s own state,
/// its own view of the call's context, and the inner layers as `next`.
#[derive(Debug)]
pub struct ToolLayer<'a, M: Middleware, N> {
    middleware: &'a M,
    state: &'a M::State,
    thread: &'a M::ThreadState,
    /// The member's position in the flattened chain: whose answers it reads, whose interrupts
    /// it raises.
    at: usize,
    next: N,
}

impl<'a, M: Middleware, N> ToolLayer<'a, M, N> {
    pub(crate) fn new(
        middleware: &'a M,
        state: &'a M::State,
        thread: &'a M::ThreadState,
        at: usize,
        next: N,
    ) -> Self {
        Self {
            middleware,
            state,
            thread,
            at,
            next,
        }
    }
}

impl<M: Middleware, N: ToolNext> ToolNext for ToolLayer<'_, M, N> {
    fn call<'c>(
        &mut self,
        cx: ToolContext<'c>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        let cx = cx.view(Raiser::Member(self.at));
        LayerOutcome::<_, M> {
            hook: self
                .middleware
                .wrap_tool_call(cx, self.state, self.thread, call, &mut self.next),
            cx,
            at: self.at,
            name: self.middleware.instance_name(Internal::new()),
            middleware: std::marker::PhantomData,
        }
    }
}

pin_project_lite::pin_project! {
    /// A `wrap_tool_call` hook's future, its outcome made a result: an interrupt is recorded
    /// on the call (out of band) and an error becomes an error result, so that the layers
    /// outside see a result either way.
    struct LayerOutcome<'c, F, M: ?Sized> {
        #[pin]
        hook: F,
        cx: ToolContext<'c>,
        at: usize,
        // The name the member is known by (its instance's, if it is named).
        name: &'static str,
        middleware: std::marker::PhantomData<fn(&M)>,
    }
}

impl<F, M> Future for LayerOutcome<'_, F, M>
where
    F: Future<Output = Result<ToolResult, Error>>,
    M: Middleware,
{
    type Output = ToolResult;

    #[inline]
    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<ToolResult> {
        let this = self.project();
        let outcome = std::task::ready!(this.hook.poll(task));
        Poll::Ready(match outcome {
            Ok(result) => result,
            Err(error) => hook_failed(this.cx, *this.at, M::NAME, this.name, error),
        })
    }
}

/// The result of a tool call whose `wrap_tool_call` hook (of the member at `at`, `middleware`
/// by type, `name` by instance) failed or paused. Out of line: the onion's hot path is the
/// hook's result, and this keeps each layer's `poll` small enough to inline.
#[cold]
#[inline(never)]
fn hook_failed(
    cx: &mut ToolContext<'_>,
    at: usize,
    middleware: &'static str,
    name: &'static str,
    error: Error,
) -> ToolResult {
    match error {
        // Named after the instance where the hook named them after the middleware (the
        // macros do), so that a named instance adds no future of its own to the onion.
        Error::Interrupted(interruption) => {
            let mut interruption = *interruption;
            interruption.renamed(middleware, name);
            cx.pause(interruption.raised_at(at, name));
            ToolResult::paused(cx.call_id())
        }
        error => {
            let error = error
                .renamed(middleware, name)
                .attribute(name, Hook::WrapToolCall);
            let failure = ToolFailure::from_middleware(cx.tool(), error);
            ToolResult::failed(cx.call_id(), failure)
        }
    }
}
