//! A run's hold on its key, as its context keeps it while the run goes.

use std::sync::Arc;

use super::{Lease, LeaseWatch};

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
    /// The lease as its renewals last heard: no tool call starts with too little of it left.
    pub(crate) watch: Arc<LeaseWatch>,
}

impl Held {
    /// The hold of `lease` on `key`, as claimed.
    pub(crate) fn new(key: &str, lease: Lease, found: bool) -> Self {
        Held {
            key: key.to_owned(),
            watch: Arc::new(LeaseWatch::new(&lease)),
            lease,
            resumed_from: None,
            found,
        }
    }
}
