//! Type-level booleans that let the chain leave non-wrapping middleware out of the onion.
//!
//! A middleware says with [`Middleware::WrapsModel`](super::Middleware::WrapsModel) and
//! [`Middleware::WrapsTool`](super::Middleware::WrapsTool) whether it wraps the model and tool
//! calls. The chain builds the onion inside out, asking each member's marker for the layer to add:
//! [`True`] adds a layer that calls the member's wrap hook, [`False`] returns the inner `next`
//! unchanged. A non-wrapping member therefore does not appear in the onion's type at all, which
//! keeps future types small and nesting shallow (only wrapping members nest).

use super::Middleware;
use super::next::{ModelLayer, ModelNext, ToolLayer, ToolNext};

mod sealed {
    pub trait Sealed {}
}

/// A type-level boolean: [`True`] or [`False`].
pub trait Bool: sealed::Sealed + Send + Sync + 'static {
    /// The boolean as a value.
    const VALUE: bool;

    /// `Self || B`.
    type Or<B: Bool>: Bool;

    /// The model-call layer a member with this marker adds around `N`.
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext>: ModelNext;

    /// The tool-call layer a member with this marker adds around `N`.
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext>: ToolNext;

    /// Adds `middleware`'s model-call layer around `next` (or returns `next` unchanged).
    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        next: N,
    ) -> Self::ModelLayer<'a, M, N>;

    /// Adds `middleware`'s tool-call layer around `next` (or returns `next` unchanged).
    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        next: N,
    ) -> Self::ToolLayer<'a, M, N>;
}

/// Type-level `true`: the middleware implements the wrap hook.
#[derive(Debug, Clone, Copy, Default)]
pub struct True;

/// Type-level `false`: the middleware does not implement the wrap hook; the chain skips it.
#[derive(Debug, Clone, Copy, Default)]
pub struct False;

impl sealed::Sealed for True {}
impl sealed::Sealed for False {}

impl Bool for True {
    const VALUE: bool = true;
    type Or<B: Bool> = True;
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext> = ModelLayer<'a, M, N>;
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext> = ToolLayer<'a, M, N>;

    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        middleware: &'a M,
        state: &'a mut M::State,
        next: N,
    ) -> ModelLayer<'a, M, N> {
        ModelLayer::new(middleware, state, next)
    }

    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(
        middleware: &'a M,
        state: &'a M::State,
        next: N,
    ) -> ToolLayer<'a, M, N> {
        ToolLayer::new(middleware, state, next)
    }
}

impl Bool for False {
    const VALUE: bool = false;
    type Or<B: Bool> = B;
    type ModelLayer<'a, M: Middleware + 'a, N: ModelNext> = N;
    type ToolLayer<'a, M: Middleware + 'a, N: ToolNext> = N;

    fn model_layer<'a, M: Middleware + 'a, N: ModelNext>(
        _: &'a M,
        _: &'a mut M::State,
        next: N,
    ) -> N {
        next
    }

    fn tool_layer<'a, M: Middleware + 'a, N: ToolNext>(_: &'a M, _: &'a M::State, next: N) -> N {
        next
    }
}
