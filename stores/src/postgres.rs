//! [`PostgresCheckpointer`]: checkpoints in Postgres, shared by workers on many machines.

use std::fmt;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use std::time::SystemTime;

use hookchain_core::interrupt::{CheckpointError, Clock, Slot, SlotStore, millis, valid_key};
use tokio_postgres::{NoTls, Statement};

use crate::{Row, store_error};

/// The crates of the pool and the client, for building a pool of your own (TLS, sizes,
/// timeouts) to give [`PostgresCheckpointer::from_pool`].
pub use {deadpool_postgres, tokio_postgres};

/// Serializes the creation of the table among workers starting at once (an advisory lock,
/// held until the creating transaction ends): `CREATE TABLE IF NOT EXISTS` alone may fail in
/// all but one of several sessions running it together.
const CREATE_LOCK: i64 = 0x686f_6f6b_6368_6b70; // "hookchkp"

const EXISTS: &str = "SELECT to_regclass('hookchain_runs') IS NOT NULL";

/// The table; and the rows of an earlier version's table copied over once, as free keys.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS hookchain_runs (
    key text PRIMARY KEY,
    checkpoint text,
    ended text,
    held_by text,
    token bigint NOT NULL,
    expires_at bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
DO $$ BEGIN
    IF to_regclass('hookchain_checkpoints') IS NOT NULL THEN
        INSERT INTO hookchain_runs (key, checkpoint, token, expires_at, updated_at)
        SELECT key, checkpoint, 0, 0, updated_at FROM hookchain_checkpoints
        ON CONFLICT (key) DO NOTHING;
    END IF;
END $$";

/// A row for a key that has none, so that the next statement can lock it: returns the key
/// when it inserted it (the key held nothing).
const ENSURE: &str = "INSERT INTO hookchain_runs (key, token, expires_at) VALUES ($1, 0, 0)
    ON CONFLICT (key) DO NOTHING RETURNING key";

const LOCK: &str = "SELECT checkpoint, ended, held_by, token, expires_at FROM hookchain_runs
    WHERE key = $1 FOR UPDATE";

const READ: &str =
    "SELECT checkpoint, ended, held_by, token, expires_at FROM hookchain_runs WHERE key = $1";

const WRITE: &str = "UPDATE hookchain_runs SET checkpoint = $2, ended = $3, held_by = $4,
    token = $5, expires_at = $6, updated_at = now() WHERE key = $1";

const DELETE: &str = "DELETE FROM hookchain_runs WHERE key = $1";

/// Keys in the order of their bytes (the `C` collation), whatever the database's collation.
const LIST: &str = "SELECT checkpoint, ended, held_by, token, expires_at, key FROM hookchain_runs
    ORDER BY key COLLATE \"C\"";

/// Tombstones past their retention and free keys holding nothing, swept as runs end.
const SWEEP: &str = "DELETE FROM hookchain_runs
    WHERE checkpoint IS NULL AND (held_by IS NULL OR expires_at <= $1)
    AND (ended IS NULL OR (ended::jsonb ->> 'keep_until')::bigint <= $1)";

/// Keeps checkpoints in Postgres, in the table `hookchain_runs` (`key text PRIMARY KEY,
/// checkpoint text, ended text, held_by text, token bigint, expires_at bigint, updated_at
/// timestamptz`: the checkpoint's JSON, the tombstone of a run that ended, the lease's holder,
/// fencing token and expiry in milliseconds since the Unix epoch), through a pool of
/// connections ([`deadpool_postgres::Pool`]). A database of an earlier version (the table
/// `hookchain_checkpoints`) has its rows copied over once, as free keys; the old table is left
/// for you to drop.
///
/// The checkpoint column is `text`, not `jsonb`: it keeps the checkpoint byte for byte as
/// [`Checkpoint::to_json`](hookchain_core::Checkpoint::to_json) wrote it (`jsonb` reorders keys, drops duplicates and refuses the
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
/// Every operation ([`SlotStore`]: the rules of [`Checkpointer`](hookchain_core::interrupt::Checkpointer) are the same in every store)
/// runs in one transaction that makes sure the key has a row (`INSERT … ON CONFLICT DO
/// NOTHING`), locks it (`SELECT … FOR UPDATE`), decides, and writes it back: of several
/// workers, on any number of machines, claiming one key at once, exactly one is granted it
/// (the others wait for its row lock, then find the key held), and a write whose lease is no
/// longer the key's is refused ([`CheckpointError::Claimed`], [`CheckpointError::LeaseLost`]).
/// Leases expire by the workers' clocks (the system's, or
/// [`with_clock`](PostgresCheckpointer::with_clock)): keep the machines' clocks in step (NTP)
/// to well within a lease's time to live.
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
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// // A libpq-style connection string, or a URL (`postgresql://agents@db/agents`).
/// let store = PostgresCheckpointer::connect("host=db user=agents dbname=agents").await?;
/// // Give it to the agents of every machine (`.checkpointer(store.clone(), …)`); list what
/// // it holds:
/// for stored in store.list().await? {
///     println!("{} held by {:?}, ended: {}", stored.key, stored.held_by, stored.ended);
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
    clock: Clock,
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
        let store = PostgresCheckpointer {
            pool,
            clock: Clock::system(),
        };
        store.create_table().await?;
        Ok(store)
    }

    /// The store reading the time from `clock` (leases, retention): the system's by default.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
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

