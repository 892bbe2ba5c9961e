//! [`FileCheckpointer`]: checkpoints in JSON files, written atomically, off the executor.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::checkpointer::valid_key;
use super::{Checkpoint, CheckpointError, Checkpointer};

/// Keeps each checkpoint in a JSON file `<dir>/<key>.json`, written atomically (a temporary
/// file, synced, renamed, and the directory synced), so a crash never leaves a half-written
/// checkpoint nor loses a renamed one; a save that fails removes its temporary file.
///
/// The file operations run on tokio's blocking threads when called inside a tokio runtime
/// (feature `tokio`), so they never hold up the executor's threads; elsewhere they run in
/// place.
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

impl Checkpointer for FileCheckpointer {
    async fn save(&self, key: &str, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
        let path = self.path(key)?;
        let json = checkpoint.to_json()?;
        let dir = self.dir.clone();
        // A temporary name of its own, so that concurrent saves of one key never share a file.
        let temporary = dir.join(format!(".{key}.{}.tmp", unique_suffix()));
        let target = path.clone();
        off_the_executor(&target, move || {
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let written = write_synced(&temporary, json.as_bytes())
                .and_then(|()| std::fs::rename(&temporary, &path).map_err(io(&path)));
            if let Err(error) = written {
                // Nothing left behind: the temporary file is this save's alone.
                let _ = std::fs::remove_file(&temporary);
                return Err(error);
            }
            // The rename is durable once the directory's entry is on disk.
            sync_dir(&dir)
        })
        .await
    }

    async fn load(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = self.path(key)?;
        let read = path.clone();
        let json = off_the_executor(&path, move || match std::fs::read_to_string(&read) {
            Ok(json) => Ok(Some(json)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io(&read)(error)),
        })
        .await?;
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }

    async fn delete(&self, key: &str) -> Result<(), CheckpointError> {
        let path = self.path(key)?;
        let removed = path.clone();
        off_the_executor(&path, move || match std::fs::remove_file(&removed) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(io(&removed)(error)),
        })
        .await
    }

    // The claim is a rename to a name of this caller's own: of several processes renaming the
    // same file at once, exactly one succeeds (the others find no file), and the claimed file
    // is then read and removed by its owner alone.
    async fn take(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = self.path(key)?;
        let claimed = self.dir.join(format!(".{key}.{}.claimed", unique_suffix()));
        let original = path.clone();
        off_the_executor(&path, move || {
            match std::fs::rename(&original, &claimed) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(error) => return Err(io(&original)(error)),
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
                    let _ = std::fs::rename(&claimed, &original);
                    Err(error)
                }
            }
        })
        .await
    }
}

/// Writes `bytes` to a new file at `path` and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let mut file = std::fs::File::create(path).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))?;
    file.sync_all().map_err(io(path))
}

/// Syncs the directory `dir`, so that a rename in it survives a crash (a no-op where a
/// directory cannot be opened as a file).
fn sync_dir(dir: &Path) -> Result<(), CheckpointError> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|dir| dir.sync_all())
            .map_err(io(dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Runs the blocking `work` on tokio's blocking threads when inside a tokio runtime, else in
/// place. `path` names the work in the error of a task the runtime cancelled.
async fn off_the_executor<T: Send + 'static>(
    path: &Path,
    work: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    #[cfg(feature = "tokio")]
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        return match runtime.spawn_blocking(work).await {
            Ok(done) => done,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => Err(io(path)(std::io::Error::other(
                "the runtime shut down before the file operation ran",
            ))),
        };
    }
    let _ = path;
    work()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A suffix no other save or claim uses: this process, and a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{count}", std::process::id())
}
