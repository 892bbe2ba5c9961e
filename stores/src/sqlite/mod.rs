//! [`SqliteCheckpointer`]: checkpoints in one SQLite file, shared by the processes of a machine;
//! and [`SqliteThreadStore`]: the threads of conversations, in the same file.

mod threads;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use hookchain_core::BoxError;
use hookchain_core::interrupt::{CheckpointError, Clock, Slot, SlotStore, millis, valid_key};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use crate::{Row, StoreFailure, store_error};
pub use threads::SqliteThreadStore;

/// How long a statement waits for another connection's write lock (another process, or
/// another call of this one) before it fails with [`CheckpointError::Store`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many idle connections a store keeps for its next calls.
const IDLE_CONNECTIONS: usize = 8;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS hookchain_runs (
    key TEXT PRIMARY KEY,
    checkpoint TEXT,
    ended TEXT,
    held_by TEXT,
    token INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
)";

/// The threads of [`SqliteThreadStore`], beside the runs: created with them. Their column
/// `owner` is added after, as to a file of an earlier version ([`ADD_OWNER`]): one definition
/// for both.
const CREATE_THREADS: &str = "CREATE TABLE IF NOT EXISTS hookchain_threads (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    thread TEXT NOT NULL,
    updated_at INTEGER NOT NULL
)";

/// Whether the table of threads has its column `owner` (a file of an earlier version has
/// not). `table_xinfo`, not `table_info`, which leaves generated columns out.
const HAS_OWNER: &str =
    "SELECT count(*) FROM pragma_table_xinfo('hookchain_threads') WHERE name = 'owner'";

/// The owner a thread records (`Thread::owner`), derived from its JSON by SQLite itself, so
/// that every write (this version's, an earlier one's, one by hand) keeps it true. `NULL` when
/// the thread records none, or when the row holds no JSON text (edited by hand: a thread that
/// does not read), so that no write fails on it. The `WHEN`s are tried in order and only the
/// chosen branch is evaluated: `json_type` would raise on text that is not JSON, and would read
/// a blob as SQLite's binary JSON. `VIRTUAL`: nothing is stored but the index's entries, and
/// `ALTER TABLE` adds it without rewriting the rows.
const ADD_OWNER: &str = "ALTER TABLE hookchain_threads ADD COLUMN owner TEXT
    GENERATED ALWAYS AS (CASE
        WHEN typeof(thread) <> 'text' THEN NULL
        WHEN NOT json_valid(thread) THEN NULL
        WHEN json_type(thread, '$.owner') = 'text' THEN json_extract(thread, '$.owner')
    END) VIRTUAL";

/// An owner's threads, their ids in the order of their bytes (`BINARY`): the pages of
/// [`ThreadStore::list_owned`](hookchain_core::thread_store::ThreadStore::list_owned).
const CREATE_OWNER_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS hookchain_threads_owner ON hookchain_threads (owner, id)";

/// The table of the versions before leases, whose rows are copied over once (as free keys).
const OLD_TABLE: &str =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hookchain_checkpoints'";

const COPY_OLD: &str = "INSERT OR IGNORE INTO hookchain_runs
    (key, checkpoint, ended, held_by, token, expires_at, updated_at)
    SELECT key, checkpoint, NULL, NULL, 0, 0, updated_at FROM hookchain_checkpoints";

const READ: &str =
    "SELECT checkpoint, ended, held_by, token, expires_at FROM hookchain_runs WHERE key = ?1";

