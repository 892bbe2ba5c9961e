//! A thread as stores keep it ([`EncodedThread`]: its JSON and its version), as it is handed
//! out ([`StoredThread`]), and the rules that turn one into the other, the same in every store.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::ThreadStoreError;
use crate::thread::{THREAD_FORMAT, Thread, ThreadId};

/// The longest thread id a [`ThreadStore`](super::ThreadStore) takes, in bytes (the longest
/// key of a checkpointer: a thread's id is its runs' key there).
pub const MAX_ID_LEN: usize = crate::interrupt::MAX_KEY_LEN;

/// The largest thread a [`ThreadStore`](super::ThreadStore) saves or reads, in bytes of its
/// JSON: 64 MiB. A larger one is refused with [`ThreadStoreError::TooLarge`] — when saved, and
/// when read (a store reads no more of it than its size), so that a damaged or hostile entry
/// never makes a process allocate without bound. A history that grows past it wants a
/// [`Summarization`](crate::builtin::Summarization) or
/// [`ContextEditing`](crate::builtin::ContextEditing) middleware.
pub const MAX_THREAD_LEN: usize = 64 << 20;

/// A thread as a store keeps it: the JSON text [`ThreadStore::save`](super::ThreadStore::save)
/// wrote, and its version. What implementations of [`ThreadStore`](super::ThreadStore) load
/// and save; [`ThreadStore::load`](super::ThreadStore::load) decodes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncodedThread {
    /// The thread's JSON, as saved.
    pub json: String,
    /// Its version: 1 when first saved, one more at every save.
    pub version: u64,
}

impl EncodedThread {
    /// A thread's `json` at `version`, as read back from a store.
    #[must_use]
    pub fn new(json: String, version: u64) -> Self {
        EncodedThread { json, version }
    }

    /// The owner the thread records ([`Thread::owner`]), read without the rest of it; `None`
    /// when it records none. For stores that list a principal's threads
    /// ([`ThreadStore::list_owned`](super::ThreadStore::list_owned)).
    pub fn owner(&self, id: &ThreadId) -> Result<Option<String>, ThreadStoreError> {
        if self.json.len() > MAX_THREAD_LEN {
            return Err(too_large(id, self.json.len()));
        }
        let probe: Probe =
            serde_json::from_str(&self.json).map_err(|source| ThreadStoreError::Decode {
                id: id.clone(),
                source,
            })?;
        Ok(probe.owner)
    }

    /// The thread `id` this holds, as `Thread<S>`: refused, naming `id`, if it is of a format
    /// newer than this version reads ([`ThreadStoreError::Format`]), if it does not read as a
    /// thread of `S`, or if it is another thread's ([`ThreadStoreError::Decode`]).
    pub fn decode<S: DeserializeOwned>(
        &self,
        id: &ThreadId,
    ) -> Result<StoredThread<S>, ThreadStoreError> {
        let decode = |source| ThreadStoreError::Decode {
            id: id.clone(),
            source,
        };
        if self.json.len() > MAX_THREAD_LEN {
            return Err(too_large(id, self.json.len()));
        }
        // The format and the id are read first, and alone: a newer format is named as such,
        // not as whichever of its fields this version does not know.
        let probe: Probe = serde_json::from_str(&self.json).map_err(decode)?;
        if let Some(found) = probe.format
            && found > u64::from(THREAD_FORMAT)
        {
            return Err(ThreadStoreError::Format {
                id: id.clone(),
                found,
                supported: THREAD_FORMAT,
            });
        }
        let mut thread: Thread<S> = serde_json::from_str(&self.json).map_err(decode)?;
        match probe.id {
            // A thread stored before threads had ids is the one its key names.
            None => thread.id = id.clone(),
            Some(stored) if stored != *id => {
                return Err(decode(serde::de::Error::custom(format!(
                    "the entry of thread `{id}` holds thread `{stored}`"
                ))));
            }
            Some(_) => {}
        }
        Ok(StoredThread {
            thread,
            version: self.version,
        })
    }
}

/// What is read of a stored thread before the rest: its format, its id and its owner.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    format: Option<u64>,
    #[serde(default)]
    id: Option<ThreadId>,
    #[serde(default)]
    owner: Option<String>,
}

/// A thread as a [`ThreadStore`](super::ThreadStore) hands it out: the thread, and the version
/// to give back to [`save`](super::ThreadStore::save) with it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredThread<S> {
    /// The thread.
    pub thread: Thread<S>,
    /// Its version in the store.
    pub version: u64,
}

/// `thread` as a store keeps it: refused if its id is not one every store takes, or if it is
/// larger than [`MAX_THREAD_LEN`].
pub(crate) fn encode<S: Serialize>(thread: &Thread<S>) -> Result<String, ThreadStoreError> {
    let id = valid_id(thread.id())?;
    let json = serde_json::to_string(thread).map_err(|source| ThreadStoreError::Encode {
        id: id.clone(),
        source,
    })?;
    if json.len() > MAX_THREAD_LEN {
        return Err(too_large(id, json.len()));
    }
    Ok(json)
}

/// The [`ThreadStoreError::TooLarge`] of thread `id`, `len` bytes as stored.
pub fn too_large(id: &ThreadId, len: impl TryInto<u64>) -> ThreadStoreError {
    ThreadStoreError::TooLarge {
        id: id.clone(),
        len: len.try_into().unwrap_or(u64::MAX),
        max: MAX_THREAD_LEN as u64,
    }
}

/// Checks that `id` is one every store takes: non-empty, at most [`MAX_ID_LEN`] bytes, without
/// NUL (which Postgres refuses in text). For implementations of
/// [`ThreadStore`](super::ThreadStore).
pub fn valid_id(id: &ThreadId) -> Result<&ThreadId, ThreadStoreError> {
    let text = id.as_str();
    if text.is_empty() || text.len() > MAX_ID_LEN || text.contains('\0') {
        Err(ThreadStoreError::Id {
            id: text.chars().take(64).collect(),
        })
    } else {
        Ok(id)
    }
}
