//! [`PostgresCheckpointer`]: checkpoints in Postgres, shared by workers on many machines.

use std::fmt;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use hookchain_core::interrupt::{
    Checkpoint, CheckpointError, Checkpointer, Stored, fence, holder_after_put, valid_key,
};
use tokio_postgres::{NoTls, Statement};

use crate::{Unchanged, store_error};

/// The crates of the pool and the client, for building a pool of your own (TLS, sizes,
/// timeouts) to give [`PostgresCheckpointer::from_pool`].
pub use {deadpool_postgres, tokio_postgres};

/// Serializes the creation of the table among workers starting at once (an advisory lock,
/// held until the creating transaction ends): `CREATE TABLE IF NOT EXISTS` alone may fail in
/// all but one of several sessions running it together.
const CREATE_LOCK: i64 = 0x686f_6f6b_6368_6b70; // "hookchkp"

const EXISTS: &str = "SELECT to_regclass('hookchain_checkpoints') IS NOT NULL";

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS hookchain_checkpoints (
    key text PRIMARY KEY,
    checkpoint text NOT NULL,
    held_by text,
    updated_at timestamptz NOT NULL DEFAULT now()
)";

/// The fenced upsert: a new key is inserted, a free key or one `$4` holds is replaced, a key
/// another worker holds is left alone (and locked, in a transaction).
const PUT: &str =
    "INSERT INTO hookchain_checkpoints AS stored (key, checkpoint, held_by, updated_at)
    VALUES ($1, $2, $3, now())
    ON CONFLICT (key) DO UPDATE SET
        checkpoint = EXCLUDED.checkpoint,
        held_by = EXCLUDED.held_by,
        updated_at = now()
    WHERE stored.held_by IS NULL OR stored.held_by = $4";

/// The claim, in one statement: the key becomes `$2`'s if it is free or `$2`'s already.
const CLAIM: &str = "UPDATE hookchain_checkpoints SET held_by = $2, updated_at = now()
    WHERE key = $1 AND (held_by IS NULL OR held_by = $2)
    RETURNING checkpoint";

const RELEASE: &str = "UPDATE hookchain_checkpoints SET held_by = NULL, updated_at = now()
    WHERE key = $1 AND held_by = $2";

const GET: &str = "SELECT checkpoint FROM hookchain_checkpoints WHERE key = $1";

/// The holder of a key, the row locked until the transaction ends.
const HOLDER: &str = "SELECT held_by FROM hookchain_checkpoints WHERE key = $1 FOR UPDATE";

/// The fenced delete.
const DELETE: &str = "DELETE FROM hookchain_checkpoints
    WHERE key = $1 AND (held_by IS NULL OR held_by = $2)";

/// Keys in the order of their bytes (the `C` collation), whatever the database's collation.
const LIST: &str = "SELECT key, held_by FROM hookchain_checkpoints ORDER BY key COLLATE \"C\"";

