//! [`ThreadStore`]: where threads are kept between requests, by id, each with a version.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::encoded::encode;
use super::{EncodedThread, StoredThread, ThreadStoreError};
use crate::thread::{Thread, ThreadId};

/// A store of [`Thread`]s by [`ThreadId`], shared by the requests (and the processes) that
/// serve one conversation after another. The crate has
/// [`InMemoryThreadStore`](super::InMemoryThreadStore) and
/// [`FileThreadStore`](super::FileThreadStore), and, behind the features `sqlite` and
/// `postgres`, stores in SQLite and Postgres (in the database of the checkpoint store of the
/// same name, in a table of their own).
///
/// Use it through [`load`](Self::load) and [`save`](Self::save) (or
/// [`Agent::run_in_store`](crate::Agent::run_in_store), which does both around a run),
/// [`list`](Self::list) and [`delete`](Self::delete). To keep threads in a database of your
/// own, implement the four methods on text: [`load_encoded`](Self::load_encoded),
/// [`save_encoded`](Self::save_encoded), [`list`](Self::list) and [`delete`](Self::delete);
/// `load` and `save` then follow the rules below as in every store.
///
/// # Optimistic concurrency
///
/// Each stored thread has a **version**: 1 when first saved, one more at every save.
/// [`load`](Self::load) hands out the thread with its version; [`save`](Self::save) takes the
/// version the thread was loaded at (0 for a thread not stored yet) and writes only if the
/// store still holds that version — atomically, in every store. When another writer saved in
/// between, the save is refused with [`ThreadStoreError::Conflict`] and the stored thread is
/// left as the other writer saved it: of two requests that load a thread, run and save, one
/// wins and the other is told, so two requests on one thread never both append. The loser
/// loads again and redoes its work, or reports the conflict.
///
/// A run's side effects (its tool calls) happen before its save: a conflict refuses what the
/// run wrote to the thread, not what its tools did. To keep a second run from starting at all
/// while one runs, give the agent a [`checkpointer`](crate::AgentBuilder::checkpointer): a run
/// in a thread holds the thread's id as its key (a lease), and another run of the thread is
/// refused ([`CheckpointError::Claimed`](crate::interrupt::CheckpointError::Claimed)) until it
/// ends or pauses.
///
/// # What a store refuses
///
/// - An id that no store takes ([`ThreadStoreError::Id`]: empty, more than
///   [`MAX_ID_LEN`](super::MAX_ID_LEN) bytes, or holding NUL).
/// - A thread larger than [`MAX_THREAD_LEN`](super::MAX_THREAD_LEN) as JSON, saved or read
///   ([`ThreadStoreError::TooLarge`]).
/// - A stored thread that does not read ([`ThreadStoreError::Decode`]) or is of a newer format
///   ([`ThreadStoreError::Format`]): an error naming the thread, never a panic, never taken
///   for a missing thread, and left as it is in the store ([`delete`](Self::delete) removes
///   it).
///
/// # Example
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::thread_store::{InMemoryThreadStore, ThreadStore, ThreadStoreError};
/// use hookchain::{Thread, ThreadId};
///
/// # futures::executor::block_on(async {
/// let store = InMemoryThreadStore::new();
/// let id = ThreadId::new("conversation-1");
/// let version = store.save(&Thread::<()>::with_id(id.clone()), 0).await?;
/// assert_eq!(version, 1);
///
/// // Two requests load the thread at version 1; the first to save wins.
/// let first = store.load::<()>(&id).await?.unwrap();
/// let second = store.load::<()>(&id).await?.unwrap();
/// assert_eq!(store.save(&first.thread, first.version).await?, 2);
/// let refused = store.save(&second.thread, second.version).await.unwrap_err();
/// assert!(matches!(
///     refused,
///     ThreadStoreError::Conflict { expected: 1, found: 2, .. }
/// ));
///
/// assert_eq!(store.list(None, 10).await?, [id.clone()]);
/// assert!(store.delete(&id).await?);
/// assert!(store.load::<()>(&id).await?.is_none());
/// # Ok::<(), ThreadStoreError>(())
/// # }).unwrap();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a thread store",
    label = "not a thread store",
    note = "a thread store is an `InMemoryThreadStore`, a `FileThreadStore::new(dir)`, a \
            database's (`SqliteThreadStore`, `PostgresThreadStore`, with their features), or a type with a hand-written \
            `impl ThreadStore`; one shared by several tasks goes in an `Arc`, one chosen at run \
            time in an `Arc<dyn DynThreadStore>` or a `Box<dyn DynThreadStore>`"
)]
// `where Self: Sync` on each method returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of a hand-written impl assumes it, so a type that
// is not `Sync` is one error, at the impl, rather than one more per method.
pub trait ThreadStore: Send + Sync {
    /// The thread `id` as stored, with its version; `None` when none is stored. For
    /// implementers: a store reads at most [`MAX_THREAD_LEN`](super::MAX_THREAD_LEN) bytes of
    /// it, and refuses a larger one with [`ThreadStoreError::TooLarge`].
    fn load_encoded(
        &self,
        id: &ThreadId,
    ) -> impl Future<Output = Result<Option<EncodedThread>, ThreadStoreError>> + Send
    where
        Self: Sync;

