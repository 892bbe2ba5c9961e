//! [`SqliteThreadStore`]: the threads of conversations, in the SQLite file of a
//! [`SqliteCheckpointer`](super::SqliteCheckpointer).

use std::fmt;
use std::sync::Arc;

use hookchain_core::ThreadId;
use hookchain_core::interrupt::millis;
use hookchain_core::thread_store::{
    EncodedThread, MAX_THREAD_LEN, ThreadStore, ThreadStoreError, too_large, valid_id,
};
use rusqlite::{Connection, OptionalExtension, Params, TransactionBehavior, params};

use super::{Inner, text};
use crate::thread_store_error;

/// The thread's version and text, the text only if it is no larger than a store reads (so
/// that a larger one is never loaded), and its size.
const LOAD: &str = "SELECT version,
    CASE WHEN length(CAST(thread AS BLOB)) <= ?2 THEN thread END,
    length(CAST(thread AS BLOB))
    FROM hookchain_threads WHERE id = ?1";

const VERSION: &str = "SELECT version FROM hookchain_threads WHERE id = ?1";

const INSERT: &str =
    "INSERT INTO hookchain_threads (id, version, thread, updated_at) VALUES (?1, ?2, ?3, ?4)";

const UPDATE: &str =
    "UPDATE hookchain_threads SET version = ?2, thread = ?3, updated_at = ?4 WHERE id = ?1";

/// `BINARY` collation: ids in the order of their UTF-8 bytes, as the trait asks; a page read
/// through the primary key's index.
const LIST: &str = "SELECT id FROM hookchain_threads WHERE ?1 IS NULL OR id > ?1
    ORDER BY id LIMIT ?2";

/// A page of an owner's ids, in the order of their bytes, read through the index on `(owner,
/// id)`. `id > ?2` bounds the index's range, from `''` for the first page (before every id:
/// none is empty); with `?2 IS NULL OR id > ?2` instead, SQLite would read the owner's entries
/// from the first on every page.
const LIST_OWNED: &str = "SELECT id FROM hookchain_threads WHERE owner = ?1 AND id > ?2
    ORDER BY id LIMIT ?3";

const DELETE: &str = "DELETE FROM hookchain_threads WHERE id = ?1";

/// Keeps threads in the SQLite file of a [`SqliteCheckpointer`](super::SqliteCheckpointer),
/// in the table `hookchain_threads` (`id TEXT PRIMARY KEY, version INTEGER, thread TEXT,
/// updated_at INTEGER, owner TEXT`: the thread's JSON as [`ThreadStore::save`] wrote it, its
/// version, the time of the last save in milliseconds since the Unix epoch, and the owner the
/// thread records), created when the checkpointer opens the file. One file, one set of
/// connections, for the runs and the conversations: take it with
/// [`SqliteCheckpointer::threads`](super::SqliteCheckpointer::threads).
///
/// # Owners
///
/// `owner` is a generated column (`GENERATED ALWAYS AS (…) VIRTUAL`): SQLite derives it from
/// the thread's JSON (its `"owner"`, [`Thread::owner`](hookchain_core::Thread::owner)) at every
/// write, whoever writes, and stores nothing but the entries of the index
/// `hookchain_threads_owner` on `(owner, id)`. [`list_owned`](ThreadStore::list_owned) reads a
/// page of that index: its time grows with the page, not with the number of threads in the
/// file. A thread that records no owner, or whose row holds no JSON (edited by hand), has none
/// and is never listed by it. A file of an earlier version gets the column and the index when
/// the checkpointer opens it (its threads record no owner until saved with one).
///
/// Every save reads the thread's version and writes it in one transaction begun `IMMEDIATE`
/// (holding the database's write lock from its start): of several processes saving one thread
/// at one version, exactly one writes, the others get [`ThreadStoreError::Conflict`]. Its
/// calls run on tokio's blocking threads, as the checkpointer's do; outside a tokio runtime
/// they fail with [`ThreadStoreError::Store`].
///
/// A row whose thread does not read (edited by hand, not text) is refused with
/// [`ThreadStoreError::Decode`] naming the thread; one larger than
/// [`MAX_THREAD_LEN`] with [`ThreadStoreError::TooLarge`], without reading it.
///
/// # Example
///
/// ```
/// use hookchain::interrupt::SqliteCheckpointer;
/// use hookchain::prelude::*;
/// use hookchain::thread_store::ThreadStore;
/// use hookchain::{Durability, ThreadId};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("hookchain-sqlite-threads-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// # let path = dir.join("agents.db");
/// let runs = SqliteCheckpointer::open(&path)?; // creates the file and both tables
/// let threads = runs.threads();
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
///     .checkpointer(runs.clone(), Durability::Pauses)
///     .build()?;
///
/// let id = ThreadId::new("conversation-1");
/// agent.run_in_store(&threads, &id, "Hi").await?;
/// assert_eq!(threads.load::<()>(&id).await?.unwrap().version, 1);
/// assert_eq!(threads.list(None, 10).await?, [id]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
///
/// Through the facade: `hookchain::thread_store::SqliteThreadStore`, with `hookchain`'s
/// feature `sqlite`.
#[derive(Clone)]
pub struct SqliteThreadStore {
    inner: Arc<Inner>,
}

