//! [`SqliteCheckpointer`]: checkpoints in one SQLite file, shared by the processes of a machine.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookchain_core::interrupt::{
    Checkpoint, CheckpointError, Checkpointer, Stored, fence, holder_after_put, valid_key,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::{Unchanged, store_error};

/// How long a statement waits for another connection's write lock (another process, or
/// another call of this one) before it fails with [`CheckpointError::Store`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many idle connections a store keeps for its next calls.
const IDLE_CONNECTIONS: usize = 8;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS hookchain_checkpoints (
    key TEXT PRIMARY KEY,
    checkpoint TEXT NOT NULL,
    held_by TEXT,
    updated_at INTEGER NOT NULL
)";

/// The fenced upsert: a new key is inserted, a free key or one `?5` holds is replaced, a key
/// another worker holds is left alone (no row changed).
const PUT: &str = "INSERT INTO hookchain_checkpoints (key, checkpoint, held_by, updated_at)
    VALUES (?1, ?2, ?3, ?4)
    ON CONFLICT (key) DO UPDATE SET
        checkpoint = excluded.checkpoint,
        held_by = excluded.held_by,
        updated_at = excluded.updated_at
    WHERE hookchain_checkpoints.held_by IS NULL OR hookchain_checkpoints.held_by = ?5";

/// The claim, in one statement: the key becomes `?2`'s if it is free or `?2`'s already.
const CLAIM: &str = "UPDATE hookchain_checkpoints SET held_by = ?2, updated_at = ?3
    WHERE key = ?1 AND (held_by IS NULL OR held_by = ?2)
    RETURNING checkpoint";

const RELEASE: &str = "UPDATE hookchain_checkpoints SET held_by = NULL, updated_at = ?3
    WHERE key = ?1 AND held_by = ?2";

const GET: &str = "SELECT checkpoint FROM hookchain_checkpoints WHERE key = ?1";

const HOLDER: &str = "SELECT held_by FROM hookchain_checkpoints WHERE key = ?1";

const DELETE: &str = "DELETE FROM hookchain_checkpoints WHERE key = ?1";

/// `BINARY` collation: keys in the order of their UTF-8 bytes, as the trait asks.
const LIST: &str = "SELECT key, held_by FROM hookchain_checkpoints ORDER BY key";

