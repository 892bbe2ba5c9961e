//! [`FileCheckpointer`]: checkpoints in JSON files, written atomically, off the executor.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::checkpointer::valid_key;
use super::{CheckpointError, Clock, Slot, SlotStore};

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
                    Some(slot) => write_atomically(&dir, &path, &to_json(&key, slot)?)?,
                    None => remove_if_there(&path)?,
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

/// Holds the directory's lock until dropped (the file lock goes with the file).
fn lock_dir(dir: &Path) -> Result<File, CheckpointError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = dir.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(&path))?;
    file.lock().map_err(io(&path))?;
    Ok(file)
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

/// Writes `bytes` to `target` in `dir` atomically: a temporary file of this write's own,
/// synced, renamed over `target`, and the directory synced.
fn write_atomically(dir: &Path, target: &Path, bytes: &str) -> Result<(), CheckpointError> {
    let temporary = dir.join(format!(".{}.tmp", unique_suffix()));
    let written = write_synced(&temporary, bytes.as_bytes())
        .and_then(|()| std::fs::rename(&temporary, target).map_err(io(target)));
    if let Err(error) = written {
        // Nothing left behind: the temporary file is this write's alone.
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename is durable once the directory's entry is on disk.
    sync_dir(dir)
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
    // File systems take names of at most 255 bytes: a longer one is cut and completed with a
    // hash of the whole key (the file holds the key, so that a clash is told, never mixed up).
    if name.len() > LONGEST_NAME {
        name.truncate(CUT_NAME);
        name.push_str(&format!("~{:016x}", fnv1a(key.as_bytes())));
    }
    name
}

/// The longest file name written as the key is; a longer one is cut.
const LONGEST_NAME: usize = 200;
/// Where a name too long is cut, before `~` and its hash.
const CUT_NAME: usize = 160;

/// FNV-1a, 64 bits: a hash that stays the same across versions and platforms (file names must).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
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
