//! [`PostgresCheckpointer`] as a [`Checkpointer`]: the rules every store follows ([`Slot`]),
//! applied at the database's time by its [`Runs`](super::runs::Runs), with the times handed
//! back (a lease's expiry, a busy key's) in the worker's clock.

use std::time::{Duration, SystemTime};

use hookchain_core::Checkpoint;
use hookchain_core::interrupt::{
    CheckpointError, Checkpointer, Claim, Lease, Record, Slot, SlotStore, Stored, Tombstone,
};

use super::PostgresCheckpointer;
use super::clocks::Clocks;

// Not through the blanket `Checkpointer` of every `SlotStore`, which hands back the store's
// times as they are: here they are the database's, and the worker compares a lease's expiry
// with its own clock. Only `claim` and `renew` hand back times; the rest is the blanket's.
impl Checkpointer for PostgresCheckpointer {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        let worker_now = self.runs.clocks.worker_now();
        let worker = worker.to_owned();
        let (claim, judged_now) = self
            .runs
            .transact(key, move |slot, now| {
                let (slot, claim) = Slot::claim(slot, &worker, ttl, now);
                Ok((slot, (claim, now)))
            })
            .await?;
        let heard = |at| Clocks::heard(at, judged_now, worker_now);
        Ok(match claim {
            Claim::Granted { lease, record } => Claim::Granted {
                lease: Lease::new(
                    lease.worker(),
                    lease.token(),
                    lease.ttl(),
                    heard(lease.expires_at()),
                ),
                record,
            },
            Claim::Busy { holder, until } => Claim::Busy {
                holder,
                until: heard(until),
            },
        })
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        self.runs.get(key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        self.runs.list().await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        self.runs.put(key, checkpoint, lease).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        let worker_now = self.runs.clocks.worker_now();
        let (owned_key, lease) = (key.to_owned(), lease.clone());
        let (expires_at, judged_now) = self
            .runs
            .transact(key, move |slot, now| {
                let (slot, expires_at) = Slot::renew(slot, &owned_key, &lease, now)?;
                Ok((Some(slot), (expires_at, now)))
            })
            .await?;
        Ok(Clocks::heard(expires_at, judged_now, worker_now))
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        self.runs.release(key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        self.runs.end(key, lease, tombstone).await
    }
}
