//! The checks `chain!` runs on its elements, built so that one mistake gives one error.
//!
//! `chain!` cannot see types, so it asks the compiler through method resolution, calling
//! `(&probe).phase()` and `(&probe).checked()`: for a middleware, the traits implemented for the
//! probe itself ([`PhaseProbe`], [`ChainProbe`]) are found first; for anything else (already
//! reported at the element, where `chain!` calls a `Middleware` method on it), the inert ones
//! implemented for a reference to the probe ([`PhaseProbeOther`], [`ChainProbeOther`]) are found
//! one auto-reference later, so the phase and constraint checks add no second error.

use std::cell::Cell;

use crate::chain::ChainChecks;
use crate::middleware::Middleware;
use crate::middleware::phase::{Follows, PhaseMarker};

/// Holds the type of a `chain!` element, for [`phase_order`].
pub struct TypeProbe<T>(std::marker::PhantomData<fn() -> T>);

/// The probe of `element`'s type.
#[must_use]
pub fn type_probe<T>(_: &T) -> TypeProbe<T> {
    TypeProbe(std::marker::PhantomData)
}

impl<T> std::fmt::Debug for TypeProbe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TypeProbe")
    }
}

/// A middleware's phases and type, for [`phase_order`].
#[derive(Debug)]
pub struct PhaseOf<P, M>(std::marker::PhantomData<fn() -> (P, M)>);

/// Selected when the probed element is a middleware.
pub trait PhaseProbe {
    /// The phases of the middleware.
    type Phase;
    /// The middleware's type.
    type Middleware;
    /// The phases, for [`phase_order`].
    fn phase(&self) -> PhaseOf<Self::Phase, Self::Middleware>;
}

impl<M: Middleware> PhaseProbe for TypeProbe<M> {
    type Phase = M::Phase;
    type Middleware = M;

    fn phase(&self) -> PhaseOf<M::Phase, M> {
        PhaseOf(std::marker::PhantomData)
    }
}

/// Selected when the probed element is not a middleware: any phase, since `chain!`
/// already reported the element.
pub trait PhaseProbeOther {
    /// Any phase.
    fn phase(&self) -> PhaseOf<AnyPhase, NotMiddleware> {
        PhaseOf(std::marker::PhantomData)
    }
}

impl<T> PhaseProbeOther for &TypeProbe<T> {}

/// Holds the chain `chain!` built, for [`ChainProbe::checked`].
pub struct Probe<T>(Cell<Option<T>>);

impl<T> Probe<T> {
    /// Wraps `chain`.
    pub fn new(chain: T) -> Self {
        Probe(Cell::new(Some(chain)))
    }
}

impl<T> std::fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

/// Selected when the chain is a middleware (every element is one).
pub trait ChainProbe {
    /// The chain's type.
    type Chain;
    /// The chain, after the compile-time checks of its members ran.
    fn checked(&self) -> Self::Chain;
}

impl<M: Middleware> ChainProbe for Probe<M> {
    type Chain = M;

    fn checked(&self) -> M {
        const { ChainChecks::<M>::OK };
        match self.0.take() {
            Some(chain) => chain,
            // `chain!` calls `checked` once, on the probe it just filled.
            None => unreachable!("chain! takes its chain once"),
        }
    }
}

/// Selected when an element is not a middleware (already reported): the empty chain stands in,
/// so the code around `chain!` gets no second error.
pub trait ChainProbeOther {
    /// The empty chain.
    fn checked(&self) {}
}

impl<T> ChainProbeOther for &Probe<T> {}

/// The phase of an element that is not a middleware: follows and precedes anything.
pub use crate::middleware::phase::Any as AnyPhase;

/// The type of an element that is not a middleware.
#[derive(Debug)]
pub enum NotMiddleware {}

/// Checks that `next` may be listed right after `prev`.
pub fn phase_order<PP, P, NP, N>(_: PhaseOf<PP, P>, _: PhaseOf<NP, N>)
where
    PP: PhaseMarker,
    NP: PhaseMarker,
    NP::First: Follows<PP::Last, P, N>,
{
}
