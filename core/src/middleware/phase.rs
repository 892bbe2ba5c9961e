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

use serde::{Deserialize, Serialize};

/// The phase of a middleware, as a value (see [`PhaseMarker`] for the type-level form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

mod sealed {
    pub trait Sealed {}
}

/// A phase as a type: [`Input`], [`Wrap`] or [`Output`].
pub trait PhaseMarker: sealed::Sealed + Send + Sync + 'static {
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

macro_rules! phase_marker {
    ($($ty:ident => $phase:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        impl PhaseMarker for $ty {
            const PHASE: Phase = Phase::$phase;
        }
    )*};
}

phase_marker!(Input => Input, Wrap => Wrap, Output => Output);