/// Keeps checkpoints in one SQLite file, in the table `hookchain_checkpoints`
/// (`key TEXT PRIMARY KEY, checkpoint TEXT NOT NULL, held_by TEXT, updated_at INTEGER NOT
/// NULL`: the checkpoint's JSON as [`Checkpoint::to_json`] wrote it, the worker holding the
/// key or `NULL`, and the time of the last write in milliseconds since the Unix epoch).
///
/// Several processes of one machine may share the file (not a network file system: SQLite's
/// locks need a local one). The database is in WAL mode (readers do not wait for a writer),
/// writes are synced before they return (`synchronous = FULL`), and a call waits up to 10
/// seconds for another writer's lock before it fails with [`CheckpointError::Store`].
///
/// # What is atomic
///
/// - [`claim`](Checkpointer::claim) is one statement, `UPDATE … SET held_by = ? WHERE key =
///   ? AND (held_by IS NULL OR held_by = ?) RETURNING checkpoint`: of several workers, in any
///   number of processes, claiming one free key at once, exactly one gets the checkpoint.
/// - [`put`](Checkpointer::put) is a conditional upsert (`INSERT … ON CONFLICT (key) DO UPDATE
///   … WHERE held_by IS NULL OR held_by = ?`) and [`delete`](Checkpointer::delete) a check
///   and a `DELETE`, each in a transaction begun `IMMEDIATE` (holding the database's write
///   lock from its start), so the fence and the write are one step: a worker that lost its key
///   gets [`CheckpointError::Claimed`] naming the holder, and never overwrites its run.
/// - [`release`](Checkpointer::release) is one conditional `UPDATE`.
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
/// use hookchain::interrupt::Checkpointer;
/// use hookchain::prelude::*;
/// use hookchain::{EndReason, chain, hook};
/// use hookchain_stores::SqliteCheckpointer;
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
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
///     .chain(chain![ask_first])
///     .build();
/// let store = SqliteCheckpointer::open(&path)?; // creates the file and the table
///
/// // The run pauses: its checkpoint is stored, and the key is free.
/// let paused = agent.run("Hi").await?;
/// store.put("thread-1", &paused.checkpoint.unwrap(), "web-1").await?;
///
/// // Whoever has the answer claims it: of several workers, exactly one gets it.
/// let checkpoint = store.claim("thread-1", "worker-7").await?.expect("stored");
/// assert_eq!(store.claim("thread-1", "worker-8").await?, None);
/// let answers: Vec<_> = checkpoint.pending().map(|id| (id.clone(), json!("go"))).collect();
/// let done = agent.resume(checkpoint, answers).await?;
/// assert_eq!(done.end, EndReason::Finished);
/// store.delete("thread-1", "worker-7").await?;
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
        let connection = connect(&path)?;
        connection
            .execute_batch(CREATE_TABLE)
            .map_err(store_error("create the table"))?;
        Ok(SqliteCheckpointer {
            inner: Arc::new(Inner {
                path,
                idle: Mutex::new(vec![connection]),
            }),
        })
    }

    /// The file of the store.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `work` with a connection, on tokio's blocking threads. `what` names the call in
    /// its errors.
    async fn with_connection<T: Send + 'static>(
        &self,
        what: &'static str,
        work: impl FnOnce(&mut Connection) -> Result<T, CheckpointError> + Send + 'static,
    ) -> Result<T, CheckpointError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(store_error(what))?;
        let inner = Arc::clone(&self.inner);
        let task = runtime.spawn_blocking(move || {
            let mut connection = match inner.take() {
                Some(connection) => connection,
                None => connect(&inner.path)?,
            };
            let done = work(&mut connection);
            // A connection that failed may be broken: the next call opens a new one.
            if !matches!(done, Err(CheckpointError::Store { .. })) {
                inner.give_back(connection);
            }
            done
        });
        match task.await {
            Ok(done) => done,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => Err(store_error(what)(error)),
        }
    }
}

