//! [`PostgresCheckpointer`]: checkpoints in Postgres, shared by workers on many machines; and
//! [`PostgresThreadStore`]: the threads of conversations, in the same database and pool.

mod checkpointer;
mod clocks;
mod connection;
mod runs;
mod threads;
mod tls;

use std::fmt;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use hookchain_core::interrupt::{CheckpointError, Clock};
use tokio_postgres::NoTls;
use tokio_postgres::config::SslMode;

use crate::store_error;
use clocks::Clocks;
use connection::{ConnectionString, SslModeAsked};
use runs::Runs;
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

/// Keeps checkpoints in Postgres, in the table `hookchain_runs` (`key text PRIMARY KEY,
/// checkpoint text, ended text, held_by text, token bigint, expires_at bigint, updated_at
/// timestamptz`: the checkpoint's JSON, the tombstone of a run that ended, the lease's holder,
/// fencing token and expiry in milliseconds since the Unix epoch by the database's clock),
/// through a pool of connections ([`deadpool_postgres::Pool`]). A database of an earlier
/// version (the table `hookchain_checkpoints`) has its rows copied over once, as free keys;
/// the old table is left for you to drop.
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
/// Every operation (the rules of [`Checkpointer`](hookchain_core::interrupt::Checkpointer),
/// the same in every store: [`Slot`](hookchain_core::interrupt::Slot)'s) runs in one
/// transaction that makes sure the key has a row (`INSERT … ON CONFLICT DO NOTHING`), locks it
/// (`SELECT … FOR UPDATE`), decides, and writes it back: of several workers, on any number of
/// machines, claiming one key at once, exactly one is granted it (the others wait for its row
/// lock, then find the key held), and a write whose lease is no longer the key's is refused
/// ([`CheckpointError::Claimed`], [`CheckpointError::LeaseLost`]).
///
/// # Whose clock
///
/// Leases, and tombstones' retention, are judged by the **database's clock**, not the
/// workers': the statement that locks the key's row also reads the database's time (`now()`,
/// the start of the transaction), and the rules decide at that time. A claim finds a lease
/// expired when its `expires_at` is at or before it; a claim, a renewal or a put of a step
/// sets `expires_at` to it plus the lease's time to live; a tombstone's times are it. So
/// workers whose clocks disagree, by any amount, agree on who holds a key: a worker whose clock
/// is an hour ahead does not take a live lease, and one an hour behind does not keep a key
/// past its lease.
///
/// The times the store hands back are in the **worker's clock** (the system's, or
/// [`with_clock`](PostgresCheckpointer::with_clock)'s), because the worker compares them with
/// its own. A lease's expiry (a granted claim's
/// [`Lease::expires_at`](hookchain_core::interrupt::Lease::expires_at), and what
/// [`renew`](hookchain_core::interrupt::Checkpointer::renew) returns) is the worker's time when
/// it asked, plus what was left of the lease by the database's clock when it decided (its time
/// to live); a busy key's `until` is translated alike. The worker reads its clock before
/// asking, so the expiry it gets comes, in real time, no later than the database's: a run
/// whose lease could not be renewed stops in time by its worker's clock, however far that
/// clock is off. What a key holds is handed back as stored: a tombstone's times are the
/// database's.
///
/// Workers of an earlier version of this store judged leases by their own clocks, into the
/// same column (milliseconds since the Unix epoch): while both versions share a database,
/// keep the machines' clocks in step with the database's (NTP).
///
/// Tests move the database's time as a store judges it through the store's clock: a clock
/// given with [`with_clock`](PostgresCheckpointer::with_clock) moves it by its *pace*, by how
/// far it has run ahead of real time since it was given (or fallen behind), never by its
/// offset. tokio's paused clock (`Clock::tokio` in a test that starts paused) stands still,
/// so the judged time does too, until `tokio::time::advance` moves both; a clock set an hour
/// off (`Clock::from_fn(|| SystemTime::now() + hour)`) keeps real time's pace and moves
/// nothing, which is how a test gives a worker a wrong clock. Without `with_clock`, the judged
/// time is the database's, exactly: give none outside tests (a given system clock would carry
/// its own steps, when it is set, into the judged time).
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
    runs: Runs,
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
            runs: Runs {
                pool,
                clocks: Clocks::system(),
            },
        };
        let client = store.runs.client("connect").await.map_err(tls::explained)?;
        store.create_table(client).await?;
        Ok(store)
    }

    /// The store with `clock` for the worker's clock (the system's by default): the clock the
    /// times it hands back are in (a lease's expiry, a busy key's). Leases and retention are
    /// judged by the database's clock, whatever this one reads; its pace (not its offset)
    /// moves the database's time as the store judges it, which is how a test on tokio's paused
    /// clock (`Clock::tokio`) moves leases with `tokio::time::advance`. See *Whose clock*
    /// above.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.runs.clocks = Clocks::given(clock);
        self
    }

    /// The pool of the store's connections.
    #[must_use]
    pub fn pool(&self) -> &Pool {
        &self.runs.pool
    }

    /// The threads of conversations, kept in the same database (the table
    /// `hookchain_threads`, created with the store's) through the same pool: see
    /// [`PostgresThreadStore`].
    #[must_use]
    pub fn threads(&self) -> PostgresThreadStore {
        PostgresThreadStore::new(self.runs.pool.clone())
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
            .field("pool", &self.runs.pool.status())
            .finish()
    }
}

/// The pool's manager: connections checked by a quick query-less test when taken from the pool.
fn manager_config() -> ManagerConfig {
    ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    }
}
