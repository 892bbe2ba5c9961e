//! [`ThreadStoreError`]: why a thread could not be loaded, saved, listed or deleted.

use std::path::PathBuf;

use crate::ids::ThreadId;
use crate::report::BoxError;

/// Why a [`ThreadStore`](super::ThreadStore) could not load, save, list or delete a thread.
///
/// Every error about one stored thread names it: a store never panics on what it reads, and
/// never takes a thread it cannot read for a missing one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ThreadStoreError {
    /// Another writer saved the thread since it was loaded (or created it, or deleted it): this
    /// save is refused, and the stored thread is the other writer's. Load it again and redo
    /// the work on it (see *Optimistic concurrency* on [`ThreadStore`](super::ThreadStore)).
    #[error(
        "thread `{id}` was saved by another writer: expected version {expected}, found {found} \
         (load it again)"
    )]
    Conflict {
        /// The thread.
        id: ThreadId,
        /// The version the save expected (0: a thread not stored yet).
        expected: u64,
        /// The version stored now (0: none is stored).
        found: u64,
    },
    /// The stored thread is not one (corrupt, truncated, edited by hand, or another thread's).
    #[error("stored thread `{id}` is not a valid thread (corrupt or truncated?)")]
    Decode {
        /// The thread.
        id: ThreadId,
        /// Why it does not read.
        #[source]
        source: serde_json::Error,
    },
    /// The stored thread was written in a format newer than this version reads
    /// ([`THREAD_FORMAT`](crate::agent::THREAD_FORMAT)): it is left as it is, never misread.
    #[error(
        "stored thread `{id}` has format {found}, newer than this version reads (format {supported})"
    )]
    Format {
        /// The thread.
        id: ThreadId,
        /// The stored thread's format.
        found: u64,
        /// The newest format this version reads.
        supported: u32,
    },
    /// The thread, as stored, is larger than a store keeps or reads
    /// ([`MAX_THREAD_LEN`](super::MAX_THREAD_LEN)).
    #[error("thread `{id}` is {len} bytes as stored, more than the {max} a store keeps")]
    TooLarge {
        /// The thread.
        id: ThreadId,
        /// Its size as stored, in bytes.
        len: u64,
        /// The most a store keeps.
        max: u64,
    },
    /// The thread could not be written as JSON (its thread-scoped state did not serialize).
    #[error("thread `{id}` could not be written as JSON")]
    Encode {
        /// The thread.
        id: ThreadId,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A thread id that no store takes: empty, longer than
    /// [`MAX_ID_LEN`](super::MAX_ID_LEN) bytes, or holding the character NUL.
    #[error("thread id {id:?} is empty, too long (at most 512 bytes) or holds NUL")]
    Id {
        /// The id (its first 64 characters).
        id: String,
    },
    /// A file of a file-backed store could not be read or written.
    #[error("thread file {} could not be read or written", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The store's database failed (a connection, a query).
    #[error("the thread store failed: {what}")]
    Store {
        /// What the store was doing ("save", "connect", …).
        what: &'static str,
        /// Why it failed.
        #[source]
        source: BoxError,
    },
}

impl From<crate::files::FileError> for ThreadStoreError {
    fn from(crate::files::FileError { path, source }: crate::files::FileError) -> Self {
        ThreadStoreError::Io { path, source }
    }
}
