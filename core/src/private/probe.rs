//! The checks `chain!` runs on its elements, built so that one mistake gives one error.
//!
//! `chain!` cannot see types, so it asks the compiler through method resolution, calling
//! `(&probe).phase()` and `(&probe).checked()`: for a middleware, the traits implemented for the
//! probe itself ([`PhaseProbe`], [`ChainProbe`]) are found first; for anything else (already
//! reported at the element, where `chain!` calls a `Middleware` method on it), the inert ones
//! implemented for a reference to the probe ([`PhaseProbeOther`], [`ChainProbeOther`]) are found
//! one auto-reference later, so the phase and constraint checks add no second error.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::chain::ChainChecks;
use crate::middleware::Middleware;

/// Holds the type of a `chain!` element, for the phase check.
pub struct TypeProbe<T>(PhantomData<fn() -> T>);

/// The probe of `element`'s type.
#[must_use]
pub fn type_probe<T>(_: &T) -> TypeProbe<T> {
    TypeProbe(PhantomData)
}

impl<T> std::fmt::Debug for TypeProbe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TypeProbe")
    }
}

/// Selected when the probed element is a middleware.
pub trait PhaseProbe {
    /// The middleware's type.
    type Middleware;
    /// The type, for [`ListedAfter::listed_after`](crate::middleware::phase::ListedAfter).
    fn phase(&self) -> PhantomData<fn() -> Self::Middleware>;
}

impl<M: Middleware> PhaseProbe for TypeProbe<M> {
    type Middleware = M;

    fn phase(&self) -> PhantomData<fn() -> M> {
        PhantomData
    }
}

/// Selected when the probed element is not a middleware: a stand-in of any phase, since `chain!`
/// already reported the element.
pub trait PhaseProbeOther {
    /// The stand-in.
    fn phase(&self) -> PhantomData<fn() -> NotMiddleware> {
        PhantomData
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

/// The type of an element that is not a middleware: its phase follows and precedes anything.
#[derive(Debug)]
pub enum NotMiddleware {}

// A value that is not middleware has no phases to check (it is reported at the element).
impl crate::middleware::phase::Phased for NotMiddleware {
    type Phase = crate::middleware::phase::Any;
}