    /// Stores `json` as thread `id` if the store holds it at version `expected` (0: holds no
    /// thread `id`), atomically; the new version (`expected + 1`). Refused with
    /// [`ThreadStoreError::Conflict`] (naming the version found, 0 for none) otherwise.
    fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> impl Future<Output = Result<u64, ThreadStoreError>> + Send
    where
        Self: Sync;

    /// The ids of the stored threads after `after` (from the first when `None`), in the order
    /// of their bytes, at most `limit` of them: a page. The next page starts after the last id
    /// of this one; an empty page is the end. A store holds no more than a page in memory,
    /// whatever the number of threads (a database reads the page through its index; the file
    /// store reads the directory's names, keeping the smallest).
    fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ThreadId>, ThreadStoreError>> + Send
    where
        Self: Sync;

    /// Removes the thread `id`, whatever its version (a thread that does not read too);
    /// whether there was one. A missing thread is not an error: deleting twice is deleting
    /// once. Its versions start again at 1 if it is saved again.
    fn delete(&self, id: &ThreadId) -> impl Future<Output = Result<bool, ThreadStoreError>> + Send
    where
        Self: Sync;

    /// The ids of the threads owned by `owner` ([`Thread::owner`]) after `after`, in the order
    /// of their bytes, at most `limit` of them: a page, as [`list`](Self::list)'s. A thread
    /// whose entry does not read is not listed (it is logged).
    ///
    /// The default reads the store's pages and each thread's owner, holding no more than a
    /// page: its time grows with the number of threads in the store, not the owner's. The
    /// database stores answer from an index of owners instead.
    fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ThreadId>, ThreadStoreError>> + Send
    where
        Self: Sync,
    {
        async move {
            const PAGE: usize = 100;
            let mut owned = Vec::new();
            let mut cursor = after.cloned();
            while owned.len() < limit {
                let page = self.list(cursor.as_ref(), PAGE).await?;
                let Some(last) = page.last().cloned() else {
                    break;
                };
                for id in page {
                    if owned.len() == limit {
                        break;
                    }
                    // A thread that does not read is no one's: logged, not listed, and not a
                    // failure of the listing (the store's own failures are).
                    let found = match self.load_encoded(&id).await {
                        Ok(Some(encoded)) => encoded.owner(&id),
                        Ok(None) => continue,
                        Err(error) => Err(error),
                    };
                    match found {
                        Ok(found) if found.as_deref() == Some(owner) => owned.push(id),
                        Ok(_) => {}
                        Err(
                            error @ (ThreadStoreError::Decode { .. }
                            | ThreadStoreError::TooLarge { .. }
                            | ThreadStoreError::Format { .. }),
                        ) => {
                            tracing::warn!(%error, "a stored thread does not read: not listed");
                        }
                        Err(error) => return Err(error),
                    }
                }
                cursor = Some(last);
            }
            Ok(owned)
        }
    }

