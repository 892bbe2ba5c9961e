//! What a run has counted, as a checkpoint keeps it.

use serde::{Deserialize, Serialize};

use crate::model::Usage;

/// What a run has counted so far; a checkpoint saves them and a resume restores them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Counters {
    pub(crate) step: usize,
    pub(crate) model_calls: usize,
    pub(crate) tool_calls: usize,
    pub(crate) usage: Usage,
    /// Earlier runs of the same thread.
    pub(crate) runs: usize,
    /// Pauses of this run so far (interrupt ids count them); in a checkpoint, its own included.
    pub(crate) pauses: usize,
    /// Where this run's messages start in the history (its input included).
    #[serde(default)]
    pub(crate) run_start: usize,
}
