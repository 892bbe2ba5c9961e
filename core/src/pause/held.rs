//! A run's hold on its key, as its context keeps it while the run goes.

use super::Lease;

/// A run's hold on its key: the lease, and the checkpoint it resumed from.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub(crate) key: String,
    pub(crate) lease: Lease,
    /// The stored checkpoint the run resumed from, if any: the run is then kept after every
    /// step, and leaves a tombstone when it ends.
    pub(crate) resumed_from: Option<String>,
    /// Whether the key held something when the run claimed it (a pause of a thread's earlier
    /// run, a tombstone): a run that writes nothing leaves it so, rather than removing it.
    pub(crate) found: bool,
}