/// Keeps checkpoints in Postgres, in the table `hookchain_checkpoints` (`key text PRIMARY
/// KEY, checkpoint text NOT NULL, held_by text, updated_at timestamptz NOT NULL`), through a
/// pool of connections ([`deadpool_postgres::Pool`]).
///
/// The checkpoint column is `text`, not `jsonb`: it keeps the checkpoint byte for byte as
/// [`Checkpoint::to_json`] wrote it (`jsonb` reorders keys, drops duplicates and refuses the
/// escape `\u0000`, which a message may hold), and a store has no need to query inside it.
/// Keys and worker names cannot hold the character NUL (Postgres refuses it in text).
///
/// The table is created when the store is made, if it is missing (under an advisory lock, so
/// workers starting at once do not trip over each other; a role without the right to create
/// tables works with a table created beforehand). It lives in the first schema of the
/// connection's `search_path` (`options=-csearch_path=agents` in the connection string
/// chooses another).
///
/// # What is atomic
///
/// - [`claim`](Checkpointer::claim) is one statement, `UPDATE … SET held_by = $2 WHERE key =
///   $1 AND (held_by IS NULL OR held_by = $2) RETURNING checkpoint`: of several workers, on any
///   number of machines, claiming one free key at once, exactly one gets the checkpoint (the
///   others' `UPDATE`s wait for its row lock, then find the key held).
/// - [`put`](Checkpointer::put) is the upsert `INSERT … ON CONFLICT (key) DO UPDATE … WHERE
///   held_by IS NULL OR held_by = $4`, one statement; when it changes nothing, a transaction
///   repeats it (which locks the row) and reads who holds the key, for
///   [`CheckpointError::Claimed`].
/// - [`delete`](Checkpointer::delete) is a fenced `DELETE`; when it deletes nothing, a
///   transaction locks the row (`SELECT … FOR UPDATE`) to tell a missing key from a held one.
/// - [`release`](Checkpointer::release) is one conditional `UPDATE`.
///
/// # Blocking
///
/// None: the store is asynchronous through and through (`tokio-postgres`), and needs a tokio
/// runtime (the pool's connections run in tokio tasks).
///
/// A row whose checkpoint is not one reads as [`CheckpointError::Decode`]; a failed
/// connection or query is [`CheckpointError::Store`].
///
/// # Example
///
/// ```no_run
/// use hookchain::interrupt::Checkpointer;
/// use hookchain_stores::PostgresCheckpointer;
///
/// # async fn example(checkpoint: hookchain::Checkpoint) -> Result<(), Box<dyn std::error::Error>> {
/// // A libpq-style connection string, or a URL (`postgresql://agents@db/agents`).
/// let store = PostgresCheckpointer::connect("host=db user=agents dbname=agents").await?;
/// store.put("thread-1", &checkpoint, "web-1").await?;
///
/// // On any machine: exactly one of the workers claiming it gets it.
/// if let Some(checkpoint) = store.claim("thread-1", "worker-7").await? {
///     // … resume it, then:
///     store.delete("thread-1", "worker-7").await?;
/// }
/// # Ok(())
/// # }
/// ```
///
/// With a pool of your own (TLS, its size, timeouts):
///
/// ```no_run
/// use hookchain_stores::PostgresCheckpointer;
/// use hookchain_stores::postgres::deadpool_postgres::{Manager, Pool};
/// use hookchain_stores::postgres::tokio_postgres::{Config, NoTls};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let config: Config = "host=db user=agents dbname=agents".parse()?;
/// let pool = Pool::builder(Manager::new(config, NoTls)).max_size(4).build()?;
/// let store = PostgresCheckpointer::from_pool(pool).await?;
/// # Ok(())
/// # }
/// ```
///
/// Through the facade: `hookchain::interrupt::PostgresCheckpointer`, with `hookchain`'s
/// feature `postgres`.
#[derive(Clone)]
pub struct PostgresCheckpointer {
    pool: Pool,
}

impl PostgresCheckpointer {
    /// Connects to the server that `config` names (a libpq-style connection string, `host=…
    /// port=… user=… password=… dbname=…`, or a `postgresql://` URL; without TLS), with a pool
    /// of connections of deadpool's default size, and creates the table if it is missing.
    ///
    /// Fails with [`CheckpointError::Store`] if the string does not parse, or the server
    /// cannot be reached or refuses the login. A `connect_timeout=…` in the string bounds the
    /// wait for an unreachable server.
    pub async fn connect(config: &str) -> Result<Self, CheckpointError> {
        let config: tokio_postgres::Config = config
            .parse()
            .map_err(store_error("parse the connection string"))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .build()
            .map_err(store_error("build the pool"))?;
        Self::from_pool(pool).await
    }

    /// A store on the connections of `pool`; creates the table if it is missing.
    pub async fn from_pool(pool: Pool) -> Result<Self, CheckpointError> {
        let store = PostgresCheckpointer { pool };
        store.create_table().await?;
        Ok(store)
    }

    /// The pool of the store's connections.
    #[must_use]
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// A connection from the pool.
    async fn client(&self, what: &'static str) -> Result<Object, CheckpointError> {
        self.pool.get().await.map_err(store_error(what))
    }

    /// A connection from the pool, with `sql` prepared on it (once per connection).
    async fn prepared(
        &self,
        sql: &str,
        what: &'static str,
    ) -> Result<(Object, Statement), CheckpointError> {
        let client = self.client(what).await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(store_error(what))?;
        Ok((client, statement))
    }

    async fn create_table(&self) -> Result<(), CheckpointError> {
        let what = "create the table";
        let mut client = self.client(what).await?;
        let exists: bool = client
            .query_one(EXISTS, &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(store_error(what))?;
        if exists {
            return Ok(());
        }
        let transaction = client.transaction().await.map_err(store_error(what))?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&CREATE_LOCK])
            .await
            .map_err(store_error(what))?;
        transaction
            .batch_execute(CREATE_TABLE)
            .await
            .map_err(store_error(what))?;
        transaction.commit().await.map_err(store_error(what))
    }
}

