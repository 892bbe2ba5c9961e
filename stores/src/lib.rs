//! Checkpoint stores in databases for [hookchain](https://docs.rs/hookchain): where the
//! checkpoints of paused and running agents are kept when many workers share them.
//!
//! - [`SqliteCheckpointer`] (feature `sqlite`): one SQLite file (SQLite is compiled in, no
//!   system library needed), shared by the processes of one machine. SQLite's calls block:
//!   every one runs on tokio's blocking threads (`spawn_blocking`), never on the executor's.
//! - [`PostgresCheckpointer`] (feature `postgres`): a Postgres server shared by workers on
//!   many machines, through a pool of asynchronous connections (`tokio-postgres`,
//!   `deadpool-postgres`): nothing blocks.
//!
//! Both features are off by default. Through the facade, enable `hookchain`'s features of the
//! same names and use `hookchain::interrupt::SqliteCheckpointer` and
//! `hookchain::interrupt::PostgresCheckpointer`.
//!
//! # The rules every store follows
//!
//! Both implement [`Checkpointer`](hookchain_core::interrupt::Checkpointer) and follow its
//! rules (the test suite `tests/store_rules` of the repository checks them on each store):
//!
//! - **A claim is atomic, in one statement** (`UPDATE … WHERE key = ? AND (held_by IS NULL
//!   OR held_by = ?) RETURNING checkpoint`): of several workers, in any number of processes,
//!   claiming one free key at once, exactly one gets the checkpoint, so a paused run is
//!   resumed once.
//! - **Writes are fenced in the database**: a `put` is an upsert that replaces a row only if
//!   it is free or held by the writer (`INSERT … ON CONFLICT (key) DO UPDATE … WHERE held_by IS
//!   NULL OR held_by = ?`), a `delete` checks and deletes under a lock; a worker that lost its
//!   key gets [`CheckpointError::Claimed`](hookchain_core::interrupt::CheckpointError::Claimed)
//!   naming the worker that holds it, and never overwrites the run it took over.
//! - **Errors are values**: a database that fails is
//!   [`CheckpointError::Store`](hookchain_core::interrupt::CheckpointError::Store) (what the
//!   store was doing, and the driver's error as its source); a row that is not a checkpoint is
//!   [`CheckpointError::Decode`](hookchain_core::interrupt::CheckpointError::Decode). A store
//!   never panics on what it reads.
//! - Keys are kept as text and listed in the order of their bytes, like the other stores.
//!
//! Both keep one table, `hookchain_checkpoints` (`key`, `checkpoint`, `held_by`,
//! `updated_at`), created when the store is opened if it is missing. The checkpoint is stored
//! as the text [`Checkpoint::to_json`](hookchain_core::Checkpoint::to_json) wrote.
//!
//! # Example
//!
//! Code that resumes stored runs is written against the trait, whichever store it is given:
//! `SqliteCheckpointer::open("checkpoints.db")?` on one machine,
//! `PostgresCheckpointer::connect("host=db user=agents dbname=agents").await?` for many.
//!
//! ```
//! use hookchain::interrupt::Checkpointer;
//! use hookchain::prelude::*;
//! use hookchain::{RunOutput, chain, hook};
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
//! /// Resumes the paused run under `key` with `answer`, if `worker` is the one that gets it
//! /// (`None`: another worker did, or there is no such run).
//! async fn resume_if_mine(
//!     store: &impl Checkpointer,
//!     agent: &Agent<ScriptedModel, (ask_first,)>,
//!     key: &str,
//!     worker: &str,
//!     answer: serde_json::Value,
//! ) -> Result<Option<RunOutput>, Box<dyn std::error::Error>> {
//!     let Some(checkpoint) = store.claim(key, worker).await? else {
//!         return Ok(None);
//!     };
//!     let answers: Vec<_> = checkpoint.pending().map(|id| (id.clone(), answer.clone())).collect();
//!     let output = agent.resume(checkpoint, answers).await?;
//!     store.delete(key, worker).await?;
//!     Ok(Some(output))
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let store = hookchain::interrupt::InMemoryCheckpointer::new();
//! # let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
//! #     .chain(chain![ask_first])
//! #     .build();
//! # let paused = agent.run("start").await?;
//! # store.put("run-1", &paused.checkpoint.unwrap(), "api").await?;
//! # let done = resume_if_mine(&store, &agent, "run-1", "w", json!("go")).await?;
//! # assert_eq!(done.unwrap().text().as_deref(), Some("done"));
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
pub use postgres::PostgresCheckpointer;
#[cfg(feature = "sqlite")]
#[doc(inline)]
pub use sqlite::SqliteCheckpointer;

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

/// A fenced write changed nothing, yet nobody else holds the key: cannot happen while the
/// transaction holds the lock, and is reported rather than taken for a success.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug)]
struct Unchanged;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl std::fmt::Display for Unchanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the checkpoint was not written, and no other worker holds its key")
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl std::error::Error for Unchanged {}
