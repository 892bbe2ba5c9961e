//! [`PostgresThreadStore`]: the threads of conversations, in the database (and through the
//! pool) of a [`PostgresCheckpointer`](super::PostgresCheckpointer).

use std::fmt;

use deadpool_postgres::{Object, Pool};
use hookchain_core::ThreadId;
use hookchain_core::thread_store::{
    EncodedThread, MAX_THREAD_LEN, ThreadStore, ThreadStoreError, too_large, valid_id,
};
use tokio_postgres::Statement;

use crate::thread_store_error;

/// The thread's version and text, the text only if it is no larger than a store reads (so
/// that a larger one never leaves the server), and its size.
const LOAD: &str = "SELECT version,
    CASE WHEN octet_length(thread) <= $2 THEN thread END,
    octet_length(thread)
    FROM hookchain_threads WHERE id = $1";

const VERSION: &str = "SELECT version FROM hookchain_threads WHERE id = $1";

/// A new thread and its owner: inserted unless another writer created it first (then no row
/// returns).
const CREATE: &str = "INSERT INTO hookchain_threads (id, version, thread, owner)
    VALUES ($1, 1, $2, $3)
    ON CONFLICT (id) DO NOTHING RETURNING version";

/// The next version of a thread, and its owner, written only at the version expected (else no
/// row returns).
const UPDATE: &str = "UPDATE hookchain_threads
    SET thread = $2, owner = $4, version = version + 1, updated_at = now()
    WHERE id = $1 AND version = $3 RETURNING version";

/// A page of ids, in the order of their bytes: the column's collation is `C`, so the primary
/// key's index reads it in order.
const LIST: &str =
    "SELECT id FROM hookchain_threads WHERE $1::text IS NULL OR id > $1 COLLATE \"C\"
    ORDER BY id LIMIT $2";

/// A page of an owner's ids, in the order of their bytes, read through the index on `(owner,
/// id)` (both of collation `C`). `id > $2` bounds the index's range, from `''` for the first
/// page (before every id: none is empty); with `$2 IS NULL OR id > $2` instead, a generic plan
/// of the prepared statement would read the owner's entries from the first on every page.
const LIST_OWNED: &str = "SELECT id FROM hookchain_threads
    WHERE owner = $1 AND id > $2 COLLATE \"C\"
    ORDER BY id LIMIT $3";

const DELETE: &str = "DELETE FROM hookchain_threads WHERE id = $1";

/// The longest owner the column `owner` records, in bytes: four times the longest principal
/// id a server takes ([`MAX_PRINCIPAL_LEN`](hookchain_core::MAX_PRINCIPAL_LEN)), and short
/// enough that an entry of the index, with an id of
/// [`MAX_ID_LEN`](hookchain_core::thread_store::MAX_ID_LEN) bytes, fits in Postgres's B-tree
/// (which refuses the write of an entry larger than about 2.7 KB).
const MAX_OWNER_LEN: usize = 1024;

