//! [`FileCheckpointer`]: checkpoints in JSON files, written atomically, off the executor.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::checkpointer::valid_key;
use super::{CheckpointError, Clock, Slot, SlotStore};
use crate::files::{
    self, FileError, file_name, key_of, lock_dir, off_the_executor, read_if_there, remove_if_there,
    write_atomically,
};

/// Keeps each key in a JSON file `<dir>/<key>.json`: its checkpoint or tombstone, and its
/// lease. Files are written atomically (a temporary file, synced, renamed, and the directory
/// synced), so a crash never leaves a half-written entry nor loses a renamed one; a write that
/// fails removes its temporary file. Characters of a key other than ASCII letters, digits, `-`
/// and `_` are written `%XX` in the file names; a name longer than 200 bytes is cut and
/// completed with a hash of the key (every key of at most [`MAX_KEY_LEN`](super::MAX_KEY_LEN)
/// bytes fits), the file holding the key itself.
///
/// Every operation reads, decides and writes under an exclusive lock of `<dir>/.lock` (an
/// operating-system file lock), so claims, fences and writes are atomic between the processes
/// of one machine; many workers on many machines want a database (features `sqlite`,
/// `postgres`). A file written by an older version (the checkpoint alone) is read as a free
/// key holding it.
///
/// The file operations run on tokio's blocking threads when called inside a tokio runtime
/// (feature `tokio`), so they never hold up the executor's threads; elsewhere they run in
/// place.
pub struct FileCheckpointer {
    dir: PathBuf,
    clock: Clock,
}

impl FileCheckpointer {
    /// A store in `dir` (created on first write), on the system's clock.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpointer {
            dir: dir.into(),
            clock: Clock::system(),
        }
    }

    /// The store reading the time from `clock` (leases, retention).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The file of `key`.
    pub fn path(&self, key: &str) -> Result<PathBuf, CheckpointError> {
        Ok(self
            .dir
            .join(format!("{}.json", file_name(valid_key(key)?))))
    }
}

impl fmt::Debug for FileCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileCheckpointer")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl SlotStore for FileCheckpointer {
    async fn transact<T, F>(&self, key: &str, operation: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static,
    {
        let path = self.path(key)?;
        let (dir, now) = (self.dir.clone(), self.clock.now());
        let key = key.to_owned();
        off_the_executor(&path.clone(), move || {
            let _lock = lock_dir(&dir)?;
            let slot = slot_of(&key, &path)?;
            let (updated, done) = operation(slot.clone(), now)?;
            if updated != slot {
                match &updated {
                    Some(slot) => {
                        write_atomically(&dir, &path, to_json(&key, slot)?.as_bytes())?;
                    }
                    None => {
                        remove_if_there(&path)?;
                    }
                }
            }
            Ok(done)
        })
        .await
    }

    async fn read(&self, key: &str) -> Result<(Option<Slot>, SystemTime), CheckpointError> {
        let path = self.path(key)?;
        let (read, key) = (path.clone(), key.to_owned());
        let slot = off_the_executor(&path, move || slot_of(&key, &read)).await?;
        Ok((slot, self.clock.now()))
    }

    async fn slots(&self) -> Result<(Vec<(String, Slot)>, SystemTime), CheckpointError> {
        let dir = self.dir.clone();
        let slots = off_the_executor(&self.dir, move || {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Vec::new());
                }
                Err(error) => return Err(io(&dir)(error)),
            };
            let mut slots = Vec::new();
            for entry in entries {
                let entry = entry.map_err(io(&dir))?;
                let name = entry.file_name();
                let Some(name) = name.to_str().and_then(|name| name.strip_suffix(".json")) else {
                    continue;
                };
                // Temporary files start with a dot; keys never do once written.
                if name.starts_with('.') {
                    continue;
                }
                let Some((written, slot)) = read_slot(&entry.path())? else {
                    continue;
                };
                // The key the file says (a long key's name is cut), else the one its name says.
                if let Some(key) = written.or_else(|| key_of(name)) {
                    slots.push((key, slot));
                }
            }
            slots.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(slots)
        })
        .await?;
        Ok((slots, self.clock.now()))
    }
}

/// A key's file: its key (absent in a file of an older version), and its slot.
#[derive(Serialize, Deserialize)]
struct Written<S> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(flatten)]
    slot: S,
}

/// `key`'s slot, in the file at `path`: refused if the file is another key's (two long keys
/// whose cut names and hashes met).
fn slot_of(key: &str, path: &Path) -> Result<Option<Slot>, CheckpointError> {
    match read_slot(path)? {
        Some((Some(written), _)) if written != key => Err(io(path)(std::io::Error::other(
            format!("the file holds the key {written:?}, not {key:?} (their file names met)"),
        ))),
        read => Ok(read.map(|(_, slot)| slot)),
    }
}

/// The key and slot in the file at `path`, if there is one; a file of an older version (the
/// checkpoint alone) is a free key holding it.
fn read_slot(path: &Path) -> Result<Option<(Option<String>, Slot)>, CheckpointError> {
    let Some(text) = read_if_there(path)? else {
        return Ok(None);
    };
    match serde_json::from_str::<Written<Slot>>(&text) {
        Ok(written) => Ok(Some((written.key, written.slot))),
        Err(error) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) if value.get("token").is_none() && value.get("format").is_some() => {
                Ok(Some((None, Slot::new(Some(text), None, None, 0, 0))))
            }
            _ => Err(CheckpointError::Decode(error)),
        },
    }
}

fn to_json(key: &str, slot: &Slot) -> Result<String, CheckpointError> {
    let written = Written {
        key: Some(key.to_owned()),
        slot,
    };
    serde_json::to_string(&written).map_err(CheckpointError::Encode)
}

impl From<FileError> for CheckpointError {
    fn from(FileError { path, source }: FileError) -> Self {
        CheckpointError::Io { path, source }
    }
}

/// The [`CheckpointError::Io`] of `path`, for `map_err`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| files::io(path)(source).into()
}
