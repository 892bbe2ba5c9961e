//! Turns what a `#[hook]` function returns into what the `Middleware` trait expects.
//!
//! Each conversion is a trait on the user's return type, carrying the diagnostic for a wrong
//! return type; the macros span the conversion at the user's `-> T`, so that is where the error
//! points.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::error::{BoxError, Error};
use crate::message::ToolResult;
use crate::middleware::{Flow, Hook};
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
    message = "`{Self}` is not a return type an `after_agent` hook can have",
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

/// Which conversion a [`Converted`] future applies.
pub trait Conversion<O> {
    /// What the hook's trait method returns.
    type Output;
    /// Converts, naming `middleware` and `hook` in an error.
    fn convert(output: O, middleware: &'static str, hook: Hook) -> Self::Output;
}

/// The conversion of sequential hooks (`before_agent`, `before_model`, `after_model`).
#[derive(Debug)]
pub enum ToFlow {}
/// The conversion of `after_agent` hooks.
#[derive(Debug)]
pub enum ToDone {}
/// The conversion of `wrap_model_call` hooks.
#[derive(Debug)]
pub enum ToModelResponse {}
/// The conversion of `wrap_tool_call` hooks.
#[derive(Debug)]
pub enum ToToolResult {}

impl<O: IntoFlow> Conversion<O> for ToFlow {
    type Output = Result<Flow, Error>;
    #[inline]
    fn convert(output: O, middleware: &'static str, hook: Hook) -> Self::Output {
        output
            .into_flow()
            .map_err(|e| e.attribute(middleware, hook))
    }
}

impl<O: IntoDone> Conversion<O> for ToDone {
    type Output = Result<(), Error>;
    #[inline]
    fn convert(output: O, middleware: &'static str, hook: Hook) -> Self::Output {
        output
            .into_done()
            .map_err(|e| e.attribute(middleware, hook))
    }
}

impl<O: IntoModelResponse> Conversion<O> for ToModelResponse {
    type Output = Result<ModelResponse, Error>;
    #[inline]
    fn convert(output: O, middleware: &'static str, hook: Hook) -> Self::Output {
        output
            .into_model_response()
            .map_err(|e| e.attribute(middleware, hook))
    }
}

impl<O: IntoToolResult> Conversion<O> for ToToolResult {
    type Output = Result<ToolResult, Error>;
    #[inline]
    fn convert(output: O, middleware: &'static str, hook: Hook) -> Self::Output {
        output
            .into_tool_result()
            .map_err(|e| e.attribute(middleware, hook))
    }
}

pin_project_lite::pin_project! {
    /// The future of an `async` hook function, with its output converted. One small struct, not
    /// an `async` block: it adds as little as possible to the depth of an onion.
    #[derive(Debug)]
    pub struct Converted<F, K> {
        #[pin]
        future: F,
        middleware: &'static str,
        hook: Hook,
        conversion: std::marker::PhantomData<fn() -> K>,
    }
}

impl<F: Future, K: Conversion<F::Output>> Future for Converted<F, K> {
    type Output = K::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let (middleware, hook) = (*this.middleware, *this.hook);
        this.future
            .poll(cx)
            .map(|output| K::convert(output, middleware, hook))
    }
}

/// Converts the output of an `async` hook function's future. Unbounded on purpose: a wrong
/// return type is then reported once, where the future must be a hook's future.
#[inline]
pub fn converted<K, F>(future: F, middleware: &'static str, hook: Hook) -> Converted<F, K> {
    Converted {
        future,
        middleware,
        hook,
        conversion: std::marker::PhantomData,
    }
}

/// The future of a plain-`fn` hook: calls the function when first polled and converts what it
/// returns. No state machine, and nothing large stored: the call's result goes straight out.
#[derive(Debug)]
pub struct Lazy<F, K> {
    call: Option<F>,
    middleware: &'static str,
    hook: Hook,
    conversion: std::marker::PhantomData<fn() -> K>,
}

// `F` is moved out before it is called and never pinned, so `Lazy` is `Unpin` whatever `F` is.
impl<F, K> Unpin for Lazy<F, K> {}

impl<F: FnOnce() -> O, O, K: Conversion<O>> Future for Lazy<F, K> {
    type Output = K::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.call.take() {
            Some(call) => Poll::Ready(K::convert(call(), this.middleware, this.hook)),
            None => panic!("a hook's future was polled after it completed"),
        }
    }
}

/// The future of a plain-`fn` hook (see [`Lazy`]). Unbounded on purpose, like [`converted`].
#[inline]
pub fn lazy_converted<K, F>(call: F, middleware: &'static str, hook: Hook) -> Lazy<F, K> {
    Lazy {
        call: Some(call),
        middleware,
        hook,
        conversion: std::marker::PhantomData,
    }
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