/// Keeps threads in the Postgres database of a
/// [`PostgresCheckpointer`](super::PostgresCheckpointer), through its pool, in the table
/// `hookchain_threads` (`id text COLLATE "C" PRIMARY KEY, version bigint, thread text,
/// updated_at timestamptz, owner text COLLATE "C"`: the thread's JSON as [`ThreadStore::save`]
/// wrote it, byte for byte, its version, and the owner it records), created with the
/// checkpointer's table. One database, one pool, for the runs and the conversations: take it
/// with [`PostgresCheckpointer::threads`](super::PostgresCheckpointer::threads) (TLS and the
/// pool are the checkpointer's).
///
/// # Owners
///
/// Every save writes `owner` with the thread: the owner its JSON records
/// ([`Thread::owner`](hookchain_core::Thread::owner)), read by the store, or `NULL`. The index
/// `hookchain_threads_owner` on `(owner, id)` holds an owner's threads in the order of their
/// ids' bytes, and [`list_owned`](ThreadStore::list_owned) reads a page of it: its time grows
/// with the page, not with the number of threads in the table. A thread that records no owner,
/// whose text is no JSON, or whose owner holds NUL or is longer than 1 KiB (no principal's is:
/// the column could not hold or index it) has none, and is never listed by it.
///
/// The column is not one Postgres generates from `thread` (`thread::jsonb ->> 'owner'`): its
/// JSON types cannot read a thread holding the escape `\u0000` anywhere (a message with the
/// character NUL: `jsonb` refuses it, `json`'s `->>` fails on it), nor text that is no JSON,
/// which a store keeps as it is given; a generated column would make their saves fail, and
/// Postgres 15 has no test of JSON that does not fail (`pg_input_is_valid` is 16's). A row
/// written by hand sets `owner` itself.
///
/// A database of an earlier version gets the column and the index when a store is next made
/// on it, under the checkpointer's advisory lock (its threads, saved before threads recorded
/// owners, have none). For a table with many threads, or a role without the right to alter
/// it, add them beforehand:
///
/// ```sql
/// ALTER TABLE hookchain_threads ADD COLUMN IF NOT EXISTS owner text COLLATE "C";
/// CREATE INDEX CONCURRENTLY IF NOT EXISTS hookchain_threads_owner
///     ON hookchain_threads (owner, id);
/// ```
///
/// Every save is one statement that checks the version and writes: `INSERT … ON CONFLICT DO
/// NOTHING` for a new thread, `UPDATE … WHERE version = $expected` for the next version. Of
/// several workers saving one thread at one version, on any number of machines, exactly one
/// writes; the others get [`ThreadStoreError::Conflict`] (its `found`: the version read right
/// after). The store is asynchronous through and through, and needs a tokio runtime.
///
/// A row whose thread does not read is refused with [`ThreadStoreError::Decode`] naming the
/// thread; one larger than [`MAX_THREAD_LEN`] with [`ThreadStoreError::TooLarge`], without its
/// text leaving the server. A failed connection or query is [`ThreadStoreError::Store`].
///
/// # Example
///
/// ```no_run
/// use hookchain::interrupt::PostgresCheckpointer;
/// use hookchain::prelude::*;
/// use hookchain::thread_store::ThreadStore;
/// use hookchain::{Durability, ThreadId};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let runs = PostgresCheckpointer::connect("host=db.internal user=agents dbname=agents").await?;
/// let threads = runs.threads(); // the same pool, the table `hookchain_threads`
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
///     .checkpointer(runs.clone(), Durability::Pauses)
///     .build()?;
/// agent.run_in_store(&threads, &ThreadId::new("conversation-1"), "Hi").await?;
/// # Ok(())
/// # }
/// ```
///
/// Through the facade: `hookchain::thread_store::PostgresThreadStore`, with `hookchain`'s
/// feature `postgres`.
#[derive(Clone)]
pub struct PostgresThreadStore {
    pool: Pool,
}

impl PostgresThreadStore {
    /// The store on a checkpointer's pool.
    pub(super) fn new(pool: Pool) -> Self {
        PostgresThreadStore { pool }
    }

    /// The pool of the store's connections (the checkpointer's).
    #[must_use]
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// A connection from the pool, with `sql` prepared on it (once per connection).
    async fn prepared(
        &self,
        sql: &str,
        what: &'static str,
    ) -> Result<(Object, Statement), ThreadStoreError> {
        let client = self.pool.get().await.map_err(thread_store_error(what))?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(thread_store_error(what))?;
        Ok((client, statement))
    }
}