const WRITE: &str = "INSERT INTO hookchain_runs
    (key, checkpoint, ended, held_by, token, expires_at, updated_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
    ON CONFLICT (key) DO UPDATE SET
        checkpoint = excluded.checkpoint, ended = excluded.ended, held_by = excluded.held_by,
        token = excluded.token, expires_at = excluded.expires_at, updated_at = excluded.updated_at";

const DELETE: &str = "DELETE FROM hookchain_runs WHERE key = ?1";

/// `BINARY` collation: keys in the order of their UTF-8 bytes, as the trait asks.
const LIST: &str =
    "SELECT key, checkpoint, ended, held_by, token, expires_at FROM hookchain_runs ORDER BY key";

/// Tombstones past their retention and free keys holding nothing, swept as runs end.
const SWEEP: &str = "DELETE FROM hookchain_runs
    WHERE checkpoint IS NULL AND (held_by IS NULL OR expires_at <= ?1)
    AND (ended IS NULL OR CAST(json_extract(ended, '$.keep_until') AS INTEGER) <= ?1)";

/// Keeps checkpoints in one SQLite file, in the table `hookchain_runs` (`key TEXT PRIMARY KEY,
/// checkpoint TEXT, ended TEXT, held_by TEXT, token INTEGER, expires_at INTEGER, updated_at
/// INTEGER`: the checkpoint's JSON as [`Checkpoint::to_json`](hookchain_core::Checkpoint::to_json) wrote it, the tombstone of a run
/// that ended as JSON, the lease's holder, fencing token and expiry, and the time of the last
/// write, in milliseconds since the Unix epoch). A file of an earlier version (the table
/// `hookchain_checkpoints`) has its rows copied over once, as free keys; the old table is left
/// for you to drop.
///
/// Several processes of one machine may share the file (not a network file system: SQLite's
/// locks need a local one). The database is in WAL mode (readers do not wait for a writer),
/// writes are synced before they return (`synchronous = FULL`), and a call waits up to 10
/// seconds for another writer's lock before it fails with [`CheckpointError::Store`].
///
/// # What is atomic
///
/// Every operation ([`SlotStore`]: the rules of [`Checkpointer`](hookchain_core::interrupt::Checkpointer) are the same in every store)
/// reads the key's row, decides and writes it back in one transaction begun `IMMEDIATE`
/// (holding the database's write lock from its start): of several workers, in any number of
/// processes, claiming one key at once, exactly one is granted it, and a write whose lease is
/// no longer the key's is refused ([`CheckpointError::Claimed`],
/// [`CheckpointError::LeaseLost`]).
///
/// Leases, and tombstones' retention, are judged by the store's clock (the system's, or
/// [`with_clock`](SqliteCheckpointer::with_clock)'s): the processes sharing the file are on one
/// machine, with one clock, so they agree on whether a lease is live. (Workers on many
/// machines, whose clocks may disagree, share a `PostgresCheckpointer`, which judges by the
/// database's clock.)
///
/// # Blocking
///
/// SQLite's calls block. Every call of the store (after [`open`](Self::open)) runs on tokio's
/// blocking threads ([`tokio::task::spawn_blocking`]), never on the executor's threads, so a
/// call waiting for a lock or a disk holds up no other task; it must therefore be made inside
/// a tokio runtime (any flavour, the current-thread one too), and outside one it fails with
/// [`CheckpointError::Store`]. The store keeps a few open connections for its next calls.
///
/// A row whose checkpoint is not one (edited by hand, truncated, not text) reads as
/// [`CheckpointError::Decode`]; the store never panics on what it reads.
///
/// # Example
///
/// ```
/// use hookchain::interrupt::{Checkpointer, Record, SqliteCheckpointer};
/// use hookchain::prelude::*;
/// use hookchain::{Durability, EndReason, ResumeFrom, chain, hook};
/// use serde_json::json;
///
/// /// Asks before every model call.
/// #[hook(before_model)]
/// fn ask_first(cx: &mut Context) -> Flow {
///     match cx.resume_value() {
///         Some(_) => Flow::Continue,
///         None => Flow::interrupt(json!("go?")),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("hookchain-sqlite-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// # let path = dir.join("checkpoints.db");
/// let store = SqliteCheckpointer::open(&path)?; // creates the file and the table
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
///     .chain(chain![ask_first])
///     .checkpointer(store.clone(), Durability::Pauses)
///     .build()?;
///
/// // The run pauses: its checkpoint is stored under its run id, and the key is free.
/// let paused = agent.run("Hi").await?;
/// let checkpoint = paused.checkpoint.unwrap();
/// let key = checkpoint.run_id().to_owned();
/// let answers: Vec<_> = checkpoint.pending().map(|id| (id.clone(), json!("go"))).collect();
///
/// // Any process with the answers resumes what the store holds, once.
/// let done = agent.resume(ResumeFrom::stored(&key), answers.clone()).await?;
/// assert_eq!(done.end, EndReason::Finished);
/// // A duplicated approval finds the run's tombstone: refused, nothing runs again.
/// assert!(agent.resume(ResumeFrom::stored(&key), answers).await.is_err());
/// assert!(matches!(store.get(&key).await?, Some(Record::Ended(_))));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
///
/// Through the facade: `hookchain::interrupt::SqliteCheckpointer`, with `hookchain`'s
/// feature `sqlite`.
#[derive(Clone)]
pub struct SqliteCheckpointer {
    inner: Arc<Inner>,
}

/// The file and the idle connections, shared with the blocking tasks.
struct Inner {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    clock: Clock,
}

impl SqliteCheckpointer {
    /// Opens the store in the SQLite file at `path`, creating the file and the table if they
    /// are not there, and switching the database to WAL mode.
    ///
    /// This blocks while it opens the file (once, at startup; inside a runtime, call it in
    /// [`tokio::task::spawn_blocking`] if that matters). It fails with
    /// [`CheckpointError::Store`] if the file cannot be opened or created, or is not a SQLite
    /// database.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = path.as_ref().to_owned();
        let mut connection = connect::<CheckpointError>(&path)?;
        create_table(&mut connection)?;
        Ok(SqliteCheckpointer {
            inner: Arc::new(Inner {
                path,
                idle: Mutex::new(vec![connection]),
                clock: Clock::system(),
            }),
        })
    }

    /// The store reading the time from `clock` (leases, retention), for every process sharing
    /// the file the same: the system's by default.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        let inner = Inner {
            path: self.inner.path.clone(),
            idle: Mutex::new(Vec::new()),
            clock,
        };
        SqliteCheckpointer {
            inner: Arc::new(inner),
        }
    }

    /// The file of the store.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The threads of conversations, kept in the same file (the table `hookchain_threads`,
    /// created with the store's), through the same connections: see [`SqliteThreadStore`].
    #[must_use]
    pub fn threads(&self) -> SqliteThreadStore {
        SqliteThreadStore::new(Arc::clone(&self.inner))
    }

    /// Runs `work` with a connection, on tokio's blocking threads. `what` names the call in
    /// its errors.
    async fn with_connection<T: Send + 'static>(
        &self,
        what: &'static str,
        work: impl FnOnce(&mut Connection) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, CheckpointError> {
        self.inner.with_connection(what, work).await
    }
}

