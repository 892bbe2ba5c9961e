//! [`PostgresCheckpointer`]: checkpoints in Postgres, shared by workers on many machines; and
//! [`PostgresThreadStore`]: the threads of conversations, in the same database and pool.

mod connection;
mod threads;
mod tls;

use std::fmt;
use std::time::SystemTime;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use hookchain_core::interrupt::{CheckpointError, Clock, Slot, SlotStore, millis, valid_key};
use tokio_postgres::config::SslMode;
use tokio_postgres::{NoTls, Statement};

use crate::{Row, store_error};
use connection::{ConnectionString, SslModeAsked};
pub use threads::PostgresThreadStore;

/// The crates of the pool and the client, for building a pool of your own (sizes, timeouts,
/// a TLS of your own) to give [`PostgresCheckpointer::from_pool`].
pub use {deadpool_postgres, tokio_postgres};

/// Serializes the creation of the table among workers starting at once (an advisory lock,
/// held until the creating transaction ends): `CREATE TABLE IF NOT EXISTS` alone may fail in
/// all but one of several sessions running it together.
const CREATE_LOCK: i64 = 0x686f_6f6b_6368_6b70; // "hookchkp"

/// Whether the schema is this version's: both tables, and the index of the threads' owners
/// (which a database of an earlier version lacks, with its column). Then nothing is created,
/// nor locked: a role without the right to create tables works with a schema made beforehand.
const EXISTS: &str = "SELECT to_regclass('hookchain_runs') IS NOT NULL
    AND to_regclass('hookchain_threads') IS NOT NULL
    AND to_regclass('hookchain_threads_owner') IS NOT NULL";

