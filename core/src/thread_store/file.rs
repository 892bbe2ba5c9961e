//! [`FileThreadStore`]: threads in JSON files, written atomically, off the executor.

use std::collections::BinaryHeap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{EncodedThread, MAX_THREAD_LEN, ThreadStore, ThreadStoreError, too_large, valid_id};
use crate::files::{
    file_name, io, key_of, lock_dir, off_the_executor, remove_if_there, write_atomically,
};
use crate::ids::ThreadId;

/// Keeps each thread in a JSON file `<dir>/<id>.json`: `{"id": …, "version": …, "thread": …}`,
/// the thread as it was saved. Files are written atomically (a temporary file, synced, renamed,
/// and the directory synced), so a crash never leaves a half-written thread. Characters of an
/// id other than ASCII letters, digits, `-` and `_` are written `%XX` in the file names; a name
/// longer than 200 bytes is cut and completed with a hash of the id (the file holds the id
/// itself), as [`FileCheckpointer`](crate::interrupt::FileCheckpointer) names its files.
///
/// Every save and delete reads, compares the version and writes under an exclusive lock of
/// `<dir>/.lock` (an operating-system file lock), so versions are checked atomically between
/// the processes of one machine; many machines want a database (features `sqlite`,
/// `postgres`). The store may share its directory with nothing else (a `FileCheckpointer`
/// wants a directory of its own too).
///
/// The file operations run on tokio's blocking threads when called inside a tokio runtime
/// (feature `tokio`), so they never hold up the executor's threads; elsewhere they run in
/// place. [`list`](ThreadStore::list) reads the directory's names (and the files of ids cut
/// for their length), keeping no more than a page of ids in memory.
///
/// ```
/// use hookchain::thread_store::{FileThreadStore, ThreadStore};
/// use hookchain::{Thread, ThreadId};
///
/// # futures::executor::block_on(async {
/// # let dir = std::env::temp_dir().join(format!("hookchain-file-threads-doc-{}", std::process::id()));
/// let store = FileThreadStore::new(&dir); // the directory is created on the first save
/// let id = ThreadId::new("user-7/support");
/// store.save(&Thread::<()>::with_id(id.clone()), 0).await?;
/// assert_eq!(store.path(&id)?, dir.join("user-7%2Fsupport.json"));
/// assert_eq!(store.load::<()>(&id).await?.unwrap().version, 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), hookchain::thread_store::ThreadStoreError>(())
/// # }).unwrap();
/// ```
pub struct FileThreadStore {
    dir: PathBuf,
}

/// What a thread's file holds around the thread: the id and version, a few hundred bytes at
/// most (an id is at most 512 bytes, 6 once escaped in JSON).
const ENTRY_OVERHEAD: usize = 4096;

impl FileThreadStore {
    /// A store in `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileThreadStore { dir: dir.into() }
    }

    /// The file of thread `id`.
    pub fn path(&self, id: &ThreadId) -> Result<PathBuf, ThreadStoreError> {
        let id = valid_id(id)?;
        Ok(self.dir.join(format!("{}.json", file_name(id.as_str()))))
    }
}

impl fmt::Debug for FileThreadStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileThreadStore")
            .field("dir", &self.dir)
            .finish()
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for FileThreadStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        let path = self.path(id)?;
        let (read, id) = (path.clone(), id.clone());
        off_the_executor(&path, move || read_entry(&id, &read)).await
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        let path = self.path(id)?;
        if json.len() > MAX_THREAD_LEN {
            return Err(too_large(id, json.len()));
        }
        let (dir, id, json) = (self.dir.clone(), id.clone(), json.to_owned());
        off_the_executor(&path.clone(), move || {
            let _lock = lock_dir(&dir)?;
            let found = read_entry(&id, &path)?.map_or(0, |stored| stored.version);
            if found != expected {
                return Err(ThreadStoreError::Conflict {
                    id,
                    expected,
                    found,
                });
            }
            let version = expected.saturating_add(1);
            let written =
                serde_json::to_string(id.as_str()).map_err(|source| ThreadStoreError::Encode {
                    id: id.clone(),
                    source,
                })?;
            // The thread is written as it was saved, not parsed again: its JSON is the file's.
            let entry = format!("{{\"id\":{written},\"version\":{version},\"thread\":{json}}}");
            write_atomically(&dir, &path, entry.as_bytes())?;
            Ok(version)
        })
        .await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let (dir, after) = (self.dir.clone(), after.cloned());
        off_the_executor(&self.dir.clone(), move || page(&dir, after.as_ref(), limit)).await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        let path = self.path(id)?;
        let (dir, id) = (self.dir.clone(), id.clone());
        off_the_executor(&path.clone(), move || {
            if !dir.exists() {
                return Ok(false);
            }
            let _lock = lock_dir(&dir)?;
            // A name cut for its length may be another id's (their hashes met): that file is
            // not this thread. One that does not read is removed: deleting is how a corrupt
            // thread goes.
            if is_cut(&path)
                && let Some(holder) = id_in(&path)?
                && holder != id
            {
                return Ok(false);
            }
            Ok(remove_if_there(&path)?)
        })
        .await
    }
}

