//! Plugins beside static members: the same middleware ([`Active`], [`Absent`], [`Full`]) boxed
//! in a [`Plugins`] member, to measure what only the adapter pays.

use hookchain::plugin::{Plugins, PluginsWithoutEvents, boxed};

use crate::macro_mw::{Absent, Active, Full};

/// A `Plugins` member of `n` [`Active`] plugins.
pub fn active(n: usize) -> Plugins {
    Plugins::new((0..n).map(|_| boxed(Active)).collect()).expect("within capacity")
}

/// A `Plugins` member of `n` [`Absent`] plugins (no hook on the model path: skipped).
pub fn absent(n: usize) -> Plugins {
    Plugins::new((0..n).map(|_| boxed(Absent)).collect()).expect("within capacity")
}

/// A `Plugins` member of `n` [`Full`] plugins (every hook of a turn has work).
pub fn full(n: usize) -> Plugins {
    Plugins::new((0..n).map(|_| boxed(Full)).collect()).expect("within capacity")
}

/// A `PluginsWithoutEvents` member of `n` [`Full`] plugins: the model is not streamed because
/// of it.
pub fn full_without_events(n: usize) -> PluginsWithoutEvents {
    PluginsWithoutEvents::new((0..n).map(|_| boxed(Full)).collect()).expect("within capacity")
}
