//! Checkpoint stores in databases for [hookchain](https://docs.rs/hookchain): where the
//! checkpoints of paused and running agents are kept when many workers share them.
//!
//! - [`SqliteCheckpointer`] (feature `sqlite`): one SQLite file (SQLite is compiled in, no
//!   system library needed), shared by the processes of one machine. SQLite's calls block:
//!   every one runs on tokio's blocking threads (`spawn_blocking`), never on the executor's.
//! - [`PostgresCheckpointer`] (feature `postgres`): a Postgres server shared by workers on
//!   many machines, through a pool of asynchronous connections (`tokio-postgres`,
//!   `deadpool-postgres`): nothing blocks. Over TLS by default (rustls: no OpenSSL), the
//!   server's certificate checked against the public roots or the CA that the connection
//!   string's `sslrootcert` names; plain text only when asked for by name
//!   (`connect_insecure`), to a server on this machine.
//!
//! Both features are off by default. Through the facade, enable `hookchain`'s features of the
//! same names and use `hookchain::interrupt::SqliteCheckpointer` and
//! `hookchain::interrupt::PostgresCheckpointer`.
//!
//! # The rules every store follows
//!
//! Both follow the rules of [`Checkpointer`](hookchain_core::interrupt::Checkpointer) the same
//! way as the stores of the core, by applying [`Slot`](hookchain_core::interrupt::Slot)'s
//! operations to the rows they lock (the test suite `tests/store_rules` of the repository
//! checks them on each store):
//!
//! - **Every operation is one transaction** that reads the key's row under a lock (SQLite: a
//!   transaction begun `IMMEDIATE`; Postgres: `SELECT … FOR UPDATE`), applies the rule and
//!   writes the row back: of several workers, in any number of processes or machines, claiming
//!   one key at once, exactly one is granted its lease, so a paused run is resumed once.
//! - **Writes are fenced by the lease's token**: a worker whose lease expired and was taken
//!   over gets [`CheckpointError::Claimed`](hookchain_core::interrupt::CheckpointError::Claimed)
//!   or [`LeaseLost`](hookchain_core::interrupt::CheckpointError::LeaseLost), and never
//!   overwrites the run another worker took over. A dead worker's lease expires: nothing needs
//!   an operator.
//! - **One clock judges leases** (and tombstones' retention), whatever the workers' say:
//!
//!   | store | whose clock | the times it hands back (a lease's expiry) |
//!   |---|---|---|
//!   | SQLite | the machine's, which its processes share (the system's, or the store's `with_clock`) | in that clock |
//!   | Postgres | the database's (`now()`, read in the transaction that decides) | translated into the worker's clock |
//!
//!   SQLite is one machine, so one clock. Postgres's workers are on many machines, whose clocks
//!   may disagree by more than a lease: judged by the database's clock, a worker whose clock
//!   is an hour ahead still cannot take a live lease, and each worker gets its lease's expiry
//!   in its own clock, so a run whose lease could not be renewed stops in time by it.
//! - **Errors are values**: a database that fails is
//!   [`CheckpointError::Store`](hookchain_core::interrupt::CheckpointError::Store) (what the
//!   store was doing, and the driver's error as its source); a row that is not a checkpoint is
//!   [`CheckpointError::Decode`](hookchain_core::interrupt::CheckpointError::Decode). A store
//!   never panics on what it reads.
//! - Keys are kept as text and listed in the order of their bytes, like the other stores;
//!   tombstones past their retention are swept as runs end.
//!
//! Both keep one table, `hookchain_runs` (`key`, `checkpoint`, `ended`, `held_by`, `token`,
//! `expires_at`, `updated_at`), created when the store is opened if it is missing (the rows
//! of an earlier version's `hookchain_checkpoints` copied over once). The checkpoint is stored
//! as the text [`Checkpoint::to_json`](hookchain_core::Checkpoint::to_json) wrote.
//!
//! # Threads, in the same database
//!
//! Each store also keeps the threads of conversations, by id and version (see
//! [`ThreadStore`](hookchain_core::thread_store::ThreadStore)): `SqliteCheckpointer::threads`
//! and `PostgresCheckpointer::threads` give a thread store on the same file or pool, in a table
//! of its own, `hookchain_threads` (`id`, `version`, `thread`, `updated_at`, `owner`, with an
//! index on `(owner, id)` that `list_owned` reads), created with `hookchain_runs` (the column
//! and the index added to the table of an earlier version). A save writes only at the version
//! the thread was loaded at, in one transaction (SQLite) or one statement (Postgres): of two
//! requests saving one thread, one wins and the other gets
//! [`ThreadStoreError::Conflict`](hookchain_core::thread_store::ThreadStoreError::Conflict).
//!
//! # Example
//!
//! An agent given a store keeps its runs there; any worker resumes what the store holds, once:
//! `SqliteCheckpointer::open("checkpoints.db")?` on one machine,
//! `PostgresCheckpointer::connect("host=db user=agents dbname=agents").await?` for many.
//!
//! ```
//! use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer, Record};
//! use hookchain::prelude::*;
//! use hookchain::{Durability, ResumeFrom, RunOutput, chain, hook};
//! use serde_json::json;
//!
//! /// Asks before every model call.
//! #[hook(before_model)]
//! fn ask_first(cx: &mut Context) -> Flow {
//!     match cx.resume_value() {
//!         Some(_) => Flow::Continue,
//!         None => Flow::interrupt(json!("go?")),
//!     }
//! }
//!
//! /// Answers the pause stored under `key` with `answer`, for every interrupt it waits on: the
//! /// run goes on once, whoever else answers it (refused: nothing runs twice).
//! async fn approve(
//!     agent: &Agent<ScriptedModel, (ask_first,)>,
//!     store: &impl Checkpointer,
//!     key: &str,
//!     answer: serde_json::Value,
//! ) -> Result<RunOutput, Box<dyn std::error::Error>> {
//!     let Some(Record::Checkpoint(paused)) = store.get(key).await? else {
//!         return Err(format!("no run waits under {key}").into());
//!     };
//!     let answers: Vec<_> = paused.pending().map(|id| (id.clone(), answer.clone())).collect();
//!     Ok(agent.resume(ResumeFrom::stored(key), answers).await?)
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = std::sync::Arc::new(InMemoryCheckpointer::new()); // or SQLite, or Postgres
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
//!     .chain(chain![ask_first])
//!     .checkpointer(store.clone(), Durability::Pauses)
//!     .build()?;
//! let paused = agent.run("start").await?;
//! let key = paused.checkpoint.unwrap().run_id().to_owned();
//! let done = approve(&agent, &store, &key, json!("go")).await?;
//! assert_eq!(done.text().as_deref(), Some("done"));
//! // The run's tombstone is under its key: a second approval runs nothing.
//! assert!(approve(&agent, &store, &key, json!("go")).await.is_err());
//! # Ok(())
//! # }
//! ```
//!
#![cfg_attr(
    feature = "sqlite",
    doc = "[`SqliteCheckpointer`]: crate::sqlite::SqliteCheckpointer"
)]
#![cfg_attr(
    not(feature = "sqlite"),
    doc = "[`SqliteCheckpointer`]: https://docs.rs/hookchain-stores/latest/hookchain_stores/sqlite/struct.SqliteCheckpointer.html"
)]
#![cfg_attr(
    feature = "postgres",
    doc = "[`PostgresCheckpointer`]: crate::postgres::PostgresCheckpointer"
)]
#![cfg_attr(
    not(feature = "postgres"),
    doc = "[`PostgresCheckpointer`]: https://docs.rs/hookchain-stores/latest/hookchain_stores/postgres/struct.PostgresCheckpointer.html"
)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub mod sqlite;