impl Inner {
    /// Runs `work` with a connection, on tokio's blocking threads. `what` names the call in
    /// its errors, of the store's type `E`.
    async fn with_connection<T, E>(
        self: &Arc<Self>,
        what: &'static str,
        work: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: StoreFailure + Send + 'static,
    {
        let failed = |error: BoxError| E::store(what, error);
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| failed(e.into()))?;
        let inner = Arc::clone(self);
        let task = runtime.spawn_blocking(move || {
            let mut connection = match inner.take() {
                Some(connection) => connection,
                None => connect::<E>(&inner.path)?,
            };
            let done = work(&mut connection);
            // A connection that failed may be broken: the next call opens a new one.
            if !done.as_ref().is_err_and(E::is_store) {
                inner.give_back(connection);
            }
            done
        });
        match task.await {
            Ok(done) => done,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => Err(failed(error.into())),
        }
    }

    fn take(&self) -> Option<Connection> {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    fn give_back(&self, connection: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(connection);
        }
    }
}

impl fmt::Debug for SqliteCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteCheckpointer")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

/// Opens a connection to the file at `path`: a busy timeout, WAL mode, synced commits. Its
/// errors are of the store's type `E`.
fn connect<E: StoreFailure>(path: &Path) -> Result<Connection, E> {
    fn failed<E: StoreFailure, S: Into<BoxError>>(what: &'static str) -> impl Fn(S) -> E {
        move |source| E::store(what, source.into())
    }
    let connection = Connection::open(path).map_err(failed("open the database"))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(failed("set the busy timeout"))?;
    // `journal_mode` answers with the mode it is in: WAL from now on, for every connection.
    let mode: String = connection
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(failed("switch to WAL mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(failed("switch to WAL mode")(NotWal(mode)));
    }
    connection
        .pragma_update(None, "synchronous", "FULL")
        .map_err(failed("set synchronous = FULL"))?;
    Ok(connection)
}

/// The database stayed in another journal mode than WAL (an in-memory database, say).
#[derive(Debug)]
struct NotWal(String);

impl fmt::Display for NotWal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the database is in journal mode `{}`, not WAL", self.0)
    }
}