    /// The ids of the threads of the namespace `namespace` (see
    /// [`ThreadId::namespaced`](crate::ThreadId::namespaced)) after `after`, at most `limit`
    /// of them, in the order of their bytes: a page, as [`list`](Self::list)'s, read as one
    /// page of it (a namespace's ids are next to each other in that order).
    fn list_namespace(
        &self,
        namespace: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ThreadId>, ThreadStoreError>> + Send
    where
        Self: Sync,
    {
        // Every id of the namespace sorts after `<namespace>/` (ids are not empty), and the
        // ids between two of them are of the namespace too.
        let prefix = format!("{namespace}/");
        let start = match after {
            Some(after) if after.as_str() > prefix.as_str() => after.clone(),
            _ => ThreadId::new(prefix.clone()),
        };
        async move {
            let mut page = self.list(Some(&start), limit).await?;
            page.retain(|id| id.as_str().starts_with(&prefix));
            Ok(page)
        }
    }

    /// The thread `id`, with its version for [`save`](Self::save); `None` when none is
    /// stored. Refused, naming the thread, if what is stored does not read as a `Thread<S>`
    /// or is of a newer format (see *What a store refuses*).
    ///
    /// `S` is the chain's thread-scoped state (`C::ThreadState` of an `Agent<M, C>`). A thread
    /// stored by a chain that changed since reads as `Thread<serde_json::Value>`, which
    /// [`Agent::adopt_thread`](crate::Agent::adopt_thread) carries over to the new chain.
    fn load<S: DeserializeOwned>(
        &self,
        id: &ThreadId,
    ) -> impl Future<Output = Result<Option<StoredThread<S>>, ThreadStoreError>> + Send
    where
        Self: Sync,
    {
        async move {
            let encoded = self.load_encoded(super::valid_id(id)?).await?;
            encoded.map(|encoded| encoded.decode(id)).transpose()
        }
    }

    /// Stores `thread` under its id if the store still holds the version it was loaded at,
    /// `expected` (0 for a thread not stored yet); the new version. Refused with
    /// [`ThreadStoreError::Conflict`] when another writer saved, created or deleted it since
    /// (see *Optimistic concurrency*): then nothing is written.
    fn save<S: Serialize>(
        &self,
        thread: &Thread<S>,
        expected: u64,
    ) -> impl Future<Output = Result<u64, ThreadStoreError>> + Send
    where
        Self: Sync,
    {
        // Encoded before the future: it holds the text, not the thread (whose state need not
        // be `Sync`).
        let encoded = encode(thread);
        let id = thread.id().clone();
        async move { self.save_encoded(&id, &encoded?, expected).await }
    }
}

/// A shared store: the requests of a server use the same one.
#[diagnostic::do_not_recommend]
impl<T: ThreadStore + ?Sized> ThreadStore for std::sync::Arc<T> {
    fn load_encoded(
        &self,
        id: &ThreadId,
    ) -> impl Future<Output = Result<Option<EncodedThread>, ThreadStoreError>> + Send {
        T::load_encoded(self, id)
    }

    fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> impl Future<Output = Result<u64, ThreadStoreError>> + Send {
        T::save_encoded(self, id, json, expected)
    }

    fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ThreadId>, ThreadStoreError>> + Send {
        T::list(self, after, limit)
    }

    fn delete(&self, id: &ThreadId) -> impl Future<Output = Result<bool, ThreadStoreError>> + Send {
        T::delete(self, id)
    }

    fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ThreadId>, ThreadStoreError>> + Send {
        T::list_owned(self, owner, after, limit)
    }
}