impl SlotStore for PostgresCheckpointer {
    async fn transact<T, F>(&self, key: &str, operation: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static,
    {
        let what = "write";
        let error = store_error(what);
        let key = valid_key(key)?;
        let mut client = self.client(what).await?;
        let transaction = client.transaction().await.map_err(error)?;
        let prepare = |sql| transaction.prepare_cached(sql);
        let (ensure, lock) = (
            prepare(ENSURE).await.map_err(error)?,
            prepare(LOCK).await.map_err(error)?,
        );
        let inserted = transaction
            .query_opt(&ensure, &[&key])
            .await
            .map_err(error)?
            .is_some();
        let row = transaction.query_one(&lock, &[&key]).await.map_err(error)?;
        let slot = if inserted {
            None
        } else {
            Some(row_of(&row)?.into_slot()?)
        };
        let now = self.clock.now();
        let (updated, done) = operation(slot.clone(), now)?;
        match &updated {
            Some(slot) => {
                let row = Row::of(slot)?;
                let write = prepare(WRITE).await.map_err(error)?;
                transaction
                    .execute(
                        &write,
                        &[
                            &key,
                            &row.checkpoint,
                            &row.ended,
                            &row.held_by,
                            &row.token,
                            &row.expires_at,
                        ],
                    )
                    .await
                    .map_err(error)?;
            }
            None => {
                let delete = prepare(DELETE).await.map_err(error)?;
                transaction.execute(&delete, &[&key]).await.map_err(error)?;
            }
        }
        if updated.as_ref().is_some_and(|slot| slot.ended.is_some()) {
            let now = i64::try_from(millis(now)).unwrap_or(i64::MAX);
            let sweep = prepare(SWEEP).await.map_err(error)?;
            transaction.execute(&sweep, &[&now]).await.map_err(error)?;
        }
        transaction.commit().await.map_err(error)?;
        Ok(done)
    }

    async fn read(&self, key: &str) -> Result<(Option<Slot>, SystemTime), CheckpointError> {
        let what = "read";
        let key = valid_key(key)?;
        let (client, read) = self.prepared(READ, what).await?;
        let row = client
            .query_opt(&read, &[&key])
            .await
            .map_err(store_error(what))?;
        let slot = row.map(|row| row_of(&row)?.into_slot()).transpose()?;
        Ok((slot, self.clock.now()))
    }

    async fn slots(&self) -> Result<(Vec<(String, Slot)>, SystemTime), CheckpointError> {
        let what = "list";
        let (client, list) = self.prepared(LIST, what).await?;
        let rows = client.query(&list, &[]).await.map_err(store_error(what))?;
        let slots = rows
            .iter()
            .map(|row| {
                let key: String = row.try_get(5).map_err(store_error(what))?;
                Ok((key, row_of(row)?.into_slot()?))
            })
            .collect::<Result<_, CheckpointError>>()?;
        Ok((slots, self.clock.now()))
    }
}

/// The row's columns: checkpoint, ended, held_by, token, expires_at.
fn row_of(row: &tokio_postgres::Row) -> Result<Row, CheckpointError> {
    let error = store_error("read");
    Ok(Row {
        checkpoint: row.try_get(0).map_err(error)?,
        ended: row.try_get(1).map_err(error)?,
        held_by: row.try_get(2).map_err(error)?,
        token: row.try_get(3).map_err(error)?,
        expires_at: row.try_get(4).map_err(error)?,
    })
}
