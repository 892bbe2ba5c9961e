//! [`DynMiddleware`]: a [`Middleware`] behind a `Box<dyn ..>`.
//!
//! `Middleware` has generic methods (`next: N`, `out: &mut E`) and associated types, so it is
//! not object-safe. `DynMiddleware` is its object-safe twin: futures boxed, `next` and `out`
//! erased to `dyn`, the states erased to [`ErasedState`]. Every middleware implements it (a
//! blanket impl), so whatever the DSL or a hand-written impl makes can be a plugin.

use std::any::Any;

use futures::future::BoxFuture;

use super::state::{ErasedState, RunScoped, ThreadScoped, state_mismatch};
use crate::__private::Internal;
use crate::chain::{ChainChecks, Description};
use crate::context::{Context, ToolContext};
use crate::error::{BoxError, Error};
use crate::interrupt::Answer;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{
    Contributions, Emit, Flow, Hook, HookSet, JumpSet, Middleware, ModelNext, ToolNext,
};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

mod sealed {
    pub trait Sealed {}
    impl<M: crate::middleware::Middleware + 'static> Sealed for M {}
}

/// A middleware chosen at run time: any [`Middleware`], boxed (`Box<dyn DynMiddleware>`), to
/// sit in a [`Plugins`](super::Plugins) member of a static chain.
///
/// Implemented for every `M: Middleware + 'static` and sealed: box a middleware with
/// [`boxed`](super::boxed) or `Box::new(m)`. Its methods other than the
/// descriptive ones are the chain's machinery (boxed futures, erased `next`, erased state) and
/// hidden.
pub trait DynMiddleware: sealed::Sealed + Send + Sync + 'static {
    /// [`Middleware::NAME`]: what errors, interrupts, traces and `describe()` call it.
    fn name(&self) -> &'static str;

    /// [`Middleware::HOOKS`]: the hooks it implements; the others are skipped.
    fn hooks(&self) -> HookSet;

    /// [`Middleware::JUMPS`]: the jumps it declared, per hook.
    fn jumps(&self) -> JumpSet;

    /// [`Middleware::LIVE_STREAM`].
    fn live_stream(&self) -> bool;

    /// The positions it takes in the flattened chain (1 for a middleware; a chain's members).
    #[doc(hidden)]
    fn positions(&self) -> usize;

    #[doc(hidden)]
    fn new_state(&self) -> Box<dyn ErasedState>;

    #[doc(hidden)]
    fn new_thread_state(&self) -> Box<dyn ErasedState>;

    #[doc(hidden)]
    fn decode_state(
        &self,
        saved: serde_json::Value,
    ) -> Result<Box<dyn ErasedState>, serde_json::Error>;

    #[doc(hidden)]
    fn decode_thread_state(
        &self,
        saved: serde_json::Value,
    ) -> Result<Box<dyn ErasedState>, serde_json::Error>;

    #[doc(hidden)]
    fn new_stream_state(&self) -> Box<dyn Any + Send>;

    #[doc(hidden)]
    fn before_agent<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
    ) -> BoxFuture<'a, Result<Flow, Error>>;

    #[doc(hidden)]
    fn before_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        request: &'a mut ModelRequest,
    ) -> BoxFuture<'a, Result<Flow, Error>>;

    #[doc(hidden)]
    fn wrap_model_call<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        request: ModelRequest,
        next: &'a mut (dyn DynModelNext + 'a),
    ) -> BoxFuture<'a, Result<ModelResponse, Error>>;

    #[doc(hidden)]
    fn on_model_event(
        &self,
        state: &mut (dyn Any + Send),
        event: ModelEvent,
        out: &mut dyn Emit,
    ) -> Result<(), Error>;

    #[doc(hidden)]
    fn after_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        response: &'a mut ModelResponse,
    ) -> BoxFuture<'a, Result<Flow, Error>>;

    #[doc(hidden)]
    fn wrap_tool_call<'a>(
        &'a self,
        cx: ToolContext<'a>,
        state: &'a dyn ErasedState,
        thread: &'a dyn ErasedState,
        call: ToolCall,
        next: &'a mut (dyn DynToolNext + 'a),
    ) -> BoxFuture<'a, Result<ToolResult, Error>>;

    #[doc(hidden)]
    fn after_agent<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
    ) -> BoxFuture<'a, Result<(), Error>>;

    #[doc(hidden)]
    fn check_answer_at(&self, at: usize, answer: &Answer<'_>) -> Result<(), BoxError>;

    #[doc(hidden)]
    fn contribute(&self, to: &mut Contributions);

    #[doc(hidden)]
    fn describe_into(&self, description: &mut Description);
}

