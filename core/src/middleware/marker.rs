//! Type-level markers that build the wrap onion without a future per non-wrapping member.
//!
//! A middleware says with [`Middleware::WrapsModel`](super::Middleware::WrapsModel) and
//! [`Middleware::WrapsTool`](super::Middleware::WrapsTool) how it takes part in the onions:
//!
//! - [`True`]: it implements the wrap hook; it adds one layer that calls the hook.
//! - [`False`]: it does not; it adds nothing, and does not appear in the onion's type.
//! - [`Splice`]: it is a chain; it splices its members' layers into the enclosing onion, so a
//!   nested chain costs no layer of its own.
//!
//! The onion is built inside out through [`ModelWrap::layer`] / [`ToolWrap::layer`]. Only
//! wrapping members nest a future, exactly one each, which keeps deep onions within the
//! compiler's query-depth limit.

use super::Middleware;
use super::next::{ModelLayer, ModelNext, ToolLayer, ToolNext};

mod sealed {
    pub trait Sealed {}
}

/// Any onion marker: [`True`], [`False`] or [`Splice`].
pub trait Marker: sealed::Sealed + Send + Sync + 'static {
    /// `Some(wraps)` for [`True`] and [`False`]; `None` for [`Splice`] (it depends on the
    /// members).
    const LEAF: Option<bool>;

    /// The leaf marker of a middleware that adapts one with this marker at run time (such as
    /// `Option<M>`): [`False`] stays [`False`], anything else becomes [`True`].
    type AsLeaf: Bool;
}

/// A leaf marker, [`True`] or [`False`]: a type-level boolean.
pub trait Bool: Marker {
    /// The boolean as a value.
    const VALUE: bool;

    /// The model-call layer a member with this marker adds around `N`.
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext>: ModelNext;

    /// The tool-call layer a member with this marker adds around `N`.
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext>: ToolNext;

    /// Adds `middleware`'s model-call layer around `next` (or returns `next` unchanged).
    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        thread: &'a mut M::ThreadState,
        next: N,
    ) -> Self::ModelLayer<'a, M, N>;

    /// Adds `middleware`'s tool-call layer around `next` (or returns `next` unchanged); `at` is
    /// the member's position in the flattened chain.
    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        thread: &'a M::ThreadState,
        at: usize,
        next: N,
    ) -> Self::ToolLayer<'a, M, N>;
}

/// How the middleware `M` adds its layers to the model-call onion.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what `WrapsModel` can be",
    label = "`True` or `False`",
    note = "`type WrapsModel = hookchain::middleware::True;` when the impl overrides \
            `wrap_model_call`, `False` when not (and `HOOKS` must agree); `#[middleware]` on the \
            impl writes it"
)]
pub trait ModelWrap<M: Middleware>: Marker {
    /// `M`'s layers around `N`.
    type Layer<'a, N: ModelNext>: ModelNext
    where
        M: 'a;

    /// Adds `M`'s layers around `next`.
    fn layer<'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        thread: &'a mut M::ThreadState,
        next: N,
    ) -> Self::Layer<'a, N>
    where
        M: 'a;
}

/// How the middleware `M` adds its layers to the tool-call onion.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what `WrapsTool` can be",
    label = "`True` or `False`",
    note = "`type WrapsTool = hookchain::middleware::True;` when the impl overrides \
            `wrap_tool_call`, `False` when not (and `HOOKS` must agree); `#[middleware]` on the \
            impl writes it"
)]
pub trait ToolWrap<M: Middleware>: Marker {
    /// `M`'s layers around `N`.
    type Layer<'a, N: ToolNext>: ToolNext
    where
        M: 'a;

    /// Adds `M`'s layers around `next`; `at` is `M`'s (first member's) position in the
    /// flattened chain.
    fn layer<'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        thread: &'a M::ThreadState,
        at: usize,
        next: N,
    ) -> Self::Layer<'a, N>
    where
        M: 'a;
}

/// Type-level `true`: the middleware implements the wrap hook.
#[derive(Debug, Clone, Copy, Default)]
pub struct True;

/// Type-level `false`: the middleware does not implement the wrap hook; the chain skips it.
#[derive(Debug, Clone, Copy, Default)]
pub struct False;

/// The marker of a chain: its members' layers are spliced into the enclosing onion.
#[derive(Debug, Clone, Copy, Default)]
pub struct Splice;

impl sealed::Sealed for True {}
impl sealed::Sealed for False {}
impl sealed::Sealed for Splice {}

impl Marker for True {
    const LEAF: Option<bool> = Some(true);
    type AsLeaf = True;
}

impl Marker for False {
    const LEAF: Option<bool> = Some(false);
    type AsLeaf = False;
}

impl Marker for Splice {
    const LEAF: Option<bool> = None;
    type AsLeaf = True;
}

impl Bool for True {
    const VALUE: bool = true;
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext> = ModelLayer<'a, M, N>;
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext> = ToolLayer<'a, M, N>;

    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        thread: &'a mut M::ThreadState,
        next: N,
    ) -> ModelLayer<'a, M, N> {
        ModelLayer::new(middleware, state, thread, next)
    }

    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        thread: &'a M::ThreadState,
        at: usize,
        next: N,
    ) -> ToolLayer<'a, M, N> {
        ToolLayer::new(middleware, state, thread, at, next)
    }
}

impl Bool for False {
    const VALUE: bool = false;
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext> = N;
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext> = N;

    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        _: &'a M,
        _: &'a mut M::State,
        _: &'a mut M::ThreadState,
        next: N,
    ) -> N {
        next
    }

    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(
        _: &'a M,
        _: &'a M::State,
        _: &'a M::ThreadState,
        _: usize,
        next: N,
    ) -> N {
        next
    }
}

#[diagnostic::do_not_recommend]
impl<B: Bool, M: Middleware> ModelWrap<M> for B {
    type Layer<'a, N: ModelNext>
        = B::ModelLayer<'a, M, N>
    where
        M: 'a;

    fn layer<'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        thread: &'a mut M::ThreadState,
        next: N,
    ) -> Self::Layer<'a, N>
    where
        M: 'a,
    {
        B::model_layer(middleware, state, thread, next)
    }
}

#[diagnostic::do_not_recommend]
impl<B: Bool, M: Middleware> ToolWrap<M> for B {
    type Layer<'a, N: ToolNext>
        = B::ToolLayer<'a, M, N>
    where
        M: 'a;

    fn layer<'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        thread: &'a M::ThreadState,
        at: usize,
        next: N,
    ) -> Self::Layer<'a, N>
    where
        M: 'a,
    {
        B::tool_layer(middleware, state, thread, at, next)
    }
}