impl fmt::Debug for PostgresThreadStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresThreadStore")
            .field("pool", &self.pool.status())
            .finish()
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for PostgresThreadStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        let what = "load";
        let error = thread_store_error(what);
        let id = valid_id(id)?;
        let (client, load) = self.prepared(LOAD, what).await?;
        let max = i32::try_from(MAX_THREAD_LEN).unwrap_or(i32::MAX);
        let Some(row) = client
            .query_opt(&load, &[&id.as_str(), &max])
            .await
            .map_err(error)?
        else {
            return Ok(None);
        };
        let version: i64 = row.try_get(0).map_err(error)?;
        let json: Option<String> = row.try_get(1).map_err(error)?;
        let len: i32 = row.try_get(2).map_err(error)?;
        match json {
            Some(json) => Ok(Some(EncodedThread::new(json, version_of(version)))),
            None => Err(too_large(id, len)),
        }
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        let what = "save";
        let error = thread_store_error(what);
        let id = valid_id(id)?;
        if json.len() > MAX_THREAD_LEN {
            return Err(too_large(id, json.len()));
        }
        let owner = recorded_owner(id, json);
        let written = if expected == 0 {
            let (client, create) = self.prepared(CREATE, what).await?;
            client
                .query_opt(&create, &[&id.as_str(), &json, &owner])
                .await
                .map_err(error)?
        } else {
            let (client, update) = self.prepared(UPDATE, what).await?;
            let expected = i64::try_from(expected).unwrap_or(i64::MAX);
            client
                .query_opt(&update, &[&id.as_str(), &json, &expected, &owner])
                .await
                .map_err(error)?
        };
        match written {
            Some(row) => Ok(version_of(row.try_get(0).map_err(error)?)),
            None => {
                let (client, read) = self.prepared(VERSION, what).await?;
                let found = client
                    .query_opt(&read, &[&id.as_str()])
                    .await
                    .map_err(error)?
                    .map(|row| row.try_get(0))
                    .transpose()
                    .map_err(error)?
                    .map_or(0, version_of);
                Err(ThreadStoreError::Conflict {
                    id: id.clone(),
                    expected,
                    found,
                })
            }
        }
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let what = "list";
        let (client, list) = self.prepared(LIST, what).await?;
        let after = after.map(ThreadId::as_str);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(&list, &[&after, &limit])
            .await
            .map_err(thread_store_error(what))?;
        ids(&rows, what)
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        let what = "list owned";
        if !indexed(owner) {
            // No row records it; and Postgres would refuse a NUL in the query.
            return Ok(Vec::new());
        }
        let (client, list) = self.prepared(LIST_OWNED, what).await?;
        let after = after.map_or("", ThreadId::as_str);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(&list, &[&owner, &after, &limit])
            .await
            .map_err(thread_store_error(what))?;
        ids(&rows, what)
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        let what = "delete";
        let id = valid_id(id)?;
        let (client, delete) = self.prepared(DELETE, what).await?;
        let deleted = client
            .execute(&delete, &[&id.as_str()])
            .await
            .map_err(thread_store_error(what))?;
        Ok(deleted > 0)
    }
}

/// The ids of `rows`, their first column: a page. `what` names the call in its errors.
fn ids(
    rows: &[tokio_postgres::Row],
    what: &'static str,
) -> Result<Vec<ThreadId>, ThreadStoreError> {
    rows.iter()
        .map(|row| {
            row.try_get::<_, String>(0)
                .map(ThreadId::new)
                .map_err(thread_store_error(what))
        })
        .collect()
}

/// The owner the column records for thread `id` saved as `json`: the one its JSON records (as
/// [`EncodedThread::owner`] reads it for every store), if the column can hold and index it.
/// `None` for text that is no thread's JSON: the store keeps it all the same.
fn recorded_owner(id: &ThreadId, json: &str) -> Option<String> {
    // A copy of the text, beside the parse of it that reading its owner is.
    let owner = EncodedThread::new(json.to_owned(), 0).owner(id).ok()??;
    indexed(&owner).then_some(owner)
}

/// Whether the column `owner` records `owner`: no NUL (Postgres's text holds none), at most
/// [`MAX_OWNER_LEN`] bytes.
fn indexed(owner: &str) -> bool {
    owner.len() <= MAX_OWNER_LEN && !owner.contains('\0')
}

/// A version as stored (a negative one, written by hand, reads as none).
fn version_of(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}
