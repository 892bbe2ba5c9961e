//! Where checkpoints are kept between a pause and a resume.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::{Checkpoint, CheckpointError};
use crate::lock::lock;

/// A store of checkpoints by key (a thread or conversation id, say). Implement it to keep
/// checkpoints in your own database.
///
/// A checkpoint is single-use: resume one you [`take`](Self::take), which hands a stored
/// checkpoint to exactly one caller, so two tasks or processes racing to resume it run it once.
pub trait Checkpointer: Send + Sync {
    /// Stores `checkpoint` under `key`, replacing what was there.
    fn save(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// The checkpoint stored under `key`, if any.
    fn load(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send;

    /// Removes the checkpoint stored under `key` (no error if there is none).
    fn delete(&self, key: &str) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// Claims the checkpoint stored under `key`: removes it and returns it, atomically, so that
    /// of several callers taking the same key at once exactly one gets it (the others get
    /// `None`). Resume what you take: that is how a stored checkpoint is resumed once.
    fn take(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Checkpoint>, CheckpointError>> + Send;
}

/// Keeps checkpoints in memory (as JSON, so what is loaded is what a process restart would
/// read).
#[derive(Debug, Default)]
pub struct InMemoryCheckpointer {
    checkpoints: Mutex<HashMap<String, String>>,
}

impl InMemoryCheckpointer {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl Checkpointer for InMemoryCheckpointer {
    async fn save(&self, key: &str, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
        let key = valid_key(key)?;
        let json = checkpoint.to_json()?;
        lock(&self.checkpoints).insert(key.to_owned(), json);
        Ok(())
    }

    async fn load(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let json = lock(&self.checkpoints).get(valid_key(key)?).cloned();
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }

    async fn delete(&self, key: &str) -> Result<(), CheckpointError> {
        lock(&self.checkpoints).remove(valid_key(key)?);
        Ok(())
    }

    async fn take(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let json = lock(&self.checkpoints).remove(valid_key(key)?);
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }
}

/// Keys are the same for every store: letters, digits, `-`, `_` and `.` (so any store can
/// become a file name).
pub(super) fn valid_key(key: &str) -> Result<&str, CheckpointError> {
    let valid = !key.is_empty()
        && key != "."
        && key != ".."
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(key)
    } else {
        Err(CheckpointError::Key {
            key: key.to_owned(),
        })
    }
}
