//! Turns what a `#[hook]` function returns into what the `Middleware` trait expects.
//!
//! Each conversion is a trait on the user's return type, carrying the diagnostic for a wrong
//! return type; the macros span the conversion at the user's `-> T`, so that is where the error
//! points.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::error::{BoxError, Error};
use crate::message::ToolResult;
use crate::middleware::{Flow, Hook, Middleware};
use crate::model::ModelResponse;

/// A return type of `before_agent`, `before_model` and `after_model` hooks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a return type a `before_agent`, `before_model` or `after_model` \
               hook can have",
    label = "return `()`, `Flow`, `Result<(), E>` or `Result<Flow, E>` here",
    note = "`E` is any error type that converts into `Box<dyn std::error::Error + Send + Sync>`"
)]
pub trait IntoFlow {
    /// The conversion.
    fn into_flow(self) -> Result<Flow, Error>;
}

#[diagnostic::do_not_recommend]
impl IntoFlow for () {
    #[inline]
    fn into_flow(self) -> Result<Flow, Error> {
        Ok(Flow::Continue)
    }
}

#[diagnostic::do_not_recommend]
impl IntoFlow for Flow {
    #[inline]
    fn into_flow(self) -> Result<Flow, Error> {
        Ok(self)
    }
}

#[diagnostic::do_not_recommend]
impl<E: Into<BoxError>> IntoFlow for Result<(), E> {
    #[inline]
    fn into_flow(self) -> Result<Flow, Error> {
        self.map(|()| Flow::Continue).map_err(Error::hook)
    }
}

#[diagnostic::do_not_recommend]
impl<E: Into<BoxError>> IntoFlow for Result<Flow, E> {
    #[inline]
    fn into_flow(self) -> Result<Flow, Error> {
        self.map_err(Error::hook)
    }
}

/// A return type of `after_agent` hooks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a return type an `after_agent` or `on_model_event` hook can have",
    label = "return `()` or `Result<(), E>` here",
    note = "`E` is any error type that converts into `Box<dyn std::error::Error + Send + Sync>`"
)]
pub trait IntoDone {
    /// The conversion.
    fn into_done(self) -> Result<(), Error>;
}

#[diagnostic::do_not_recommend]
impl IntoDone for () {
    #[inline]
    fn into_done(self) -> Result<(), Error> {
        Ok(())
    }
}

#[diagnostic::do_not_recommend]
impl<E: Into<BoxError>> IntoDone for Result<(), E> {
    #[inline]
    fn into_done(self) -> Result<(), Error> {
        self.map_err(Error::hook)
    }
}

/// A return type of `wrap_model_call` hooks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a return type a `wrap_model_call` hook can have",
    label = "return `ModelResponse` or `Result<ModelResponse, E>` here",
    note = "`E` is any error type that converts into `Box<dyn std::error::Error + Send + Sync>`, \
            such as `hookchain::Error` (what `next.call(..)` fails with)"
)]
pub trait IntoModelResponse {
    /// The conversion.
    fn into_model_response(self) -> Result<ModelResponse, Error>;
}

#[diagnostic::do_not_recommend]
impl IntoModelResponse for ModelResponse {
    #[inline]
    fn into_model_response(self) -> Result<ModelResponse, Error> {
        Ok(self)
    }
}

#[diagnostic::do_not_recommend]
impl<E: Into<BoxError>> IntoModelResponse for Result<ModelResponse, E> {
    #[inline]
    fn into_model_response(self) -> Result<ModelResponse, Error> {
        self.map_err(Error::hook)
    }
}

/// A return type of `wrap_tool_call` hooks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a return type a `wrap_tool_call` hook can have",
    label = "return `ToolResult` or `Result<ToolResult, E>` here",
    note = "`E` is any error type that converts into `Box<dyn std::error::Error + Send + Sync>`, \
            such as `hookchain::Error` (what `next.call(..)` fails with)"
)]
pub trait IntoToolResult {
    /// The conversion.
    fn into_tool_result(self) -> Result<ToolResult, Error>;
}

#[diagnostic::do_not_recommend]
impl IntoToolResult for ToolResult {
    #[inline]
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        Ok(self)
    }
}

#[diagnostic::do_not_recommend]
impl<E: Into<BoxError>> IntoToolResult for Result<ToolResult, E> {
    #[inline]
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        self.map_err(Error::hook)
    }
}

/// The conversion of one hook's return value.
pub trait Conversion<O> {
    /// What the hook's trait method returns.
    type Output;
    /// Converts (for a wrap hook, naming the middleware `M` and the hook in an error).
    fn convert<M: Middleware>(output: O) -> Self::Output;
}

// The conversion markers (written out, not generated, so that a wrong return type's diagnostic
// shows a plain impl) are the types the trait methods return, named by aliases; the trait
// method hands the `HookFuture` out through `hook_future`, so a hook's future that is not `Send`
// is reported "within `impl Future<Output = Result<Flow, Error>>`". The chain names the errors
// of sequential hooks as they leave each member, so their conversions do not; the chain adds
// nothing around a wrap hook, so the wrap conversions name the middleware `M` and their hook (in
// the type: a hook's future stores nothing to name it by).