impl std::error::Error for NotWal {}

/// Creates the table if it is missing, copying the rows of an earlier version's table once.
fn create_table(connection: &mut Connection) -> Result<(), CheckpointError> {
    let error = store_error("create the table");
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(error)?;
    let existed: i64 = transaction
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hookchain_runs'",
            [],
            |row| row.get(0),
        )
        .map_err(error)?;
    transaction.execute_batch(CREATE_TABLE).map_err(error)?;
    transaction.execute_batch(CREATE_THREADS).map_err(error)?;
    add_owner(&transaction).map_err(error)?;
    let old: i64 = transaction
        .query_row(OLD_TABLE, [], |row| row.get(0))
        .map_err(error)?;
    if existed == 0 && old == 1 {
        transaction.execute(COPY_OLD, []).map_err(error)?;
    }
    transaction.commit().map_err(error)
}

/// Gives the table of threads its column `owner` and the index on it, when they are missing
/// (a new file, or one of an earlier version). In the transaction that creates the tables,
/// which holds the database's write lock: of processes opening the file at once, the first
/// adds them and the others find them.
fn add_owner(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    let has_owner: i64 = transaction.query_row(HAS_OWNER, [], |row| row.get(0))?;
    if has_owner == 0 {
        transaction.execute_batch(ADD_OWNER)?;
    }
    transaction.execute_batch(CREATE_OWNER_INDEX)
}

