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
#[non_exhaustive]
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

/// A per-run and a per-thread limit on a count, as the call-limit middleware take them: at
/// least one set, neither 0 (a limit of 0 forbids everything, which is a mistake rather than a
/// policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) run: Option<u32>,
    pub(crate) thread: Option<u32>,
}

impl Limits {
    /// These limits, or the setting at fault (named as the builders name it).
    pub(crate) fn checked(self) -> Result<Self, super::ConfigError> {
        if self.run.is_none() && self.thread.is_none() {
            return Err(super::ConfigError::new(
                "run_limit",
                "no limit set: set a run limit, a thread limit or both",
            ));
        }
        for (field, limit) in [("run_limit", self.run), ("thread_limit", self.thread)] {
            if limit == Some(0) {
                return Err(super::ConfigError::new(
                    field,
                    "must be at least 1 (a limit of 0 would forbid every call)",
                ));
            }
        }
        Ok(self)
    }

    /// The limit that `run` and `thread` calls made so far have reached, if any (the run limit
    /// first): one more call would exceed it.
    pub(crate) fn reached(self, run: u32, thread: u32) -> Option<(LimitScope, u32)> {
        if let Some(limit) = self.run.filter(|&limit| run >= limit) {
            return Some((LimitScope::Run, limit));
        }
        self.thread
            .filter(|&limit| thread >= limit)
            .map(|limit| (LimitScope::Thread, limit))
    }
}
