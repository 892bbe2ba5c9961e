//! [`InMemoryThreadStore`]: threads in this process's memory.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;

use super::{EncodedThread, ThreadStore, ThreadStoreError, valid_id};
use crate::ids::ThreadId;
use crate::lock::lock;

/// Keeps threads in memory, as JSON (so what is read back is what a restart of a process with
/// a persistent store would read), under the rules of [`ThreadStore`]: for tests, and for a
/// single process that may lose its conversations when it stops.
///
/// ```
/// use hookchain::thread_store::{InMemoryThreadStore, ThreadStore};
/// use hookchain::{Thread, ThreadId};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryThreadStore::new();
/// for id in ["b", "a", "c"] {
///     store.save(&Thread::<()>::with_id(ThreadId::new(id)), 0).await?;
/// }
/// // Pages of two, in the order of the ids.
/// let first = store.list(None, 2).await?;
/// assert_eq!(first, [ThreadId::new("a"), ThreadId::new("b")]);
/// assert_eq!(store.list(first.last(), 2).await?, [ThreadId::new("c")]);
/// # Ok::<(), hookchain::thread_store::ThreadStoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct InMemoryThreadStore {
    threads: Mutex<BTreeMap<ThreadId, EncodedThread>>,
}

impl InMemoryThreadStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for InMemoryThreadStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        let id = valid_id(id)?;
        Ok(lock(&self.threads).get(id).cloned())
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        let id = valid_id(id)?;
        if json.len() > super::MAX_THREAD_LEN {
            return Err(super::too_large(id, json.len()));
        }
        let mut threads = lock(&self.threads);
        let found = threads.get(id).map_or(0, |stored| stored.version);
        if found != expected {
            return Err(ThreadStoreError::Conflict {
                id: id.clone(),
                expected,
                found,
            });
        }
        let version = expected.saturating_add(1);
        threads.insert(id.clone(), EncodedThread::new(json.to_owned(), version));
        Ok(version)
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        Ok(lock(&self.threads)
            .range::<ThreadId, _>((start, Bound::Unbounded))
            .take(limit)
            .map(|(id, _)| id.clone())
            .collect())
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        let id = valid_id(id)?;
        Ok(lock(&self.threads).remove(id).is_some())
    }
}