impl std::fmt::Debug for dyn DynMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DynMiddleware").field(&self.name()).finish()
    }
}

/// The inner part of a model-call onion, erased: what a plugin's `wrap_model_call` gets as
/// `next` (through [`ErasedModelNext`]).
#[doc(hidden)]
pub trait DynModelNext: Send {
    fn call_boxed<'a>(
        &'a mut self,
        cx: &'a mut Context,
        request: ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>>;
}

impl<N: ModelNext> DynModelNext for N {
    fn call_boxed<'a>(
        &'a mut self,
        cx: &'a mut Context,
        request: ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>> {
        Box::pin(self.call(cx, request))
    }
}

/// The inner part of a tool-call onion, erased.
#[doc(hidden)]
pub trait DynToolNext: Send {
    fn call_boxed<'a>(
        &'a mut self,
        cx: ToolContext<'a>,
        call: ToolCall,
    ) -> BoxFuture<'a, ToolResult>;
}

impl<N: ToolNext> DynToolNext for N {
    fn call_boxed<'a>(
        &'a mut self,
        cx: ToolContext<'a>,
        call: ToolCall,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(self.call(cx, call))
    }
}

/// An erased `next`, as the `N: ModelNext` a plugin's own `wrap_model_call` takes.
struct ErasedModelNext<'n>(&'n mut (dyn DynModelNext + 'n));

impl ModelNext for ErasedModelNext<'_> {
    // `async`, not the boxed future itself: an opaque type cannot name the intersection of
    // the two borrows the boxed future lives for.
    async fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> Result<ModelResponse, Error> {
        self.0.call_boxed(cx, request).await
    }
}

/// An erased `next`, as the `N: ToolNext` a plugin's own `wrap_tool_call` takes.
struct ErasedToolNext<'n>(&'n mut (dyn DynToolNext + 'n));

impl ToolNext for ErasedToolNext<'_> {
    async fn call(&mut self, cx: ToolContext<'_>, call: ToolCall) -> ToolResult {
        self.0.call_boxed(cx, call).await
    }
}

/// An erased `out`, as the `E: Emit` a plugin's own `on_model_event` takes.
struct ErasedEmit<'o>(&'o mut dyn Emit);

impl Emit for ErasedEmit<'_> {
    #[inline]
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error> {
        self.0.emit(event)
    }
}

/// `M`'s run-scoped state inside `state`; an error (never a panic) if it is another type.
fn own<'s, T: 'static>(
    name: &'static str,
    hook: Hook,
    state: &'s mut dyn ErasedState,
) -> Result<&'s mut T, Error> {
    state
        .as_any_mut()
        .downcast_mut::<T>()
        .ok_or_else(|| state_mismatch(name, hook))
}

/// [`own`], read-only (the tool path).
fn own_ref<'s, T: 'static>(
    name: &'static str,
    hook: Hook,
    state: &'s dyn ErasedState,
) -> Result<&'s T, Error> {
    state
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| state_mismatch(name, hook))
}

/// `M`'s run-scoped and thread-scoped states, for `hook`.
fn states<'s, M: Middleware + 'static>(
    hook: Hook,
    state: &'s mut dyn ErasedState,
    thread: &'s mut dyn ErasedState,
) -> Result<(&'s mut M::State, &'s mut M::ThreadState), Error> {
    Ok((own(M::NAME, hook, state)?, own(M::NAME, hook, thread)?))
}

/// [`states`], read-only (the tool path).
fn states_ref<'s, M: Middleware + 'static>(
    hook: Hook,
    state: &'s dyn ErasedState,
    thread: &'s dyn ErasedState,
) -> Result<(&'s M::State, &'s M::ThreadState), Error> {
    Ok((
        own_ref(M::NAME, hook, state)?,
        own_ref(M::NAME, hook, thread)?,
    ))
}

