//! What the limit middleware share: where a limit applies and what happens when it trips.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What [`ModelCallLimit`](super::ModelCallLimit) and [`TokenBudget`](super::TokenBudget) do
/// when a limit trips, before a model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitExit {
    /// The model is not called: an assistant message naming the limit and the counts ends the
    /// history, and the run ends ([`EndReason::Jumped`](crate::EndReason::Jumped)). The default.
    #[default]
    End,
    /// The run fails with the middleware's error (naming the limit and the counts).
    Error,
}

/// The scope of a limit: one run, or every run of a [`Thread`](crate::Thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitScope {
    /// The current run (counted from zero at every run).
    Run,
    /// The thread: every run of it so far, this one included (a run outside a thread is a
    /// thread of its own).
    Thread,
}

impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitScope::Run => "run",
            LimitScope::Thread => "thread",
        })
    }
}

/// Checks that a limit, if set, is at least 1: a limit of 0 forbids everything, which is a
/// mistake rather than a policy.
pub(crate) fn check_limit(
    field: &'static str,
    limit: Option<u32>,
) -> Result<(), super::ConfigError> {
    match limit {
        Some(0) => Err(super::ConfigError::new(
            field,
            "must be at least 1 (a limit of 0 would forbid every call)",
        )),
        _ => Ok(()),
    }
}