#[cfg(feature = "postgres")]
#[doc(inline)]
pub use postgres::{PostgresCheckpointer, PostgresThreadStore};
#[cfg(feature = "sqlite")]
#[doc(inline)]
pub use sqlite::{SqliteCheckpointer, SqliteThreadStore};

/// The [`CheckpointError::Store`](hookchain_core::interrupt::CheckpointError::Store) of a
/// failed database call; `what` says what the store was doing.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn store_error<E: Into<hookchain_core::BoxError>>(
    what: &'static str,
) -> impl Fn(E) -> hookchain_core::interrupt::CheckpointError + Copy {
    move |source| hookchain_core::interrupt::CheckpointError::Store {
        what,
        source: source.into(),
    }
}

/// A failure of the database, as the error of the store that met it: a checkpointer's or a
/// thread store's (which share the database and its connections).
#[cfg(feature = "sqlite")]
trait StoreFailure: Sized {
    /// The error of a failed database call; `what` says what the store was doing.
    fn store(what: &'static str, source: hookchain_core::BoxError) -> Self;

    /// Whether this is the database's failure (its connection may be broken), not a refusal.
    fn is_store(&self) -> bool;
}

#[cfg(feature = "sqlite")]
impl StoreFailure for hookchain_core::interrupt::CheckpointError {
    fn store(what: &'static str, source: hookchain_core::BoxError) -> Self {
        hookchain_core::interrupt::CheckpointError::Store { what, source }
    }

