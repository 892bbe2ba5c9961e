//! [`Slot`]: what a store keeps under one key, and the rules of every store as operations on
//! it; [`SlotStore`]: a store that only loads and saves slots atomically, and is a
//! [`Checkpointer`] by these rules.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::lease::{from_millis, millis};
use super::{Checkpoint, CheckpointError, Checkpointer, Claim, Lease, Record, Stored, Tombstone};

/// What a store keeps under one key, and the rules of every [`Checkpointer`](super::Checkpointer)
/// as operations on it: a store loads a key's slot under a lock (a transaction, a mutex, a
/// file lock), applies one operation, and writes back what it returns — so every store follows
/// the same rules, and only the atomicity is its own.
///
/// A slot is read and written as it is stored: the checkpoint as the JSON text
/// [`Checkpoint::to_json`] wrote (decoded only when handed out), the tombstone as itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Slot {
    /// The checkpoint's JSON, if the key holds one.
    pub checkpoint: Option<String>,
    /// The tombstone, if the run ended.
    pub ended: Option<Tombstone>,
    /// The worker whose lease it is, if any (expired or not).
    pub held_by: Option<String>,
    /// The current fencing token.
    pub token: u64,
    /// When the lease expires, in milliseconds since the Unix epoch.
    pub expires_at: u64,
}

impl Slot {
    /// A slot as stored: its parts, read back from a store's columns.
    #[must_use]
    pub fn new(
        checkpoint: Option<String>,
        ended: Option<Tombstone>,
        held_by: Option<String>,
        token: u64,
        expires_at: u64,
    ) -> Self {
        Slot {
            checkpoint,
            ended,
            held_by,
            token,
            expires_at,
        }
    }

    /// The worker whose lease has not expired at `now`.
    #[must_use]
    pub fn live_holder(&self, now: SystemTime) -> Option<&str> {
        self.held_by
            .as_deref()
            .filter(|_| millis(now) < self.expires_at)
    }

    /// Whether the slot holds nothing worth keeping at `now` (no checkpoint, no tombstone still
    /// kept, no live lease): a store may remove it.
    #[must_use]
    pub fn is_vacant(&self, now: SystemTime) -> bool {
        self.checkpoint.is_none()
            && !self.ended.as_ref().is_some_and(|ended| ended.kept_at(now))
            && self.live_holder(now).is_none()
    }

    /// What the slot holds at `now`, as stored: a tombstone past its retention is nothing.
    pub fn record(&self, now: SystemTime) -> Result<Option<Record>, CheckpointError> {
        if let Some(json) = &self.checkpoint {
            return Checkpoint::from_json(json)
                .map(|checkpoint| Some(Record::Checkpoint(Box::new(checkpoint))));
        }
        Ok(self
            .ended
            .as_ref()
            .filter(|ended| ended.kept_at(now))
            .map(|ended| Record::Ended(ended.clone())))
    }

    /// `worker` claims the key whose slot is `slot` (`None`: nothing stored) at `now`, for
    /// `ttl`: granted, with a new token (and what the key holds), unless another lease is live.
    /// The slot to keep, and the claim's outcome.
    #[must_use]
    pub fn claim(
        slot: Option<Slot>,
        worker: &str,
        ttl: Duration,
        now: SystemTime,
    ) -> (Option<Slot>, Claim) {
        if let Some(holder) = slot.as_ref().and_then(|slot| slot.live_holder(now)) {
            let until = from_millis(slot.as_ref().map_or(0, |slot| slot.expires_at));
            let busy = Claim::Busy {
                holder: holder.to_owned(),
                until,
            };
            return (slot, busy);
        }
        let mut slot = slot.unwrap_or_else(|| Slot::new(None, None, None, 0, 0));
        if slot.ended.as_ref().is_some_and(|ended| !ended.kept_at(now)) {
            slot.ended = None;
        }
        slot.token = slot.token.saturating_add(1).max(micros(now));
        slot.held_by = Some(worker.to_owned());
        let expires_at = now + ttl;
        slot.expires_at = millis(expires_at);
        let lease = Lease::new(worker, slot.token, ttl, expires_at);
        let record = slot.record(now);
        (Some(slot), Claim::Granted { lease, record })
    }

    /// Whether `lease` may write `key`, whose slot is `slot`: it must be the slot's current
    /// lease, held (a pause or a release frees it). Its expiry does not matter while nobody
    /// has claimed the key since: the token says whether anyone did.
    pub fn fence(
        slot: Option<&Slot>,
        key: &str,
        lease: &Lease,
        now: SystemTime,
    ) -> Result<(), CheckpointError> {
        match slot {
            Some(slot)
                if slot.token == lease.token()
                    && slot.held_by.as_deref() == Some(lease.worker()) =>
            {
                Ok(())
            }
            Some(slot) => match slot.live_holder(now) {
                Some(holder) if holder != lease.worker() || slot.token != lease.token() => {
                    Err(CheckpointError::Claimed {
                        key: key.to_owned(),
                        by: holder.to_owned(),
                    })
                }
                _ => Err(CheckpointError::LeaseLost {
                    key: key.to_owned(),
                }),
            },
            None => Err(CheckpointError::LeaseLost {
                key: key.to_owned(),
            }),
        }
    }

