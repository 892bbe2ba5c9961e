//! Where checkpoints are kept between a pause and a resume.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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
fn valid_key(key: &str) -> Result<&str, CheckpointError> {
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

/// Keeps each checkpoint in a JSON file `<dir>/<key>.json`, written atomically (a temporary
/// file, synced, then renamed), so a crash never leaves a half-written checkpoint.
///
/// The file operations are blocking; checkpoints are small and written once per pause.
pub struct FileCheckpointer {
    dir: PathBuf,
}

impl FileCheckpointer {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpointer { dir: dir.into() }
    }

    /// The file of `key`.
    pub fn path(&self, key: &str) -> Result<PathBuf, CheckpointError> {
        Ok(self.dir.join(format!("{}.json", valid_key(key)?)))
    }
}

impl fmt::Debug for FileCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileCheckpointer")
            .field("dir", &self.dir)
            .finish()
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_owned(),
        source,
    }
}

impl Checkpointer for FileCheckpointer {
    async fn save(&self, key: &str, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
        let path = self.path(key)?;
        let json = checkpoint.to_json()?;
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        // A temporary name of its own, so that concurrent saves of one key never share a file.
        let temporary = self.dir.join(format!(".{key}.{}.tmp", unique_suffix()));
        let mut file = std::fs::File::create(&temporary).map_err(io(&temporary))?;
        file.write_all(json.as_bytes()).map_err(io(&temporary))?;
        file.sync_all().map_err(io(&temporary))?;
        drop(file);
        std::fs::rename(&temporary, &path).map_err(io(&path))
    }

    async fn load(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = self.path(key)?;
        match std::fs::read_to_string(&path) {
            Ok(json) => Checkpoint::from_json(&json).map(Some),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io(&path)(error)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), CheckpointError> {
        let path = self.path(key)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(io(&path)(error)),
        }
    }

    // The claim is a rename to a name of this caller's own: of several processes renaming the
    // same file at once, exactly one succeeds (the others find no file), and the claimed file
    // is then read and removed by its owner alone.
    async fn take(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = self.path(key)?;
        let claimed = self.dir.join(format!(".{key}.{}.claimed", unique_suffix()));
        match std::fs::rename(&path, &claimed) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(io(&path)(error)),
        }
        let read = std::fs::read_to_string(&claimed)
            .map_err(io(&claimed))
            .and_then(|json| Checkpoint::from_json(&json));
        match read {
            Ok(checkpoint) => {
                // Spent once read: the claim is the only copy, and it is this caller's.
                let _ = std::fs::remove_file(&claimed);
                Ok(Some(checkpoint))
            }
            Err(error) => {
                // Nothing lost: a checkpoint that could not be read goes back where it was.
                let _ = std::fs::rename(&claimed, &path);
                Err(error)
            }
        }
    }
}

/// A suffix no other save or claim uses: this process, and a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{count}", std::process::id())
}