    fn is_store(&self) -> bool {
        matches!(
            self,
            hookchain_core::interrupt::CheckpointError::Store { .. }
        )
    }
}

#[cfg(feature = "sqlite")]
impl StoreFailure for hookchain_core::thread_store::ThreadStoreError {
    fn store(what: &'static str, source: hookchain_core::BoxError) -> Self {
        hookchain_core::thread_store::ThreadStoreError::Store { what, source }
    }

    fn is_store(&self) -> bool {
        matches!(
            self,
            hookchain_core::thread_store::ThreadStoreError::Store { .. }
        )
    }
}

/// The [`ThreadStoreError::Store`](hookchain_core::thread_store::ThreadStoreError::Store) of a
/// failed database call; `what` says what the store was doing.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn thread_store_error<E: Into<hookchain_core::BoxError>>(
    what: &'static str,
) -> impl Fn(E) -> hookchain_core::thread_store::ThreadStoreError + Copy {
    move |source| hookchain_core::thread_store::ThreadStoreError::Store {
        what,
        source: source.into(),
    }
}

/// One row of the table `hookchain_runs`, as both stores keep it: the checkpoint's JSON, the
/// tombstone's JSON, the lease's holder, token and expiry (milliseconds since the Unix epoch).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
struct Row {
    checkpoint: Option<String>,
    ended: Option<String>,
    held_by: Option<String>,
    token: i64,
    expires_at: i64,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Row {
    /// The slot the row holds: a tombstone that does not decode is [`CheckpointError::Decode`]
    /// (a checkpoint is decoded only when handed out, so a corrupt one can still be claimed
    /// and ended).
    fn into_slot(
        self,
    ) -> Result<hookchain_core::interrupt::Slot, hookchain_core::interrupt::CheckpointError> {
        let ended = self
            .ended
            .map(|json| serde_json::from_str(&json))
            .transpose()
            .map_err(hookchain_core::interrupt::CheckpointError::Decode)?;
        Ok(hookchain_core::interrupt::Slot::new(
            self.checkpoint,
            ended,
            self.held_by,
            u64::try_from(self.token).unwrap_or(0),
            u64::try_from(self.expires_at).unwrap_or(0),
        ))
    }

    /// The row that keeps `slot`.
    fn of(
        slot: &hookchain_core::interrupt::Slot,
    ) -> Result<Row, hookchain_core::interrupt::CheckpointError> {
        let ended = slot
            .ended
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(hookchain_core::interrupt::CheckpointError::Encode)?;
        Ok(Row {
            checkpoint: slot.checkpoint.clone(),
            ended,
            held_by: slot.held_by.clone(),
            token: i64::try_from(slot.token).unwrap_or(i64::MAX),
            expires_at: i64::try_from(slot.expires_at).unwrap_or(i64::MAX),
        })
    }
}