    /// `lease` writes a checkpoint (its JSON) under `key`: a step keeps the lease (for its ttl
    /// from `now`), a pause ([`Checkpoint::is_pause`]) frees the key for whoever has the answers
    /// to claim.
    pub fn put(
        slot: Option<Slot>,
        key: &str,
        pause: bool,
        json: String,
        lease: &Lease,
        now: SystemTime,
    ) -> Result<Slot, CheckpointError> {
        Slot::fence(slot.as_ref(), key, lease, now)?;
        let (held_by, expires_at) = if pause {
            (None, 0)
        } else {
            (Some(lease.worker().to_owned()), millis(now + lease.ttl()))
        };
        Ok(Slot::new(
            Some(json),
            None,
            held_by,
            lease.token(),
            expires_at,
        ))
    }

    /// `lease` is renewed for its ttl from `now`: the slot, and the new expiry.
    pub fn renew(
        slot: Option<Slot>,
        key: &str,
        lease: &Lease,
        now: SystemTime,
    ) -> Result<(Slot, SystemTime), CheckpointError> {
        Slot::fence(slot.as_ref(), key, lease, now)?;
        // The fence refuses a key that holds nothing: a slot is there.
        let Some(mut slot) = slot else {
            return Err(CheckpointError::LeaseLost {
                key: key.to_owned(),
            });
        };
        let expires_at = now + lease.ttl();
        slot.expires_at = millis(expires_at);
        Ok((slot, expires_at))
    }

    /// `lease` lets the key go: free for anyone to claim, its record kept. `None` when the
    /// lease was not the key's (nothing changes); `Some(None)` when nothing is left to keep.
    #[must_use]
    pub fn release(slot: Option<Slot>, lease: &Lease, now: SystemTime) -> Option<Option<Slot>> {
        let mut slot = slot?;
        if slot.token != lease.token() || slot.held_by.as_deref() != Some(lease.worker()) {
            return None;
        }
        slot.held_by = None;
        slot.expires_at = 0;
        Some((!slot.is_vacant(now)).then_some(slot))
    }

    /// The run under `key` ended: `lease` leaves `tombstone` (for its retention, from `now`), or nothing
    /// (`None`: the run never stored a checkpoint, so nothing can replay it). `None` returned:
    /// remove the key.
    pub fn end(
        slot: Option<Slot>,
        key: &str,
        lease: &Lease,
        tombstone: Option<Tombstone>,
        now: SystemTime,
    ) -> Result<Option<Slot>, CheckpointError> {
        Slot::fence(slot.as_ref(), key, lease, now)?;
        // Its times by the store's clock (the one its retention is judged by), its retention
        // as the writer asked.
        Ok(tombstone.map(|mut ended| {
            let retention = ended.keep_until.saturating_sub(ended.ended_at);
            ended.ended_at = millis(now);
            ended.keep_until = ended.ended_at.saturating_add(retention);
            Slot::new(None, Some(ended), None, lease.token(), 0)
        }))
    }
}

/// Microseconds since the Unix epoch: where a key's tokens start.
fn micros(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
    })
}

/// A store of [`Slot`]s, one per key, that loads and saves a slot atomically: such a store is
/// a [`Checkpointer`] (implemented for every `SlotStore`), so that every store follows the same
/// rules and only its atomicity is its own. The crate's stores are built so; implement it for
/// your own database (a transaction that reads the row for update and writes it back), or
/// implement [`Checkpointer`] directly.
pub trait SlotStore: Send + Sync {
    /// Applies `operation` to `key`'s slot atomically (no other operation on `key` in between,
    /// in any process): loads it (`None`: nothing stored), calls `operation` with it and the
    /// store's time now, and stores what it returns (`None`: remove the key) — unless it fails,
    /// then nothing changes. Returns what `operation` returned.
    fn transact<T, F>(
        &self,
        key: &str,
        operation: F,
    ) -> impl Future<Output = Result<T, CheckpointError>> + Send
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static;

