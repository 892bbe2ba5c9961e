//! [`InMemoryCheckpointer`]: checkpoints in this process's memory.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::SystemTime;

use super::checkpointer::valid_key;
use super::{CheckpointError, Clock, Slot, SlotStore};
use crate::lock::lock;

/// Keeps checkpoints in memory (as JSON, so what is read back is what a process restart would
/// read), under the rules of [`Checkpointer`](super::Checkpointer). Tombstones past their
/// retention are swept as later runs end.
#[derive(Debug, Default)]
pub struct InMemoryCheckpointer {
    slots: Mutex<Slots>,
    clock: Clock,
}

#[derive(Debug, Default)]
struct Slots {
    by_key: BTreeMap<String, Slot>,
    /// Writes since vacant slots (tombstones past their retention) were last swept.
    since_sweep: usize,
}

/// How many writes go between two sweeps of vacant slots: the sweep's cost, spread.
const SWEEP_EVERY: usize = 256;

impl InMemoryCheckpointer {
    /// An empty store, on the system's clock.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The store reading the time from `clock` (leases, retention): [`Clock::tokio`] in tests
    /// on tokio's paused clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }
}

impl SlotStore for InMemoryCheckpointer {
    async fn transact<T, F>(&self, key: &str, operation: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static,
    {
        let key = valid_key(key)?;
        let now = self.clock.now();
        let mut slots = lock(&self.slots);
        let (slot, done) = operation(slots.by_key.get(key).cloned(), now)?;
        match slot {
            Some(slot) => slots.by_key.insert(key.to_owned(), slot),
            None => slots.by_key.remove(key),
        };
        slots.since_sweep += 1;
        if slots.since_sweep >= SWEEP_EVERY {
            slots.since_sweep = 0;
            slots.by_key.retain(|_, slot| !slot.is_vacant(now));
        }
        Ok(done)
    }

    async fn read(&self, key: &str) -> Result<(Option<Slot>, SystemTime), CheckpointError> {
        let key = valid_key(key)?;
        let slot = lock(&self.slots).by_key.get(key).cloned();
        Ok((slot, self.clock.now()))
    }

    async fn slots(&self) -> Result<(Vec<(String, Slot)>, SystemTime), CheckpointError> {
        let slots = lock(&self.slots)
            .by_key
            .iter()
            .map(|(key, slot)| (key.clone(), slot.clone()))
            .collect();
        Ok((slots, self.clock.now()))
    }
}