/// The tables (the runs; the threads of [`PostgresThreadStore`], their ids in the order of
/// their bytes, which the primary key's index keeps for listing); the threads' column `owner`
/// and the index of an owner's threads, in the same order, added as to a database of an
/// earlier version (one definition for both: on a new, empty table, neither takes time); and
/// the rows of an earlier version's table of runs copied over once, as free keys.
///
/// `owner` is written by every save from the thread's JSON (see [`PostgresThreadStore`]'s
/// *Owners* for why it is no generated column). The rows of a table of an earlier version
/// keep it `NULL`, which is right: their threads were saved before threads recorded owners.
/// Adding the column rewrites nothing (no default); the index is built once, blocking writes
/// to the threads while it is (a database with many threads: create it beforehand, `CREATE
/// INDEX CONCURRENTLY`, and this finds it).
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS hookchain_threads (
    id text COLLATE \"C\" PRIMARY KEY,
    version bigint NOT NULL,
    thread text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE hookchain_threads ADD COLUMN IF NOT EXISTS owner text COLLATE \"C\";
CREATE INDEX IF NOT EXISTS hookchain_threads_owner ON hookchain_threads (owner, id);
CREATE TABLE IF NOT EXISTS hookchain_runs (
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
/// The table is created when the store is made, if it is missing, with the table of its
/// thread store ([`threads`](PostgresCheckpointer::threads): `hookchain_threads`, and its index
/// of owners, added to the table of an earlier version), under an advisory lock, so workers
/// starting at once do not trip over each other; a role without the right to create tables
/// works with both tables and the index created beforehand. They live in the first
/// schema of the connection's `search_path` (`options=-csearch_path=agents` in the connection
/// string chooses another).
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
/// # TLS
///
/// [`connect`](PostgresCheckpointer::connect) connects over TLS, always, and checks the
/// server's certificate: signed by a root certificate the store trusts, and for the host the
/// connection string names (`host=db.internal` must be a name of the certificate;
/// `host=10.0.0.5`, an address of it). The store trusts Mozilla's root certificates (the crate
/// `webpki-roots`, built in: the same on every machine, no system store read) or, when the
/// string names a PEM file with libpq's `sslrootcert=/path/to/ca.pem`, the certificates of that
/// file only: the usual case of a server whose certificate comes from a CA of your own. A
/// server that offers no TLS, or whose certificate does not check, is refused with
/// [`CheckpointError::Store`] (`what`: `"connect"`, the handshake's error as its source): the
/// store never falls back to plain text. TLS is rustls's (with `ring`: no OpenSSL, no system
/// library), 1.2 or 1.3.
///
/// libpq's `sslmode` in the string is read so that no value of it weakens this:
///
/// | `sslmode` | [`connect`](PostgresCheckpointer::connect) | [`connect_insecure`](PostgresCheckpointer::connect_insecure) |
/// |---|---|---|
/// | not given | TLS, the certificate and the host checked | plain text |
/// | `verify-full` | the same | refused: it asks for TLS |
/// | `verify-ca`, `require` | the same (stricter than libpq, which checks no host, or nothing) | refused: they ask for TLS |
/// | `prefer`, `allow` | the same (libpq would fall back to plain text) | plain text |
/// | `disable` | refused, naming `connect_insecure` | plain text |
///
/// `sslrootcert=system` (libpq's system store) is refused: leave `sslrootcert` out for the
/// public roots. libpq's default file `~/.postgresql/root.crt` is not read: name it with
/// `sslrootcert` if it is the one. Client certificates (`sslcert`, `sslkey`) are not read: for them, or any TLS
/// of your own, build the pool yourself (a `MakeTlsConnect` of `tokio-postgres-rustls` or
/// `postgres-native-tls`) and give it to [`from_pool`](PostgresCheckpointer::from_pool).
///
/// # Without TLS
///
/// [`connect_insecure`](PostgresCheckpointer::connect_insecure) connects in plain text, to a
/// server on this machine only: tests, a development database, a Unix socket. Its host must be
/// `localhost`, a loopback address or a socket's directory; any other host is refused, even on
/// a network you trust, because a plain text connection shows the checkpoints (conversations,
/// tool results) and the password to anyone on the way, and lets them change what the store
/// reads. To go without TLS to another machine anyway (a sidecar's address, a private network),
/// build the pool yourself with `NoTls` (`hookchain::interrupt::postgres::tokio_postgres::NoTls`)
/// and give it to [`from_pool`](PostgresCheckpointer::from_pool): a choice written in your code,
/// not in a connection string that may be copied elsewhere.
///
/// No error of the store, nor its `Debug`, holds the password of the connection string (an
/// error may name a host, or the `sslrootcert` file).
///
/// # Blocking
///
/// None: the store is asynchronous through and through (`tokio-postgres`), and needs a tokio
/// runtime (the pool's connections run in tokio tasks; a `sslrootcert` file is read on tokio's
/// blocking threads).
///
/// A row whose checkpoint is not one reads as [`CheckpointError::Decode`]; a failed
/// connection or query is [`CheckpointError::Store`].
///
/// # Example
///
/// ```no_run
/// use hookchain::interrupt::{Checkpointer, PostgresCheckpointer};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// // A libpq-style connection string, or a URL
/// // (`postgresql://agents@db.internal/agents?sslrootcert=/etc/agents/db-ca.pem`). TLS, the
/// // server's certificate checked against the CA of this file (without `sslrootcert`, against
/// // the public roots).
/// let store = PostgresCheckpointer::connect(
///     "host=db.internal user=agents dbname=agents sslrootcert=/etc/agents/db-ca.pem",
/// )
/// .await?;
/// // Give it to the agents of every machine (`.checkpointer(store.clone(), …)`); list what
/// // it holds:
/// for stored in store.list().await? {
///     println!("{} held by {:?}, ended: {}", stored.key, stored.held_by, stored.ended);
/// }
/// # Ok(())
/// # }
/// ```
///
/// With a pool of your own (its size, timeouts), connecting as
/// [`connect`](PostgresCheckpointer::connect) does:
///
/// ```no_run
/// use hookchain::interrupt::PostgresCheckpointer;
/// use hookchain::interrupt::postgres::deadpool_postgres::Pool;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let manager = PostgresCheckpointer::manager("host=db.internal user=agents dbname=agents").await?;
/// let pool = Pool::builder(manager).max_size(4).build()?;
/// let store = PostgresCheckpointer::from_pool(pool).await?;
/// # Ok(())
/// # }
/// ```
///
/// A test's own server, on this machine:
///
/// ```no_run
/// use hookchain::interrupt::PostgresCheckpointer;
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let store = PostgresCheckpointer::connect_insecure("host=127.0.0.1 port=5432 user=postgres").await?;
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
    /// Connects over TLS to the server that `config` names (a libpq-style connection string,
    /// `host=… port=… user=… password=… dbname=…`, or a `postgresql://` URL), with a pool of
    /// connections of deadpool's default size, and creates the table if it is missing. The
    /// server's certificate is checked against Mozilla's root certificates, or those of the
    /// PEM file that `sslrootcert=…` names: see *TLS* above, and the table of what `sslmode`
    /// does.
    ///
    /// Fails with [`CheckpointError::Store`] if the string does not parse or asks for plain
    /// text (`sslmode=disable`), if its `sslrootcert` file cannot be read, if its host is a
    /// Unix socket (no TLS there: [`connect_insecure`](Self::connect_insecure)), or if the
    /// server cannot be reached, offers no TLS, shows a certificate that does not check, or
    /// refuses the login (`what`: `"connect"`). A `connect_timeout=…` in the string bounds the
    /// wait for an unreachable server.
    pub async fn connect(config: &str) -> Result<Self, CheckpointError> {
        let manager = Self::manager(config).await?;
        Self::from_manager(manager).await
    }

    /// Connects in plain text, without TLS, to the server on this machine that `config` names
    /// (its hosts `localhost`, loopback addresses or Unix sockets), with a pool of deadpool's
    /// default size, and creates the table if it is missing. For tests and development: see
    /// *Without TLS* above.
    ///
    /// Fails with [`CheckpointError::Store`] if the string does not parse, names a host of
    /// another machine, or asks for TLS (`sslmode=require`, `verify-ca`, `verify-full`, or a
    /// `sslrootcert`: use [`connect`](Self::connect)); or if the server cannot be reached or
    /// refuses the login.
    pub async fn connect_insecure(config: &str) -> Result<Self, CheckpointError> {
        let refused = |message: String| CheckpointError::Store {
            what: "connect without TLS",
            source: message.into(),
        };
        let ConnectionString {
            mut config,
            ssl_mode,
            root_certificates,
        } = ConnectionString::parse(config)?;
        if let Some(
            mode @ (SslModeAsked::Require | SslModeAsked::VerifyCa | SslModeAsked::VerifyFull),
        ) = ssl_mode
        {
            return Err(refused(format!(
                "the connection string asks for TLS (`sslmode={}`): \
                 `PostgresCheckpointer::connect` connects over TLS",
                mode.name()
            )));
        }
        if root_certificates.is_some() {
            return Err(refused(
                "the connection string names root certificates (`sslrootcert`), which only a \
                 TLS connection checks: `PostgresCheckpointer::connect` connects over TLS"
                    .to_owned(),
            ));
        }
        if let Some(host) = connection::remote_host(&config) {
            return Err(refused(format!(
                "`connect_insecure` connects only to this machine (localhost, a loopback \
                 address, a Unix socket), not to `{host}`: connect over TLS with \
                 `PostgresCheckpointer::connect`, or give `from_pool` a pool of your own"
            )));
        }
        config.ssl_mode(SslMode::Disable);
        Self::from_manager(Manager::from_config(config, NoTls, manager_config())).await
    }

    /// The pool's manager that [`connect`](Self::connect) builds for `config`: connections
    /// over TLS, the server's certificate checked (see *TLS* above), to build a pool of your
    /// own size and timeouts (`Pool::builder(manager)`) for [`from_pool`](Self::from_pool).
    /// Connects to nothing yet.
    ///
    /// Fails with [`CheckpointError::Store`] if the string does not parse or asks for plain
    /// text (`sslmode=disable`), if its `sslrootcert` file cannot be read, or if its host is a
    /// Unix socket.
    pub async fn manager(config: &str) -> Result<Manager, CheckpointError> {
        let refused = |message: String| CheckpointError::Store {
            what: "connect",
            source: message.into(),
        };
        let ConnectionString {
            mut config,
            ssl_mode,
            root_certificates,
        } = ConnectionString::parse(config)?;
        if ssl_mode == Some(SslModeAsked::Disable) {
            return Err(refused(
                "the connection string asks for plain text (`sslmode=disable`), which \
                 `PostgresCheckpointer::connect` does not do: \
                 `PostgresCheckpointer::connect_insecure` connects without TLS, to a server on \
                 this machine"
                    .to_owned(),
            ));
        }
        if let Some(socket) = connection::unix_socket(&config) {
            return Err(refused(format!(
                "`{socket}` is a Unix socket, which carries no TLS: \
                 `PostgresCheckpointer::connect_insecure` connects through one"
            )));
        }
        // tokio-postgres's `Require`: TLS or no connection (its default, `Prefer`, falls back to
        // plain text); the certificate is checked by the connector's roots and host name.
        config.ssl_mode(SslMode::Require);
        let tls = tls::connector(root_certificates).await?;
        Ok(Manager::from_config(config, tls, manager_config()))
    }

    /// A store on a pool of deadpool's default size, of `manager`'s connections.
    async fn from_manager(manager: Manager) -> Result<Self, CheckpointError> {
        let pool = Pool::builder(manager)
            .build()
            .map_err(store_error("build the pool"))?;
        Self::from_pool(pool).await
    }

    /// A store on the connections of `pool`, whatever their TLS (the store does not look);
    /// creates the table if it is missing. [`manager`](Self::manager) makes the connections
    /// [`connect`](Self::connect) makes, for a pool of your own.
    ///
    /// Fails with [`CheckpointError::Store`] if no connection can be had (`what`:
    /// `"connect"`), or the table is missing and cannot be created.
    pub async fn from_pool(pool: Pool) -> Result<Self, CheckpointError> {
        let store = PostgresCheckpointer {
            pool,
            clock: Clock::system(),
        };
        let client = store.client("connect").await.map_err(tls::explained)?;
        store.create_table(client).await?;
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

    /// The threads of conversations, kept in the same database (the table
    /// `hookchain_threads`, created with the store's) through the same pool: see
    /// [`PostgresThreadStore`].
    #[must_use]
    pub fn threads(&self) -> PostgresThreadStore {
        PostgresThreadStore::new(self.pool.clone())
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

    async fn create_table(&self, mut client: Object) -> Result<(), CheckpointError> {
        let what = "create the table";
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

/// The pool's manager: connections checked by a quick query-less test when taken from the pool.
fn manager_config() -> ManagerConfig {
    ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    }
}