impl SlotStore for SqliteCheckpointer {
    async fn transact<T, F>(&self, key: &str, operation: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static,
    {
        let key = valid_key(key)?.to_owned();
        let now = self.inner.clock.now();
        self.with_connection("write", move |connection| {
            let error = store_error("write");
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(error)?;
            let slot = read(&transaction, &key)?;
            let (updated, done) = operation(slot.clone(), now)?;
            if updated != slot {
                match &updated {
                    Some(slot) => {
                        let row = Row::of(slot)?;
                        let updated_at = i64::try_from(millis(now)).unwrap_or(i64::MAX);
                        transaction
                            .prepare_cached(WRITE)
                            .and_then(|mut write| {
                                write.execute(params![
                                    key,
                                    row.checkpoint,
                                    row.ended,
                                    row.held_by,
                                    row.token,
                                    row.expires_at,
                                    updated_at
                                ])
                            })
                            .map_err(error)?;
                    }
                    None => {
                        transaction
                            .prepare_cached(DELETE)
                            .and_then(|mut delete| delete.execute(params![key]))
                            .map_err(error)?;
                    }
                }
                if updated.as_ref().is_some_and(|slot| slot.ended.is_some()) {
                    let now = i64::try_from(millis(now)).unwrap_or(i64::MAX);
                    transaction
                        .prepare_cached(SWEEP)
                        .and_then(|mut sweep| sweep.execute(params![now]))
                        .map_err(error)?;
                }
            }
            transaction.commit().map_err(error)?;
            Ok(done)
        })
        .await
    }

    async fn read(&self, key: &str) -> Result<(Option<Slot>, SystemTime), CheckpointError> {
        let key = valid_key(key)?.to_owned();
        let slot = self
            .with_connection("read", move |connection| read(connection, &key))
            .await?;
        Ok((slot, self.inner.clock.now()))
    }

    async fn slots(&self) -> Result<(Vec<(String, Slot)>, SystemTime), CheckpointError> {
        let slots = self
            .with_connection("list", move |connection| {
                let error = store_error("list");
                let mut list = connection.prepare_cached(LIST).map_err(error)?;
                let mut rows = list.query([]).map_err(error)?;
                let mut slots = Vec::new();
                while let Some(row) = rows.next().map_err(error)? {
                    let key: String = row.get(0).map_err(error)?;
                    slots.push((key, row_at(row, 1)?.into_slot()?));
                }
                Ok(slots)
            })
            .await?;
        Ok((slots, self.inner.clock.now()))
    }
}

/// `key`'s slot, if it has a row.
fn read(connection: &Connection, key: &str) -> Result<Option<Slot>, CheckpointError> {
    let error = store_error("read");
    let mut read = connection.prepare_cached(READ).map_err(error)?;
    let mut rows = read.query(params![key]).map_err(error)?;
    match rows.next().map_err(error)? {
        Some(row) => row_at(row, 0)?.into_slot().map(Some),
        None => Ok(None),
    }
}

/// The row's columns from `first` on: checkpoint, ended, held_by, token, expires_at.
fn row_at(row: &rusqlite::Row<'_>, first: usize) -> Result<Row, CheckpointError> {
    let error = store_error("read");
    Ok(Row {
        checkpoint: text(row.get_ref(first).map_err(error)?),
        ended: text(row.get_ref(first + 1).map_err(error)?),
        held_by: row.get(first + 2).map_err(error)?,
        token: row.get(first + 3).map_err(error)?,
        expires_at: row.get(first + 4).map_err(error)?,
    })
}

/// A text column as text: one that holds something else (edited by hand) reads as text that
/// is no checkpoint (nor thread), so that it decodes as [`CheckpointError::Decode`] when handed
/// out.
fn text(value: ValueRef<'_>) -> Option<String> {
    match value {
        ValueRef::Null => None,
        ValueRef::Text(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        other => Some(format!("<a value of type {}, not text>", other.data_type())),
    }
}

#[cfg(test)]
mod tests {
    use hookchain::interrupt::{Checkpointer, Record, Stored};
    use hookchain::prelude::*;
    use hookchain::{Checkpoint, chain, hook};

    use super::*;

    #[hook(before_model)]
    fn ask_first(cx: &mut Context) -> Flow {
        match cx.resume_value() {
            Some(_) => Flow::Continue,
            None => Flow::interrupt(serde_json::json!("go?")),
        }
    }

    async fn pause() -> Checkpoint {
        let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
            .chain(chain![ask_first])
            .build()
            .unwrap();
        *agent.run("hello").await.unwrap().checkpoint.unwrap()
    }

    /// A file of the version before leases (the table `hookchain_checkpoints`) has its rows
    /// copied into the new table once, as free keys, when it is opened.
    #[tokio::test]
    async fn an_older_file_is_copied_over() {
        let dir =
            std::env::temp_dir().join(format!("hookchain-sqlite-older-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("checkpoints.db");
        let checkpoint = pause().await;
        {
            let connection = Connection::open(&path).unwrap();
            connection
                .execute_batch(
                    "CREATE TABLE hookchain_checkpoints (key TEXT PRIMARY KEY,
                         checkpoint TEXT NOT NULL, held_by TEXT, updated_at INTEGER NOT NULL)",
                )
                .unwrap();
            connection
                .execute(
                    "INSERT INTO hookchain_checkpoints VALUES ('old', ?1, 'w', 0)",
                    [checkpoint.to_json().unwrap()],
                )
                .unwrap();
        }
        let store = SqliteCheckpointer::open(&path).unwrap();
        assert_eq!(
            store.list().await.unwrap(),
            [Stored::new("old", None, false)]
        );
        assert_eq!(
            store.get("old").await.unwrap(),
            Some(Record::Checkpoint(Box::new(checkpoint)))
        );
        // Opened again: copied once, not again.
        drop(store);
        let store = SqliteCheckpointer::open(&path).unwrap();
        assert_eq!(store.list().await.unwrap().len(), 1);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
