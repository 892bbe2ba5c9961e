//! The memory checkpointer reached over a slow network, on tokio's clock.

use std::time::{Duration, SystemTime};

use hookchain::Checkpoint;
use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, InMemoryCheckpointer, Lease, Record, Stored, Tombstone,
};

/// The memory checkpointer, its requests and answers late: a renewal reaches the store
/// `renewal_sent` after it is sent; a write (a claim, a checkpoint, a release, a renewal) is
/// done at once and answered `writes_answered` later, an end `end_answered` later. A worker
/// can die between a write that landed and its answer; a renewal sent before a run writes its
/// end can land after it.
pub(crate) struct Lagging {
    pub(crate) inner: InMemoryCheckpointer,
    pub(crate) renewal_sent: Duration,
    pub(crate) end_answered: Duration,
    pub(crate) writes_answered: Duration,
}

impl Lagging {
    async fn answer<T>(&self, answer: T, after: Duration) -> T {
        if !after.is_zero() {
            tokio::time::sleep(after).await;
        }
        answer
    }
}

impl Checkpointer for Lagging {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        let claimed = self.inner.claim(key, worker, ttl).await;
        self.answer(claimed, self.writes_answered).await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        self.inner.get(key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        self.inner.list().await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        let put = self.inner.put(key, checkpoint, lease).await;
        self.answer(put, self.writes_answered).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        tokio::time::sleep(self.renewal_sent).await;
        let renewed = self.inner.renew(key, lease).await;
        self.answer(renewed, self.writes_answered).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        let released = self.inner.release(key, lease).await;
        self.answer(released, self.writes_answered).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        let ended = self.inner.end(key, lease, tombstone).await;
        self.answer(ended, self.end_answered).await
    }
}
