//! Where checkpoints are kept: by key, claimed by one worker at a time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::{Checkpoint, CheckpointError};
use crate::lock::lock;

/// A store of checkpoints by key (a thread's id, or a run's), shared by the workers of a
/// deployment. Implement it to keep checkpoints in your own database; the crate has
/// [`InMemoryCheckpointer`], [`FileCheckpointer`](super::FileCheckpointer), and, behind the
/// features `sqlite` and `postgres`, stores in SQLite and Postgres.
///
/// # Claims
///
/// Each stored checkpoint is either **free** or **held** by one worker (a name the worker
/// gives itself, [`AgentBuilder::worker`](crate::AgentBuilder::worker)):
///
/// - a run in progress holds its key: every [`put`](Self::put) of a step checkpoint (one
///   without pending interrupts) leaves the key held by the worker that wrote it;
/// - a pause waits for answers: a [`put`](Self::put) of a checkpoint with pending interrupts
///   leaves the key free, for whoever has the answers to [`claim`](Self::claim);
/// - writes are fenced: [`put`](Self::put) and [`delete`](Self::delete) by a worker that does
///   not hold a held key fail with [`CheckpointError::Claimed`], so a worker that lost its key
///   can never overwrite the run another worker took over;
/// - [`claim`](Self::claim) is atomic: of several workers claiming one free key at once,
///   exactly one gets the checkpoint. That is how a stored checkpoint is resumed once.
///
/// A key held by a worker that died stays held: whoever knows the worker is gone (its
/// supervisor, or the worker itself restarted under the same name, which may claim its own
/// keys) [`release`](Self::release)s it for another to claim. [`list`](Self::list) says who
/// holds what.
///
/// Keys are any non-empty text of at most [`MAX_KEY_LEN`] bytes.
pub trait Checkpointer: Send + Sync {
    /// Stores `checkpoint` under `key` for `worker`, replacing what was there; fails with
    /// [`CheckpointError::Claimed`] if another worker holds the key. Afterwards the key is held
    /// by `worker` if the checkpoint is a step of a run in progress, and free if it is a pause
    /// ([`Checkpoint::is_pause`]).
    fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// The checkpoint stored under `key`, if any (whoever holds it).
    fn get(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send;

    /// Every stored key, with the worker holding it, in key order.
    fn list(&self) -> impl Future<Output = Result<Vec<Stored>, CheckpointError>> + Send;

    /// Claims the checkpoint under `key` for `worker`, atomically: if it is free (or held by
    /// `worker` already), the key becomes held by `worker` and the checkpoint is returned;
    /// otherwise `None` (no such key, or another worker holds it).
    fn claim(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send;

    /// Frees `key` if `worker` holds it (a worker that died, released by whoever knows it);
    /// returns whether it did.
    fn release(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<bool, CheckpointError>> + Send;

    /// Removes the checkpoint under `key` (no error if there is none); fails with
    /// [`CheckpointError::Claimed`] if another worker holds it.
    fn delete(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;
}

/// A shared store: an agent and your code (claiming, listing) use the same one.
impl<T: Checkpointer + ?Sized> Checkpointer for std::sync::Arc<T> {
    fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        T::put(self, key, checkpoint, worker)
    }

    fn get(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send {
        T::get(self, key)
    }

    fn list(&self) -> impl Future<Output = Result<Vec<Stored>, CheckpointError>> + Send {
        T::list(self)
    }

    fn claim(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send {
        T::claim(self, key, worker)
    }

    fn release(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<bool, CheckpointError>> + Send {
        T::release(self, key, worker)
    }

    fn delete(
        &self,
        key: &str,
        worker: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        T::delete(self, key, worker)
    }
}

/// A key in a [`Checkpointer`], and who holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stored {
    /// The key.
    pub key: String,
    /// The worker holding it; `None` when it is free.
    pub held_by: Option<String>,
}

impl Stored {
    /// A key held by `held_by` (or free).
    #[must_use]
    pub fn new(key: impl Into<String>, held_by: Option<String>) -> Self {
        Stored {
            key: key.into(),
            held_by,
        }
    }
}

/// The longest key a [`Checkpointer`] takes, in bytes.
pub const MAX_KEY_LEN: usize = 512;

/// Keeps checkpoints in memory (as JSON, so what is read back is what a process restart would
/// read).
#[derive(Debug, Default)]
pub struct InMemoryCheckpointer {
    entries: Mutex<HashMap<String, Entry>>,
}

/// A stored checkpoint and its holder.
#[derive(Debug)]
struct Entry {
    json: String,
    held_by: Option<String>,
}

impl InMemoryCheckpointer {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl Checkpointer for InMemoryCheckpointer {
    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> Result<(), CheckpointError> {
        let key = valid_key(key)?;
        let json = checkpoint.to_json()?;
        let mut entries = lock(&self.entries);
        if let Some(entry) = entries.get(key) {
            fence(key, entry.held_by.as_deref(), worker)?;
        }
        let held_by = holder_after_put(checkpoint, worker).map(str::to_owned);
        entries.insert(key.to_owned(), Entry { json, held_by });
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let json = lock(&self.entries)
            .get(valid_key(key)?)
            .map(|entry| entry.json.clone());
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        let mut stored: Vec<Stored> = lock(&self.entries)
            .iter()
            .map(|(key, entry)| Stored::new(key.clone(), entry.held_by.clone()))
            .collect();
        stored.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(stored)
    }

    async fn claim(&self, key: &str, worker: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let key = valid_key(key)?;
        let json = {
            let mut entries = lock(&self.entries);
            let Some(entry) = entries.get_mut(key) else {
                return Ok(None);
            };
            if entry
                .held_by
                .as_deref()
                .is_some_and(|holder| holder != worker)
            {
                return Ok(None);
            }
            entry.held_by = Some(worker.to_owned());
            entry.json.clone()
        };
        Checkpoint::from_json(&json).map(Some)
    }

    async fn release(&self, key: &str, worker: &str) -> Result<bool, CheckpointError> {
        let key = valid_key(key)?;
        let mut entries = lock(&self.entries);
        match entries.get_mut(key) {
            Some(entry) if entry.held_by.as_deref() == Some(worker) => {
                entry.held_by = None;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn delete(&self, key: &str, worker: &str) -> Result<(), CheckpointError> {
        let key = valid_key(key)?;
        let mut entries = lock(&self.entries);
        if let Some(entry) = entries.get(key) {
            fence(key, entry.held_by.as_deref(), worker)?;
            entries.remove(key);
        }
        Ok(())
    }
}

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

/// Who holds a key once `worker` has put `checkpoint` there: `worker` while the run goes on
/// (a step), nobody once it paused (whoever has the answers may claim it). For implementations
/// of [`Checkpointer`].
#[must_use]
pub fn holder_after_put<'w>(checkpoint: &Checkpoint, worker: &'w str) -> Option<&'w str> {
    (!checkpoint.is_pause()).then_some(worker)
}

/// Whether `worker` may write `key`, which `held_by` holds (or nobody). For implementations
/// of [`Checkpointer`].
pub fn fence(key: &str, held_by: Option<&str>, worker: &str) -> Result<(), CheckpointError> {
    match held_by {
        Some(holder) if holder != worker => Err(CheckpointError::Claimed {
            key: key.to_owned(),
            by: holder.to_owned(),
        }),
        _ => Ok(()),
    }
}
