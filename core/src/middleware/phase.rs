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
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a phase type",
    label = "`phase::Input`, `phase::Wrap` or `phase::Output`",
    note = "the phases are the types `Input`, `Wrap` and `Output` of `hookchain::middleware::phase` \
            (the enum `Phase` is their value); `#[middleware]` on the impl writes `Wrap` by default"
)]
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

#[diagnostic::do_not_recommend]
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

#[diagnostic::do_not_recommend]
impl<F: LeafPhase, L: LeafPhase> PhaseMarker for Span<F, L> {
    type First = F;
    type Last = L;
}

macro_rules! leaf_phase {
    ($($ty:ident => $phase:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        #[diagnostic::do_not_recommend]
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

/// A phase of `Self` may come right after a phase `PrevPhase`: implemented exactly for the
/// orders Input → Wrap → Output allows (and for [`Any`], the empty chain's phase).
///
/// `Prev` and `Next` are the two middleware, kept for older callers; `chain!` checks the order
/// through [`ListedAfter`], whose message names both middleware.
pub trait Follows<PrevPhase, Prev = (), Next = ()> {}

impl<P, N> Follows<Input, P, N> for Input {}
impl<P, N> Follows<Input, P, N> for Wrap {}
impl<P, N> Follows<Input, P, N> for Output {}
impl<P, N> Follows<Wrap, P, N> for Wrap {}
impl<P, N> Follows<Wrap, P, N> for Output {}
impl<P, N> Follows<Output, P, N> for Output {}
impl<X, P, N> Follows<X, P, N> for Any {}
impl<P, N> Follows<Any, P, N> for Input {}
impl<P, N> Follows<Any, P, N> for Wrap {}
impl<P, N> Follows<Any, P, N> for Output {}

/// The middleware `Self` may be listed right after the middleware `Prev` in a chain: the phase
/// `Self` starts in does not come before the phase `Prev` ends in.
///
/// `chain!` checks it for every pair of neighbours. It is this trait, and not [`Follows`], that
/// a wrong order reports: the error then names the two middleware of the user's chain (rustc
/// always adds a line "the trait `…` is not implemented for `…`", and a trait over phases would
/// print there the phase types' full paths and a marker trait's name), and `chain!` calls
/// [`ListedAfter::listed_after`] by path, so no note points at a helper function's bound.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be listed after `{Prev}`: phases run Input → Wrap → Output",
    label = "this middleware's phase comes before the phase of the middleware listed before it",
    note = "`{Prev}` ends in a later phase than the one `{Self}` starts in: list Input middleware \
            (`phase = input`) first, then Wrap middleware (the default), then Output middleware \
            (`phase = output`)"
)]
pub trait ListedAfter<Prev> {
    /// Reports nothing: calling it (as `chain!` does) is the check.
    #[doc(hidden)]
    fn listed_after(_: PhantomData<fn() -> Self>, _: PhantomData<fn() -> Prev>)
    where
        Self: Sized,
    {
    }
}

/// What has a phase: a middleware, and the stand-in for an element of `chain!` that is not one
/// (already reported at the element; its phase is [`Any`], so no second error).
#[doc(hidden)]
pub trait Phased {
    /// The phases.
    type Phase: PhaseMarker;
}

impl<M: crate::middleware::Middleware> Phased for M {
    type Phase = M::Phase;
}

// Not recommended: a wrong order is reported as `ListedAfter` (naming both middleware), not as
// the `Follows` bound on their phases that fails beneath it.
#[diagnostic::do_not_recommend]
impl<P: Phased, N: Phased> ListedAfter<P> for N where
    <N::Phase as PhaseMarker>::First: Follows<<P::Phase as PhaseMarker>::Last, P, N>
{
}
