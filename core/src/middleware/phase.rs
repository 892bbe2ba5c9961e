//! Phases order a chain: `Input` middleware first, then `Wrap`, then `Output`.
//!
//! An `Input` middleware prepares what the rest see and may only have `before_*` hooks; an
//! `Output` middleware cleans up what the rest see and may only have `after_*` hooks; `Wrap`
//! (the default) may have any hook. Since `before_*` hooks run in chain order and `after_*` hooks
//! in reverse, a `Wrap` middleware in the middle of the chain (audit, tracing) sees requests after
//! input redaction and responses after output redaction.
//!
//! Phases are types so that the compiler can check a chain's order through trait bounds.

use std::fmt;
use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

/// The phase of a middleware, as a value (see [`PhaseMarker`] for the type-level form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// Prepares what the rest of the chain sees; only `before_*` hooks.
    Input,
    /// The default; any hook.
    Wrap,
    /// Cleans up what the rest of the chain sees; only `after_*` hooks.
    Output,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Input => "input",
            Phase::Wrap => "wrap",
            Phase::Output => "output",
        })
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The phase of a middleware as a type: [`Input`], [`Wrap`] or [`Output`] for one middleware,
/// [`Span`] for a chain (from its first member's phase to its last member's).
pub trait PhaseMarker: sealed::Sealed + Send + Sync + 'static {
    /// The phase of the first member (the phase itself for one middleware).
    type First: LeafPhase;
    /// The phase of the last member (the phase itself for one middleware).
    type Last: LeafPhase;
}

/// The phase of one middleware: [`Input`], [`Wrap`] or [`Output`].
pub trait LeafPhase: PhaseMarker {
    /// The phase as a value.
    const PHASE: Phase;
}

/// The `Input` phase as a type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Input;

/// The `Wrap` phase as a type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wrap;

/// The `Output` phase as a type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Output;

/// The phase of the empty chain: it may be listed anywhere.
#[derive(Debug, Clone, Copy)]
pub enum Any {}

impl sealed::Sealed for Any {}

impl PhaseMarker for Any {
    type First = Any;
    type Last = Any;
}

impl LeafPhase for Any {
    const PHASE: Phase = Phase::Wrap;
}

/// The phases of a chain: from `F` (its first member's) to `L` (its last member's).
#[derive(Debug, Clone, Copy, Default)]
pub struct Span<F, L>(PhantomData<fn() -> (F, L)>);

impl<F, L> sealed::Sealed for Span<F, L> {}

impl<F: LeafPhase, L: LeafPhase> PhaseMarker for Span<F, L> {
    type First = F;
    type Last = L;
}

macro_rules! leaf_phase {
    ($($ty:ident => $phase:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        impl PhaseMarker for $ty {
            type First = $ty;
            type Last = $ty;
        }
        impl LeafPhase for $ty {
            const PHASE: Phase = Phase::$phase;
        }
    )*};
}

leaf_phase!(Input => Input, Wrap => Wrap, Output => Output);

/// `Next` (whose phase is `Self`) may be listed right after `Prev` (whose phase is
/// `PrevPhase`): implemented exactly for the orders Input → Wrap → Output allows.
///
/// `chain!` checks it for every pair of neighbours, so a wrong order is a compile error that
/// names both middleware.
#[diagnostic::on_unimplemented(
    message = "`{Next}` cannot be listed after `{Prev}`: phases run Input → Wrap → Output",
    label = "this middleware's phase comes before the phase of the middleware listed before it",
    note = "`{Prev}` ends in phase `{PrevPhase}` and `{Next}` starts in phase `{Self}`",
    note = "list Input middleware first, then Wrap middleware, then Output middleware"
)]
pub trait Follows<PrevPhase, Prev, Next> {}

#[diagnostic::do_not_recommend]
impl<P, N> Follows<Input, P, N> for Input {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Input, P, N> for Wrap {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Input, P, N> for Output {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Wrap, P, N> for Wrap {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Wrap, P, N> for Output {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Output, P, N> for Output {}
#[diagnostic::do_not_recommend]
impl<X, P, N> Follows<X, P, N> for Any {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Any, P, N> for Input {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Any, P, N> for Wrap {}
#[diagnostic::do_not_recommend]
impl<P, N> Follows<Any, P, N> for Output {}