    /// `key`'s slot as stored (no lock needed), with the store's time now.
    fn read(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<(Option<Slot>, SystemTime), CheckpointError>> + Send;

    /// Every key's slot, in key order, with the store's time now.
    fn slots(
        &self,
    ) -> impl Future<Output = Result<(Vec<(String, Slot)>, SystemTime), CheckpointError>> + Send;
}

// Not recommended: what is not a checkpointer is reported with `Checkpointer`'s message, not as
// missing `SlotStore` (one way among others to write a checkpointer).
#[diagnostic::do_not_recommend]
impl<S: SlotStore> Checkpointer for S {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        let worker = worker.to_owned();
        self.transact(key, move |slot, now| {
            Ok(Slot::claim(slot, &worker, ttl, now))
        })
        .await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        let (slot, now) = self.read(key).await?;
        Ok(slot.map(|slot| slot.record(now)).transpose()?.flatten())
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        let (slots, now) = self.slots().await?;
        Ok(slots
            .iter()
            .filter(|(_, slot)| !slot.is_vacant(now))
            .map(|(key, slot)| {
                let ended = slot.checkpoint.is_none()
                    && slot.ended.as_ref().is_some_and(|ended| ended.kept_at(now));
                Stored::new(key.clone(), slot.live_holder(now).map(str::to_owned), ended)
            })
            .collect())
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        let json = checkpoint.to_json()?;
        let (owned_key, pause, lease) = (key.to_owned(), checkpoint.is_pause(), lease.clone());
        self.transact(key, move |slot, now| {
            Ok((
                Some(Slot::put(slot, &owned_key, pause, json, &lease, now)?),
                (),
            ))
        })
        .await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        let (owned_key, lease) = (key.to_owned(), lease.clone());
        self.transact(key, move |slot, now| {
            let (slot, expires_at) = Slot::renew(slot, &owned_key, &lease, now)?;
            Ok((Some(slot), expires_at))
        })
        .await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        let lease = lease.clone();
        self.transact(key, move |slot, now| {
            match Slot::release(slot.clone(), &lease, now) {
                Some(released) => Ok((released, true)),
                None => Ok((slot, false)),
            }
        })
        .await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        let (owned_key, lease, tombstone) = (key.to_owned(), lease.clone(), tombstone.cloned());
        self.transact(key, move |slot, now| {
            Ok((Slot::end(slot, &owned_key, &lease, tombstone, now)?, ()))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pause::Tombstone;

    const TTL: Duration = Duration::from_secs(30);

    /// `worker`'s claim of `slot`, which must be granted: the slot and the lease.
    fn granted(slot: Option<Slot>, worker: &str, now: SystemTime) -> (Slot, Lease) {
        match Slot::claim(slot, worker, TTL, now) {
            (Some(slot), Claim::Granted { lease, .. }) => (slot, lease),
            other => panic!("not granted: {other:?}"),
        }
    }

    fn is_busy(slot: &Slot, worker: &str, now: SystemTime) -> bool {
        matches!(
            Slot::claim(Some(slot.clone()), worker, TTL, now).1,
            Claim::Busy { .. }
        )
    }

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_000_000 + seconds)
    }

    #[test]
    fn a_live_lease_keeps_others_out_until_it_expires() {
        let (slot, lease) = granted(None, "a", at(0));
        assert!(matches!(
            Slot::claim(Some(slot.clone()), "b", TTL, at(29)).1,
            Claim::Busy { holder, .. } if holder == "a"
        ));
        // Its own worker too: two requests of one worker must not both run it.
        assert!(is_busy(&slot, "a", at(29)));
        let (taken, second) = granted(Some(slot), "b", at(30));
        assert!(second.token() > lease.token());
        // The first worker, revived, is fenced out.
        let error = Slot::fence(Some(&taken), "k", &lease, at(31)).unwrap_err();
        assert!(matches!(error, CheckpointError::Claimed { by, .. } if by == "b"));
    }

    #[test]
    fn an_expired_lease_still_writes_while_nobody_claimed() {
        let (slot, lease) = granted(None, "a", at(0));
        assert!(Slot::fence(Some(&slot), "k", &lease, at(100)).is_ok());
    }

    #[test]
    fn tokens_grow_across_removal() {
        let (slot, first) = granted(None, "a", at(0));
        assert_eq!(
            Slot::end(Some(slot), "k", &first, None, at(1)).unwrap(),
            None
        );
        let (_, second) = granted(None, "a", at(2));
        assert!(second.token() > first.token());
    }

    #[test]
    fn a_released_lease_no_longer_writes() {
        let (slot, lease) = granted(None, "a", at(0));
        assert_eq!(Slot::release(Some(slot), &lease, at(1)), Some(None));
        let slot = Slot::new(Some("{}".into()), None, None, lease.token(), 0);
        let error = Slot::fence(Some(&slot), "k", &lease, at(2)).unwrap_err();
        assert!(matches!(error, CheckpointError::LeaseLost { .. }));
    }

    #[test]
    fn a_tombstone_is_kept_for_its_retention() {
        let ended = Tombstone::new("r", "r:1", "finished", "a", at(0), Duration::from_secs(60));
        let slot = Slot::new(None, Some(ended.clone()), None, 1, 0);
        assert_eq!(slot.record(at(59)).unwrap(), Some(Record::Ended(ended)));
        assert_eq!(slot.record(at(60)).unwrap(), None);
        assert!(slot.is_vacant(at(60)));
        let (claimed, _) = granted(Some(slot), "b", at(61));
        assert_eq!(claimed.ended, None);
    }
}