impl<M: Middleware + 'static> DynMiddleware for M {
    fn name(&self) -> &'static str {
        M::NAME
    }

    fn hooks(&self) -> HookSet {
        M::HOOKS
    }

    fn jumps(&self) -> JumpSet {
        M::JUMPS
    }

    fn live_stream(&self) -> bool {
        M::LIVE_STREAM
    }

    fn positions(&self) -> usize {
        ChainChecks::<M>::LEN
    }

    fn new_state(&self) -> Box<dyn ErasedState> {
        Box::new(RunScoped(M::State::default()))
    }

    fn new_thread_state(&self) -> Box<dyn ErasedState> {
        Box::new(ThreadScoped(M::ThreadState::default()))
    }

    fn decode_state(
        &self,
        saved: serde_json::Value,
    ) -> Result<Box<dyn ErasedState>, serde_json::Error> {
        Ok(Box::new(RunScoped(serde_json::from_value::<M::State>(
            saved,
        )?)))
    }

    fn decode_thread_state(
        &self,
        saved: serde_json::Value,
    ) -> Result<Box<dyn ErasedState>, serde_json::Error> {
        Ok(Box::new(ThreadScoped(serde_json::from_value::<
            M::ThreadState,
        >(saved)?)))
    }

    fn new_stream_state(&self) -> Box<dyn Any + Send> {
        Box::new(M::StreamState::default())
    }

    fn before_agent<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
    ) -> BoxFuture<'a, Result<Flow, Error>> {
        Box::pin(async move {
            let (state, thread) = states::<M>(Hook::BeforeAgent, state, thread)?;
            Middleware::before_agent(self, cx, state, thread).await
        })
    }

    fn before_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        request: &'a mut ModelRequest,
    ) -> BoxFuture<'a, Result<Flow, Error>> {
        Box::pin(async move {
            let (state, thread) = states::<M>(Hook::BeforeModel, state, thread)?;
            Middleware::before_model(self, cx, state, thread, request).await
        })
    }

    fn wrap_model_call<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        request: ModelRequest,
        next: &'a mut (dyn DynModelNext + 'a),
    ) -> BoxFuture<'a, Result<ModelResponse, Error>> {
        Box::pin(async move {
            let (state, thread) = states::<M>(Hook::WrapModelCall, state, thread)?;
            let next = ErasedModelNext(next);
            Middleware::wrap_model_call(self, cx, state, thread, request, next).await
        })
    }

    fn on_model_event(
        &self,
        state: &mut (dyn Any + Send),
        event: ModelEvent,
        out: &mut dyn Emit,
    ) -> Result<(), Error> {
        let state = state
            .downcast_mut::<M::StreamState>()
            .ok_or_else(|| state_mismatch(M::NAME, Hook::OnModelEvent))?;
        Middleware::on_model_event(self, state, event, &mut ErasedEmit(out))
    }

    fn after_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
        response: &'a mut ModelResponse,
    ) -> BoxFuture<'a, Result<Flow, Error>> {
        Box::pin(async move {
            let (state, thread) = states::<M>(Hook::AfterModel, state, thread)?;
            Middleware::after_model(self, cx, state, thread, response).await
        })
    }

    fn wrap_tool_call<'a>(
        &'a self,
        cx: ToolContext<'a>,
        state: &'a dyn ErasedState,
        thread: &'a dyn ErasedState,
        call: ToolCall,
        next: &'a mut (dyn DynToolNext + 'a),
    ) -> BoxFuture<'a, Result<ToolResult, Error>> {
        Box::pin(async move {
            let (state, thread) = states_ref::<M>(Hook::WrapToolCall, state, thread)?;
            let next = ErasedToolNext(next);
            Middleware::wrap_tool_call(self, cx, state, thread, call, next).await
        })
    }

    fn after_agent<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut dyn ErasedState,
        thread: &'a mut dyn ErasedState,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let (state, thread) = states::<M>(Hook::AfterAgent, state, thread)?;
            Middleware::after_agent(self, cx, state, thread).await
        })
    }

    fn check_answer_at(&self, at: usize, answer: &Answer<'_>) -> Result<(), BoxError> {
        Middleware::check_answer_at(self, at, answer, Internal::new())
    }

    fn contribute(&self, to: &mut Contributions) {
        to.collect(self);
    }

    fn describe_into(&self, description: &mut Description) {
        Middleware::describe_into(self, description);
    }
}

/// Whether `plugin` implements `hook`.
#[inline]
pub(crate) fn has(plugin: &dyn DynMiddleware, hook: Hook) -> bool {
    plugin.hooks().contains(hook)
}