/// The conversion of `before_agent`, `before_model` and `after_model` hooks.
pub type FlowReturn = Result<Flow, Error>;

impl<O: IntoFlow> Conversion<O> for Result<Flow, Error> {
    type Output = Result<Flow, Error>;
    #[inline]
    fn convert<M: Middleware>(output: O) -> Self::Output {
        output.into_flow()
    }
}

/// The conversion of `after_agent` hooks.
pub type DoneReturn = Result<(), Error>;

impl<O: IntoDone> Conversion<O> for Result<(), Error> {
    type Output = Result<(), Error>;
    #[inline]
    fn convert<M: Middleware>(output: O) -> Self::Output {
        output.into_done()
    }
}

/// The conversion of `wrap_model_call` hooks.
pub type WrapModelCallReturn = Result<ModelResponse, Error>;

impl<O: IntoModelResponse> Conversion<O> for Result<ModelResponse, Error> {
    type Output = Result<ModelResponse, Error>;
    #[inline]
    fn convert<M: Middleware>(output: O) -> Self::Output {
        output
            .into_model_response()
            .map_err(|e| e.attribute(M::NAME, Hook::WrapModelCall))
    }
}

/// The conversion of `wrap_tool_call` hooks.
pub type WrapToolCallReturn = Result<ToolResult, Error>;

impl<O: IntoToolResult> Conversion<O> for Result<ToolResult, Error> {
    type Output = Result<ToolResult, Error>;
    #[inline]
    fn convert<M: Middleware>(output: O) -> Self::Output {
        output
            .into_tool_result()
            .map_err(|e| e.attribute(M::NAME, Hook::WrapToolCall))
    }
}

pin_project_lite::pin_project! {
    /// The future of an `async` hook function of the middleware `M`, with its output converted
    /// by `K`. One small struct, not an `async` block, storing nothing but the function's
    /// future: it adds as little as possible to the depth and the size of an onion.
    #[derive(Debug)]
    pub struct HookFuture<F, K, M: ?Sized> {
        #[pin]
        future: F,
        conversion: PhantomData<fn(&M) -> K>,
    }
}

impl<F, K, M> Future for HookFuture<F, K, M>
where
    F: Future,
    K: Conversion<F::Output>,
    M: Middleware,
{
    type Output = K::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.project().future.poll(cx).map(K::convert::<M>)
    }
}

/// Converts the output of an `async` hook function's future. Unbounded on purpose: a wrong
/// return type is then reported once, where the future must be a hook's future.
#[inline]
pub fn converted<K, M: ?Sized, F>(future: F) -> HookFuture<F, K, M> {
    HookFuture {
        future,
        conversion: PhantomData,
    }
}

/// `future`, as an opaque `impl Future`: what an `async` hook's trait method returns. A future
/// that is not `Send` (a `MutexGuard` held across an `.await`) is then reported "within
/// `impl Future<Output = ..>`", naming no type of hookchain's; nothing is added to the future.
#[inline]
pub fn hook_future<O, F: Future<Output = O>>(future: F) -> impl Future<Output = O> {
    future
}

/// Converts what a plain-`fn` hook of the middleware `M` returned. The bound is where a wrong
/// return type is reported (the macros span the call at the user's `-> T`); the result type is
/// named, not projected, so that it is reported once.
#[inline]
pub fn convert_now<K, M, O, T>(output: O) -> Result<T, Error>
where
    K: Conversion<O, Output = Result<T, Error>>,
    M: Middleware,
{
    K::convert::<M>(output)
}

/// The future of a plain-`fn` hook: calls the function when first polled. No state machine,
/// and nothing stored but the call: its result goes straight out.
#[derive(Debug)]
pub struct Lazy<F> {
    call: Option<F>,
}

// `F` is moved out before it is called and never pinned, so `Lazy` is `Unpin` whatever `F` is.
impl<F> Unpin for Lazy<F> {}

impl<F: FnOnce() -> O, O> Future for Lazy<F> {
    type Output = O;

    #[inline]
    fn poll(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<O> {
        match self.get_mut().call.take() {
            Some(call) => Poll::Ready(call()),
            None => panic!("a hook's future was polled after it completed"),
        }
    }
}

/// The future of a plain-`fn` hook (see [`Lazy`]).
#[inline]
pub fn lazy<F>(call: F) -> Lazy<F> {
    Lazy { call: Some(call) }
}

/// The state parameter of a hook is the middleware's declared state: the argument passes
/// through this identity conversion, whose bound gives the message when they differ.
#[diagnostic::on_unimplemented(
    message = "this hook takes its state as `{Self}`, but the middleware's state is `{Declared}`",
    label = "take the state as `&mut {Declared}` here (`&{Declared}` in `wrap_tool_call`)",
    note = "the state type is the one declared with `state = …` on the attribute"
)]
pub trait StateIs<Declared> {
    /// The state, mutably.
    fn mutable(state: &mut Declared) -> &mut Self;
    /// The state, shared.
    fn shared(state: &Declared) -> &Self;
}

#[diagnostic::do_not_recommend]
impl<T> StateIs<T> for T {
    fn mutable(state: &mut T) -> &mut T {
        state
    }

    fn shared(state: &T) -> &T {
        state
    }
}