impl SqliteThreadStore {
    /// The store on the file and connections of a checkpointer.
    pub(super) fn new(inner: Arc<Inner>) -> Self {
        SqliteThreadStore { inner }
    }
}

impl fmt::Debug for SqliteThreadStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteThreadStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for SqliteThreadStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        let id = valid_id(id)?.clone();
        self.inner
            .with_connection("load", move |connection| {
                let error = thread_store_error("load");
                let mut load = connection.prepare_cached(LOAD).map_err(error)?;
                let max = i64::try_from(MAX_THREAD_LEN).unwrap_or(i64::MAX);
                let mut rows = load.query(params![id.as_str(), max]).map_err(error)?;
                let Some(row) = rows.next().map_err(error)? else {
                    return Ok(None);
                };
                let version: i64 = row.get(0).map_err(error)?;
                let len: i64 = row.get(2).map_err(error)?;
                let Some(json) = text(row.get_ref(1).map_err(error)?) else {
                    return Err(too_large(&id, len));
                };
                Ok(Some(EncodedThread::new(json, version_of(version))))
            })
            .await
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        let id = valid_id(id)?.clone();
        if json.len() > MAX_THREAD_LEN {
            return Err(too_large(&id, json.len()));
        }
        let json = json.to_owned();
        let now = i64::try_from(millis(self.inner.clock.now())).unwrap_or(i64::MAX);
        self.inner
            .with_connection("save", move |connection| {
                let error = thread_store_error("save");
                let transaction = connection
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(error)?;
                let found = transaction
                    .prepare_cached(VERSION)
                    .and_then(|mut read| {
                        read.query_row(params![id.as_str()], |row| row.get::<_, i64>(0))
                            .optional()
                    })
                    .map_err(error)?
                    .map_or(0, version_of);
                if found != expected {
                    return Err(ThreadStoreError::Conflict {
                        id,
                        expected,
                        found,
                    });
                }
                let version = expected.saturating_add(1);
                let stored = i64::try_from(version).unwrap_or(i64::MAX);
                let write = if expected == 0 { INSERT } else { UPDATE };
                transaction
                    .prepare_cached(write)
                    .and_then(|mut write| write.execute(params![id.as_str(), stored, json, now]))
                    .map_err(error)?;
                transaction.commit().map_err(error)?;
                Ok(version)
            })
            .await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let after = after.map(|id| id.as_str().to_owned());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.inner
            .with_connection("list", move |connection| {
                page(connection, "list", LIST, params![after, limit])
            })
            .await
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let owner = owner.to_owned();
        let after = after.map_or_else(String::new, |id| id.as_str().to_owned());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.inner
            .with_connection("list owned", move |connection| {
                page(
                    connection,
                    "list owned",
                    LIST_OWNED,
                    params![owner, after, limit],
                )
            })
            .await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        let id = valid_id(id)?.clone();
        self.inner
            .with_connection("delete", move |connection| {
                let deleted = connection
                    .prepare_cached(DELETE)
                    .and_then(|mut delete| delete.execute(params![id.as_str()]))
                    .map_err(thread_store_error("delete"))?;
                Ok(deleted > 0)
            })
            .await
    }
}

/// The ids that `sql` selects with `params`: a page. `what` names the call in its errors.
fn page(
    connection: &Connection,
    what: &'static str,
    sql: &str,
    params: impl Params,
) -> Result<Vec<ThreadId>, ThreadStoreError> {
    let error = thread_store_error(what);
    let mut statement = connection.prepare_cached(sql).map_err(error)?;
    let ids = statement
        .query_map(params, |row| row.get::<_, String>(0).map(ThreadId::new))
        .map_err(error)?;
    ids.collect::<Result<_, _>>().map_err(error)
}

