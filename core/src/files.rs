//! What the file-backed stores share: file names for keys, atomic writes, a directory's lock,
//! and file work kept off the executor's threads.
//!
//! Errors are [`FileError`]s (the file and what failed); each store turns them into its own
//! error type, so that this module names no store.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file operation that failed, and the file it failed on.
#[derive(Debug)]
pub(crate) struct FileError {
    pub(crate) path: PathBuf,
    pub(crate) source: std::io::Error,
}

/// The [`FileError`] of `path`, for `map_err`.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
    move |source| FileError {
        path: path.to_owned(),
        source,
    }
}

/// Holds the directory's lock until dropped (the file lock goes with the file).
pub(crate) fn lock_dir(dir: &Path) -> Result<File, FileError> {
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

/// Writes `bytes` to `target` in `dir` atomically: a temporary file of this write's own,
/// synced, renamed over `target`, and the directory synced.
pub(crate) fn write_atomically(dir: &Path, target: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let temporary = dir.join(format!(".{}.tmp", unique_suffix()));
    let written = write_synced(&temporary, bytes)
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
pub(crate) fn file_name(key: &str) -> String {
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

/// The key a file name was written for, if it is one whole (a name cut for its length is
/// not: the file holds its key).
pub(crate) fn key_of(name: &str) -> Option<String> {
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
pub(crate) fn read_if_there(path: &Path) -> Result<Option<String>, FileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io(path)(error)),
    }
}

/// Removes the file at `path`; whether there was one.
pub(crate) fn remove_if_there(path: &Path) -> Result<bool, FileError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io(path)(error)),
    }
}

/// Writes `bytes` to a new file at `path` and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let mut file = std::fs::File::create(path).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))?;
    file.sync_all().map_err(io(path))
}

/// Syncs the directory `dir`, so that a rename in it survives a crash (a no-op where a
/// directory cannot be opened as a file).
fn sync_dir(dir: &Path) -> Result<(), FileError> {
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
pub(crate) async fn off_the_executor<T, E>(
    path: &Path,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<FileError> + Send + 'static,
{
    #[cfg(feature = "tokio")]
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        return match runtime.spawn_blocking(work).await {
            Ok(done) => done,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => Err(io(path)(std::io::Error::other(
                "the runtime shut down before the file operation ran",
            ))
            .into()),
        };
    }
    let _ = path;
    work()
}

/// A suffix no other write uses: this process, and a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{count}", std::process::id())
}