/// A thread's file.
#[derive(Deserialize)]
struct Entry<'a> {
    id: ThreadId,
    version: u64,
    #[serde(borrow)]
    thread: &'a RawValue,
}

/// Only the id of a thread's file (the rest skipped).
#[derive(Deserialize)]
struct IdOnly {
    id: ThreadId,
}

/// The thread `id` in the file at `path`, if there is one: refused if it is larger than a
/// store reads, if it does not read, or if it holds another thread.
fn read_entry(id: &ThreadId, path: &Path) -> Result<Option<EncodedThread>, ThreadStoreError> {
    let Some(text) = read_bounded(id, path)? else {
        return Ok(None);
    };
    let decode = |source| ThreadStoreError::Decode {
        id: id.clone(),
        source,
    };
    let entry: Entry<'_> = serde_json::from_str(&text).map_err(decode)?;
    if entry.id != *id {
        return Err(decode(serde::de::Error::custom(format!(
            "the file of thread `{id}` holds thread `{}` (their file names met)",
            entry.id
        ))));
    }
    Ok(Some(EncodedThread::new(
        entry.thread.get().to_owned(),
        entry.version,
    )))
}

/// The text of the file at `path`, if there is one, read only if it is no larger than a
/// thread may be.
fn read_bounded(id: &ThreadId, path: &Path) -> Result<Option<String>, ThreadStoreError> {
    let len = match std::fs::metadata(path) {
        Ok(metadata) => metadata.len(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io(path)(error).into()),
    };
    if len > (MAX_THREAD_LEN + ENTRY_OVERHEAD) as u64 {
        return Err(too_large(id, len));
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        // Removed between the two calls: deleted.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            Err(ThreadStoreError::Decode {
                id: id.clone(),
                source: serde::de::Error::custom("the file is not UTF-8 text"),
            })
        }
        Err(error) => Err(io(path)(error).into()),
    }
}

/// Whether the file at `path` has a name cut for its length (its id is only in the file).
fn is_cut(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.contains('~'))
}

/// The id in the file at `path`; `None` if there is no file, or it does not read.
fn id_in(path: &Path) -> Result<Option<ThreadId>, ThreadStoreError> {
    let len = match std::fs::metadata(path) {
        Ok(metadata) => metadata.len(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io(path)(error).into()),
    };
    if len > (MAX_THREAD_LEN + ENTRY_OVERHEAD) as u64 {
        return Ok(None);
    }
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io(path)(error).into()),
    };
    Ok(serde_json::from_slice::<IdOnly>(&text)
        .ok()
        .map(|entry| entry.id))
}

/// The page of at most `limit` ids after `after` among the files of `dir`, in the order of
/// their bytes: a heap of the `limit` smallest ids seen, so that memory stays a page's.
fn page(
    dir: &Path,
    after: Option<&ThreadId>,
    limit: usize,
) -> Result<Vec<ThreadId>, ThreadStoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io(dir)(error).into()),
    };
    let mut smallest = BinaryHeap::with_capacity(limit.min(1024).saturating_add(1));
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str().and_then(|name| name.strip_suffix(".json")) else {
            continue;
        };
        // Temporary files and the lock start with a dot; ids never do once written.
        if name.starts_with('.') {
            continue;
        }
        let id = match key_of(name) {
            Some(id) => ThreadId::new(id),
            None if name.contains('~') => match id_in(&entry.path())? {
                Some(id) => id,
                None => continue,
            },
            None => continue,
        };
        if after.is_some_and(|after| id <= *after) {
            continue;
        }
        smallest.push(id);
        if smallest.len() > limit {
            smallest.pop();
        }
    }
    Ok(smallest.into_sorted_vec())
}
