//! What a [`ToolCallLimit`](super::ToolCallLimit) counts: per run and per thread.

use serde::{Deserialize, Serialize};

/// Tool calls counted in the current run (run-scoped state of
/// [`ToolCallLimit`](super::ToolCallLimit)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunToolCalls {
    /// Calls counted (blocked ones included).
    pub count: u32,
    /// The closing message of a run ended by [`ToolLimitExit::End`](super::ToolLimitExit::End),
    /// added when the run ends (after the calls' results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) closing: Option<String>,
}

/// Tool calls counted in every run of the thread (thread-scoped state of
/// [`ToolCallLimit`](super::ToolCallLimit)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadToolCalls(pub u32);
