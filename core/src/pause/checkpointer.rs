//! Where checkpoints are kept: by key, each key leased to one worker at a time.

use std::future::Future;
use std::time::{Duration, SystemTime};

use super::{Checkpoint, CheckpointError, Claim, Lease, Record, Tombstone};

/// A store of checkpoints by key (a thread's id, or a run's), shared by the workers of a
/// deployment. Implement it to keep checkpoints in your own database; the crate has
/// [`InMemoryCheckpointer`](super::InMemoryCheckpointer),
/// [`FileCheckpointer`](super::FileCheckpointer), and, behind the features `sqlite` and
/// `postgres`, stores in SQLite and Postgres. As an object: [`DynCheckpointer`](super::DynCheckpointer).
///
/// An agent uses it through its [`Durability`](crate::Durability); your code uses it to list
/// runs, or to read what a key holds. Resuming a stored run is
/// [`Agent::resume`](crate::Agent::resume) with [`ResumeFrom::stored`](crate::ResumeFrom::stored):
/// it claims the key and resumes exactly what the store holds.
///
/// # Leases
///
/// Each key is written under a **lease** ([`Lease`]): a worker (a name the worker gives itself,
/// [`AgentBuilder::worker`](crate::AgentBuilder::worker)) [`claim`](Self::claim)s the key for a
/// time to live, renews it while it runs ([`renew`](Self::renew), and every write), and lets it
/// go when it pauses, fails or is dropped ([`release`](Self::release)) or ends
/// ([`end`](Self::end)). The rules, the same in every store ([`Slot`](super::Slot) implements
/// them, for implementers):
///
/// - [`claim`](Self::claim) is atomic: of several workers claiming one key at once, at most one
///   is granted it; the others see [`Claim::Busy`] until the lease expires. A worker's own
///   live lease is busy for it too (two requests of one process never both resume a run).
/// - A lease that expired may be claimed by anyone, with no operator step: a worker that died
///   holds nothing for longer than its lease's time to live.
/// - Every write is **fenced**: it carries its lease, and the store refuses it unless the
///   lease's token is the key's current one and the key is still held by it — so a worker that
///   was paused past its expiry and revived, after another claimed the key, never overwrites
///   the run ([`CheckpointError::Claimed`] or [`CheckpointError::LeaseLost`]). Tokens of a key
///   only grow.
/// - A [`put`](Self::put) of a step (a run in progress) keeps the lease; a put of a pause
///   ([`Checkpoint::is_pause`]) frees the key for whoever has the answers.
/// - A run that ends leaves a [`Tombstone`] ([`end`](Self::end)) for its retention, so a
///   replayed resume is refused, never run again; a tombstone past its retention reads as
///   nothing.
///
/// Keys are any non-empty text of at most [`MAX_KEY_LEN`] bytes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a checkpointer",
    label = "not a checkpointer",
    note = "a checkpointer is an `InMemoryCheckpointer`, a `FileCheckpointer::new(dir)`, a \
            database's (`SqliteCheckpointer`, `PostgresCheckpointer`), or a type with a \
            hand-written `impl Checkpointer`; the agent owns it: one your code uses too goes in an \
            `Arc`, one chosen at run time in an `Arc<dyn DynCheckpointer>`"
)]
// `where Self: Sync` on each method returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of a hand-written impl assumes it, so a type that
// is not `Sync` is one error, at the impl, rather than one more per method.
pub trait Checkpointer: Send + Sync {
    /// Claims `key` for `worker` for `ttl`, atomically: granted (with a new token, and what the
    /// key holds) unless another lease on it is live. A key that holds nothing is granted too
    /// (a new run takes its key so); its record is then `None`. A record that does not decode is
    /// granted with its error, so the claimer may [`end`](Self::end) it.
    fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Claim, CheckpointError>> + Send
    where
        Self: Sync;

    /// What `key` holds, if anything (whoever holds its lease).
    fn get(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Record>, CheckpointError>> + Send
    where
        Self: Sync;

    /// Every key that holds something or is leased, in key order.
    fn list(&self) -> impl Future<Output = Result<Vec<Stored>, CheckpointError>> + Send
    where
        Self: Sync;

    /// Stores `checkpoint` under `key`, fenced by `lease`: a step keeps the lease (renewed), a
    /// pause frees the key.
    fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send
    where
        Self: Sync;

    /// Renews `lease` on `key` for its time to live: the new expiry.
    fn renew(
        &self,
        key: &str,
        lease: &Lease,
    ) -> impl Future<Output = Result<SystemTime, CheckpointError>> + Send
    where
        Self: Sync;

    /// Frees `key` if `lease` is its lease (what it holds stays, for another to claim);
    /// whether it did.
    fn release(
        &self,
        key: &str,
        lease: &Lease,
    ) -> impl Future<Output = Result<bool, CheckpointError>> + Send
    where
        Self: Sync;

    /// The run under `key` ended: replaces what it holds with `tombstone` (kept for its
    /// retention), or removes the key (`None`), fenced by `lease`.
    fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send
    where
        Self: Sync;
}

/// A shared store: an agent and your code (claiming, listing) use the same one.
// Not recommended: an `Arc` of what is not a checkpointer is reported as the `Arc`, with
// `Checkpointer`'s message.
#[diagnostic::do_not_recommend]
impl<T: Checkpointer + ?Sized> Checkpointer for std::sync::Arc<T> {
    fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Claim, CheckpointError>> + Send {
        T::claim(self, key, worker, ttl)
    }

    fn get(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Record>, CheckpointError>> + Send {
        T::get(self, key)
    }

    fn list(&self) -> impl Future<Output = Result<Vec<Stored>, CheckpointError>> + Send {
        T::list(self)
    }

    fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        T::put(self, key, checkpoint, lease)
    }

    fn renew(
        &self,
        key: &str,
        lease: &Lease,
    ) -> impl Future<Output = Result<SystemTime, CheckpointError>> + Send {
        T::renew(self, key, lease)
    }

    fn release(
        &self,
        key: &str,
        lease: &Lease,
    ) -> impl Future<Output = Result<bool, CheckpointError>> + Send {
        T::release(self, key, lease)
    }

    fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        T::end(self, key, lease, tombstone)
    }
}

/// A key in a [`Checkpointer`]: who holds its lease, and whether its run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stored {
    /// The key.
    pub key: String,
    /// The worker whose lease on it is live; `None` when it is free.
    pub held_by: Option<String>,
    /// Whether it holds the tombstone of a run that ended.
    pub ended: bool,
}

impl Stored {
    /// A key held by `held_by` (or free), its run `ended` or not.
    #[must_use]
    pub fn new(key: impl Into<String>, held_by: Option<String>, ended: bool) -> Self {
        Stored {
            key: key.into(),
            held_by,
            ended,
        }
    }
}

/// The longest key a [`Checkpointer`] takes, in bytes.
pub const MAX_KEY_LEN: usize = 512;

/// Checks that `key` is one every store takes: non-empty, at most [`MAX_KEY_LEN`] bytes.
/// For implementations of [`Checkpointer`].
pub fn valid_key(key: &str) -> Result<&str, CheckpointError> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        Err(CheckpointError::Key {
            key: key.chars().take(64).collect(),
        })
    } else {
        Ok(key)
    }
}