impl Inner {
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

/// Opens a connection to the file at `path`: a busy timeout, WAL mode, synced commits.
fn connect(path: &Path) -> Result<Connection, CheckpointError> {
    let connection = Connection::open(path).map_err(store_error("open the database"))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(store_error("set the busy timeout"))?;
    // `journal_mode` answers with the mode it is in: WAL from now on, for every connection.
    let mode: String = connection
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(store_error("switch to WAL mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(store_error("switch to WAL mode")(NotWal(mode)));
    }
    connection
        .pragma_update(None, "synchronous", "FULL")
        .map_err(store_error("set synchronous = FULL"))?;
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

/// Milliseconds since the Unix epoch (0 on a clock set before it).
fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// The checkpoint in a `checkpoint` column: [`CheckpointError::Decode`] if it is not one.
fn decode(value: ValueRef<'_>) -> Result<Checkpoint, CheckpointError> {
    let text = match value {
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).map_err(|error| {
            not_a_checkpoint(format!("the checkpoint column is not UTF-8: {error}"))
        })?,
        other => {
            return Err(not_a_checkpoint(format!(
                "the checkpoint column holds a value of type {}, not text",
                other.data_type()
            )));
        }
    };
    Checkpoint::from_json(text)
}

fn not_a_checkpoint(message: String) -> CheckpointError {
    CheckpointError::Decode(<serde_json::Error as serde::de::Error>::custom(message))
}

impl Checkpointer for SqliteCheckpointer {
    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> Result<(), CheckpointError> {
        let key = valid_key(key)?.to_owned();
        let json = checkpoint.to_json()?;
        let held_by = holder_after_put(checkpoint, worker).map(str::to_owned);
        let worker = worker.to_owned();
        self.with_connection("put", move |connection| {
            let error = store_error("put");
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(error)?;
            let changed = transaction
                .prepare_cached(PUT)
                .and_then(|mut put| put.execute(params![key, json, held_by, now_millis(), worker]))
                .map_err(error)?;
            if changed == 0 {
                // Fenced: another worker holds the key (the write lock is ours: it still does).
                let holder = holder(&transaction, &key, "put")?;
                fence(&key, holder.as_deref(), &worker)?;
                return Err(store_error("put")(Unchanged));
            }
            transaction.commit().map_err(error)
        })
        .await
    }

    async fn get(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let key = valid_key(key)?.to_owned();
        self.with_connection("get", move |connection| {
            let mut get = connection.prepare_cached(GET).map_err(store_error("get"))?;
            let mut rows = get.query(params![key]).map_err(store_error("get"))?;
            match rows.next().map_err(store_error("get"))? {
                Some(row) => decode(row.get_ref(0).map_err(store_error("get"))?).map(Some),
                None => Ok(None),
            }
        })
        .await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        self.with_connection("list", move |connection| {
            let mut list = connection
                .prepare_cached(LIST)
                .map_err(store_error("list"))?;
            let rows = list
                .query_map([], |row| {
                    Ok(Stored::new(
                        row.get::<_, String>(0)?,
                        row.get::<_, Option<String>>(1)?,
                    ))
                })
                .map_err(store_error("list"))?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(store_error("list"))
        })
        .await
    }

    async fn claim(&self, key: &str, worker: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let key = valid_key(key)?.to_owned();
        let worker = worker.to_owned();
        self.with_connection("claim", move |connection| {
            let mut claim = connection
                .prepare_cached(CLAIM)
                .map_err(store_error("claim"))?;
            let mut rows = claim
                .query(params![key, worker, now_millis()])
                .map_err(store_error("claim"))?;
            let claimed = match rows.next().map_err(store_error("claim"))? {
                Some(row) => Some(decode(row.get_ref(0).map_err(store_error("claim"))?)),
                None => None,
            };
            // The statement completes (and commits) when its rows are read to the end.
            while rows.next().map_err(store_error("claim"))?.is_some() {}
            claimed.transpose()
        })
        .await
    }

    async fn release(&self, key: &str, worker: &str) -> Result<bool, CheckpointError> {
        let key = valid_key(key)?.to_owned();
        let worker = worker.to_owned();
        self.with_connection("release", move |connection| {
            let changed = connection
                .prepare_cached(RELEASE)
                .and_then(|mut release| release.execute(params![key, worker, now_millis()]))
                .map_err(store_error("release"))?;
            Ok(changed == 1)
        })
        .await
    }

    async fn delete(&self, key: &str, worker: &str) -> Result<(), CheckpointError> {
        let key = valid_key(key)?.to_owned();
        let worker = worker.to_owned();
        self.with_connection("delete", move |connection| {
            let error = store_error("delete");
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(error)?;
            fence(
                &key,
                holder(&transaction, &key, "delete")?.as_deref(),
                &worker,
            )?;
            transaction
                .prepare_cached(DELETE)
                .and_then(|mut delete| delete.execute(params![key]))
                .map_err(error)?;
            transaction.commit().map_err(error)
        })
        .await
    }
}

/// The worker holding `key` (`None`: free, or no such key).
fn holder(
    connection: &Connection,
    key: &str,
    what: &'static str,
) -> Result<Option<String>, CheckpointError> {
    connection
        .prepare_cached(HOLDER)
        .and_then(|mut holder| {
            holder
                .query_row(params![key], |row| row.get::<_, Option<String>>(0))
                .optional()
        })
        .map(Option::flatten)
        .map_err(store_error(what))
}