impl fmt::Debug for PostgresCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresCheckpointer")
            .field("pool", &self.pool.status())
            .finish()
    }
}

impl Checkpointer for PostgresCheckpointer {
    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> Result<(), CheckpointError> {
        let what = "put";
        let key = valid_key(key)?;
        let json = checkpoint.to_json()?;
        let held_by = holder_after_put(checkpoint, worker);
        let (mut client, put) = self.prepared(PUT, what).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&key, &json, &held_by, &worker];
        if client
            .execute(&put, &params)
            .await
            .map_err(store_error(what))?
            == 1
        {
            return Ok(());
        }
        // Fenced, or so it seemed: again in a transaction, where a fenced upsert locks the
        // row, so that the holder it reads is the one that fenced it.
        let transaction = client.transaction().await.map_err(store_error(what))?;
        if transaction
            .execute(&put, &params)
            .await
            .map_err(store_error(what))?
            == 0
        {
            let holder = holder(&transaction, key, what).await?;
            fence(key, holder.flatten().as_deref(), worker)?;
            return Err(store_error(what)(Unchanged));
        }
        transaction.commit().await.map_err(store_error(what))
    }

    async fn get(&self, key: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let what = "get";
        let key = valid_key(key)?;
        let (client, get) = self.prepared(GET, what).await?;
        let row = client
            .query_opt(&get, &[&key])
            .await
            .map_err(store_error(what))?;
        row.map(|row| decode(&row, what)).transpose()
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        let what = "list";
        let (client, list) = self.prepared(LIST, what).await?;
        let rows = client.query(&list, &[]).await.map_err(store_error(what))?;
        rows.iter()
            .map(|row| {
                Ok(Stored::new(
                    row.try_get::<_, String>(0)?,
                    row.try_get::<_, Option<String>>(1)?,
                ))
            })
            .collect::<Result<_, tokio_postgres::Error>>()
            .map_err(store_error(what))
    }

    async fn claim(&self, key: &str, worker: &str) -> Result<Option<Checkpoint>, CheckpointError> {
        let what = "claim";
        let key = valid_key(key)?;
        let (client, claim) = self.prepared(CLAIM, what).await?;
        let row = client
            .query_opt(&claim, &[&key, &worker])
            .await
            .map_err(store_error(what))?;
        row.map(|row| decode(&row, what)).transpose()
    }

    async fn release(&self, key: &str, worker: &str) -> Result<bool, CheckpointError> {
        let what = "release";
        let key = valid_key(key)?;
        let (client, release) = self.prepared(RELEASE, what).await?;
        let released = client
            .execute(&release, &[&key, &worker])
            .await
            .map_err(store_error(what))?;
        Ok(released == 1)
    }

    async fn delete(&self, key: &str, worker: &str) -> Result<(), CheckpointError> {
        let what = "delete";
        let key = valid_key(key)?;
        let (mut client, delete) = self.prepared(DELETE, what).await?;
        if client
            .execute(&delete, &[&key, &worker])
            .await
            .map_err(store_error(what))?
            == 1
        {
            return Ok(());
        }
        // Nothing deleted: no such key, or another worker holds it. The row locked, tell
        // which, and delete it if it was freed meanwhile.
        let transaction = client.transaction().await.map_err(store_error(what))?;
        let Some(holder) = holder(&transaction, key, what).await? else {
            return Ok(());
        };
        fence(key, holder.as_deref(), worker)?;
        transaction
            .execute(&delete, &[&key, &worker])
            .await
            .map_err(store_error(what))?;
        transaction.commit().await.map_err(store_error(what))
    }
}

/// The worker holding `key`, its row locked: `None` if there is no such key, `Some(None)` if
/// it is free.
async fn holder(
    transaction: &deadpool_postgres::Transaction<'_>,
    key: &str,
    what: &'static str,
) -> Result<Option<Option<String>>, CheckpointError> {
    let statement = transaction
        .prepare_cached(HOLDER)
        .await
        .map_err(store_error(what))?;
    let row = transaction
        .query_opt(&statement, &[&key])
        .await
        .map_err(store_error(what))?;
    row.map(|row| row.try_get::<_, Option<String>>(0))
        .transpose()
        .map_err(store_error(what))
}

/// The checkpoint in the first column of `row`: [`CheckpointError::Decode`] if it is not one.
fn decode(row: &tokio_postgres::Row, what: &'static str) -> Result<Checkpoint, CheckpointError> {
    let json: &str = row.try_get(0).map_err(store_error(what))?;
    Checkpoint::from_json(json)
}