/// A version as stored (a negative one, written by hand, reads as none).
fn version_of(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use hookchain::thread_store::{ThreadStore, ThreadStoreError};
    use hookchain::{Thread, ThreadId};
    use rusqlite::Connection;

    use super::super::SqliteCheckpointer;
    use super::{LIST_OWNED, MAX_THREAD_LEN};

    /// A store in a file of the test's own, with the thread `t` saved; the file's path.
    async fn with_thread(test: &str) -> (SqliteCheckpointer, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "hookchain-sqlite-threads-{test}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agents.db");
        let store = SqliteCheckpointer::open(&path).unwrap();
        let thread = Thread::<()>::with_id(ThreadId::new("t"));
        store.threads().save(&thread, 0).await.unwrap();
        (store, path)
    }

    /// A row whose thread is not text (a blob written by hand) is refused as `Decode`; one
    /// larger than a store reads is `TooLarge`, refused without being read.
    #[tokio::test]
    async fn rows_that_are_no_thread_are_refused() {
        let (store, path) = with_thread("rows").await;
        let id = ThreadId::new("t");
        let connection = Connection::open(&path).unwrap();
        connection
            .execute("UPDATE hookchain_threads SET thread = x'00ff'", [])
            .unwrap();
        let error = store.threads().load::<()>(&id).await.unwrap_err();
        assert!(
            matches!(error, ThreadStoreError::Decode { .. }),
            "{error:?}"
        );

        connection
            .execute(
                "UPDATE hookchain_threads SET thread = CAST(zeroblob(?1) AS TEXT)",
                [i64::try_from(MAX_THREAD_LEN).unwrap() + 1],
            )
            .unwrap();
        let error = store.threads().load::<()>(&id).await.unwrap_err();
        assert!(
            matches!(error, ThreadStoreError::TooLarge { len, .. } if len == MAX_THREAD_LEN as u64 + 1),
            "{error:?}"
        );
        assert!(store.threads().delete(&id).await.unwrap());
        drop((store, connection));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// `list_owned` reads a page of the index on `(owner, id)`: SQLite's plan searches it by
    /// owner and from the id after which the page starts, and scans nothing.
    #[tokio::test]
    async fn owned_pages_are_read_through_the_index() {
        let (store, path) = with_thread("plan").await;
        let connection = Connection::open(&path).unwrap();
        let plan: Vec<String> = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {LIST_OWNED}"))
            .unwrap()
            .query_map(rusqlite::params!["alice", "", 10], |row| row.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            matches!(&plan[..], [step] if step.starts_with("SEARCH hookchain_threads USING ")
                && step.ends_with("INDEX hookchain_threads_owner (owner=? AND id>?)")),
            "{plan:?}"
        );
        drop((store, connection));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// A file of the version before owners (its table of threads made by hand as that
    /// version made it, holding threads) gets the column and its index when opened, by four
    /// stores at once: its threads are kept; one whose JSON records an owner is listed as that
    /// owner's (SQLite derives the owner, whoever wrote the row: a process of the earlier
    /// version too, writing after the change), and so is one saved with an owner since.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_older_table_of_threads_gets_the_owners() {
        let dir = std::env::temp_dir().join(format!(
            "hookchain-sqlite-threads-owners-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agents.db");
        let old = Thread::<()>::with_id(ThreadId::new("old"));
        let owned = Thread::<()>::with_id(ThreadId::new("owned")).with_owner("alice");
        let insert_as_before = |connection: &Connection, thread: &Thread<()>| {
            let json = serde_json::to_string(thread).unwrap();
            connection
                .execute(
                    "INSERT INTO hookchain_threads (id, version, thread, updated_at)
                     VALUES (?1, 1, ?2, 0)",
                    rusqlite::params![thread.id().as_str(), json],
                )
                .unwrap();
        };
        let connection = Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "CREATE TABLE hookchain_threads (id TEXT PRIMARY KEY, version INTEGER NOT NULL,
                     thread TEXT NOT NULL, updated_at INTEGER NOT NULL)",
            )
            .unwrap();
        insert_as_before(&connection, &old);
        insert_as_before(&connection, &owned);

        let opening: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                tokio::task::spawn_blocking(move || SqliteCheckpointer::open(path))
            })
            .collect();
        let mut stores = Vec::new();
        for open in opening {
            stores.push(open.await.unwrap().unwrap());
        }
        let threads = stores[0].threads();
        let alice = || threads.list_owned("alice", None, 10);
        assert_eq!(alice().await.unwrap(), [ThreadId::new("owned")]);
        let stored = threads
            .load::<()>(&ThreadId::new("old"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!((stored.version, stored.thread.owner()), (1, None));

        let thread = stored.thread.with_owner("alice");
        assert_eq!(threads.save(&thread, 1).await.unwrap(), 2);
        let later = Thread::<()>::with_id(ThreadId::new("later")).with_owner("alice");
        insert_as_before(&connection, &later);
        assert_eq!(
            alice().await.unwrap(),
            [
                ThreadId::new("later"),
                ThreadId::new("old"),
                ThreadId::new("owned")
            ]
        );
        let indexes: i64 = connection
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'hookchain_threads_owner'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 1);
        drop((stores, threads, connection));
        // Opened again: nothing to add, nothing fails.
        SqliteCheckpointer::open(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file of an earlier version (no table of threads) gets it when opened.
    #[tokio::test]
    async fn an_older_file_gets_the_table_of_threads() {
        let (store, path) = with_thread("older").await;
        drop(store);
        Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE hookchain_threads")
            .unwrap();
        let store = SqliteCheckpointer::open(&path).unwrap();
        assert_eq!(store.threads().list(None, 10).await.unwrap(), []);
        let thread = Thread::<()>::with_id(ThreadId::new("t"));
        assert_eq!(store.threads().save(&thread, 0).await.unwrap(), 1);
        drop(store);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
