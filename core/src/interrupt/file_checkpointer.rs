//! [`FileCheckpointer`]: checkpoints in JSON files, written atomically, off the executor.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::checkpointer::{fence, holder_after_put, valid_key};
use super::{Checkpoint, CheckpointError, Checkpointer, Stored};

/// Keeps each checkpoint in a JSON file `<dir>/<key>.json`, and the worker holding it in
/// `<dir>/<key>.holder`. Files are written atomically (a temporary file, synced, renamed, and
/// the directory synced), so a crash never leaves a half-written checkpoint nor loses a
/// renamed one; a write that fails removes its temporary file. Characters of a key other than
/// ASCII letters, digits, `-` and `_` are written `%XX` in the file names.
///
/// A claim creates the holder file exclusively, so of several processes claiming one key
/// exactly one gets it. For one machine (or a shared file system with exclusive creation):
/// [`put`](Checkpointer::put)'s fence is checked, then written, not in one atomic step; many
/// workers on many machines want a database (features `sqlite`, `postgres`).
///
/// The file operations run on tokio's blocking threads when called inside a tokio runtime
/// (feature `tokio`), so they never hold up the executor's threads; elsewhere they run in
/// place.
pub struct FileCheckpointer {
    dir: PathBuf,
}

impl FileCheckpointer {
    /// A store in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpointer { dir: dir.into() }
    }

    /// The file of `key`'s checkpoint.
    pub fn path(&self, key: &str) -> Result<PathBuf, CheckpointError> {
        Ok(self
            .dir
            .join(format!("{}.json", file_name(valid_key(key)?))))
    }

    /// The files of `key`: its checkpoint and its holder.
    fn files(&self, key: &str) -> Result<Files, CheckpointError> {
        let name = file_name(valid_key(key)?);
        Ok(Files {
            dir: self.dir.clone(),
            checkpoint: self.dir.join(format!("{name}.json")),
            holder: self.dir.join(format!("{name}.holder")),
            name,
        })
    }
}

impl fmt::Debug for FileCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileCheckpointer")
            .field("dir", &self.dir)
            .finish()
    }
}

/// The files of one key.
struct Files {
    dir: PathBuf,
    /// The key as written in file names.
    name: String,
    checkpoint: PathBuf,
    holder: PathBuf,
}

impl Files {
    /// The worker holding the key, if any.
    fn holder(&self) -> Result<Option<String>, CheckpointError> {
        read_if_there(&self.holder)
    }

    /// Writes `bytes` to `target` atomically: a temporary file of this write's own, synced,
    /// renamed over `target`, and the directory synced.
    fn write(&self, target: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let temporary = self
            .dir
            .join(format!(".{}.{}.tmp", self.name, unique_suffix()));
        let written = write_synced(&temporary, bytes)
            .and_then(|()| std::fs::rename(&temporary, target).map_err(io(target)));
        if let Err(error) = written {
            // Nothing left behind: the temporary file is this write's alone.
            let _ = std::fs::remove_file(&temporary);
            return Err(error);
        }
        // The rename is durable once the directory's entry is on disk.
        sync_dir(&self.dir)
    }
}

impl Checkpointer for FileCheckpointer {
    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> Result<(), CheckpointError> {
        let files = self.files(key)?;
        let json = checkpoint.to_json()?;
        let holder = holder_after_put(checkpoint, worker).map(str::to_owned);
        let (key, worker) = (key.to_owned(), worker.to_owned());
        off_the_executor(&files.checkpoint.clone(), move || {
            fence(&key, files.holder()?.as_deref(), &worker)?;
            files.write(&files.checkpoint, json.as_bytes())?;
            match holder {
                Some(holder) => files.write(&files.holder, holder.as_bytes()),
                None => remove_if_there(&files.holder),
            }
        })
        .await
    }

    async fn get(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let path = self.path(key)?;
        let read = path.clone();
        let json = off_the_executor(&path, move || read_if_there(&read)).await?;
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        let dir = self.dir.clone();
        off_the_executor(&self.dir, move || {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Vec::new());
                }
                Err(error) => return Err(io(&dir)(error)),
            };
            let mut stored = Vec::new();
            for entry in entries {
                let entry = entry.map_err(io(&dir))?;
                let name = entry.file_name();
                let Some(key) = name.to_str().and_then(|name| name.strip_suffix(".json")) else {
                    continue;
                };
                // Temporary files start with a dot; keys never do once written.
                let Some(key) = key_of(key) else { continue };
                let holder = read_if_there(&dir.join(format!("{}.holder", file_name(&key))))?;
                stored.push(Stored::new(key, holder));
            }
            stored.sort_by(|a, b| a.key.cmp(&b.key));
            Ok(stored)
        })
        .await
    }

    // The claim creates the holder file exclusively: of several processes creating it at once
    // exactly one succeeds.
    async fn claim(&self, key: &str, worker: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let files = self.files(key)?;
        let worker = worker.to_owned();
        let json = off_the_executor(&files.checkpoint.clone(), move || {
            if !files.checkpoint.exists() {
                return Ok(None);
            }
            let created = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&files.holder);
            match created {
                Ok(mut file) => {
                    file.write_all(worker.as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(io(&files.holder))?;
                    sync_dir(&files.dir)?;
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    if files.holder()?.as_deref() != Some(worker.as_str()) {
                        return Ok(None);
                    }
                }
                Err(error) => return Err(io(&files.holder)(error)),
            }
            match read_if_there(&files.checkpoint) {
                Ok(Some(json)) => Ok(Some(json)),
                // Deleted between the check and the claim, or unreadable: nothing claimed.
                other => {
                    let _ = std::fs::remove_file(&files.holder);
                    other
                }
            }
        })
        .await?;
        json.map(|json| Checkpoint::from_json(&json)).transpose()
    }

    async fn release(&self, key: &str, worker: &str) -> Result<bool, CheckpointError> {
        let files = self.files(key)?;
        let worker = worker.to_owned();
        off_the_executor(&files.holder.clone(), move || {
            if files.holder()?.as_deref() != Some(worker.as_str()) {
                return Ok(false);
            }
            remove_if_there(&files.holder)?;
            Ok(true)
        })
        .await
    }

    async fn delete(&self, key: &str, worker: &str) -> Result<(), CheckpointError> {
        let files = self.files(key)?;
        let (key, worker) = (key.to_owned(), worker.to_owned());
        off_the_executor(&files.checkpoint.clone(), move || {
            fence(&key, files.holder()?.as_deref(), &worker)?;
            remove_if_there(&files.checkpoint)?;
            remove_if_there(&files.holder)
        })
        .await
    }
}

/// `key` as written in file names: ASCII letters, digits, `-` and `_` as they are, every
/// other byte `%XX` (so no key names a path, a hidden file, or two keys one file).
fn file_name(key: &str) -> String {
    let mut name = String::with_capacity(key.len());
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_') {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    name
}

/// The key a file name was written for, if it is one.
fn key_of(name: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(name.len());
    let mut rest = name.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_') {
            bytes.push(byte);
            rest = tail;
        } else {
            return None;
        }
    }
    String::from_utf8(bytes).ok().filter(|key| !key.is_empty())
}

/// The text of the file at `path`, or `None` if there is none.
fn read_if_there(path: &Path) -> Result<Option<String>, CheckpointError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io(path)(error)),
    }
}

/// Removes the file at `path` if there is one.
fn remove_if_there(path: &Path) -> Result<(), CheckpointError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io(path)(error)),
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

/// A suffix no other write uses: this process, and a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{count}", std::process::id())
}
