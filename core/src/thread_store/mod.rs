//! Thread stores: where the [`Thread`](crate::Thread)s of conversations are kept between
//! requests, by [`ThreadId`](crate::ThreadId), each with a version so that two requests on one
//! thread never both append (optimistic concurrency; see [`ThreadStore`]).
//!
//! | store | where | feature |
//! |---|---|---|
//! | [`InMemoryThreadStore`] | this process | |
//! | [`FileThreadStore`] | JSON files, written atomically (one machine) | |
//! | `SqliteThreadStore` | the SQLite file of a `SqliteCheckpointer`, a table of its own | `sqlite` |
//! | `PostgresThreadStore` | the Postgres database (and pool) of a `PostgresCheckpointer`, a table of its own | `postgres` |
//!
//! As an object, for a store picked at run time: [`DynThreadStore`].
//!
//! A thread store keeps conversations; a [`Checkpointer`](crate::interrupt::Checkpointer)
//! keeps runs (pauses, runs in progress). A server wants both, in one database:
//! [`Agent::run_in_store`](crate::Agent::run_in_store) loads a thread, runs in it and saves it.
//!
//! # Example
//!
//! A request handler: the thread of the conversation is loaded (or created), the agent runs in
//! it, and it is saved with the version it was loaded at.
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::thread_store::{InMemoryThreadStore, ThreadStore};
//! use hookchain::ThreadId;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), hookchain::Error> {
//! let store = InMemoryThreadStore::new();
//! let agent = Agent::builder(ScriptedModel::new([
//!     ModelResponse::text("Hello!"),
//!     ModelResponse::text("Still here."),
//! ]))
//! .build()?;
//! let id = ThreadId::new("conversation-1");
//!
//! agent.run_in_store(&store, &id, "Hi").await?;
//! let output = agent.run_in_store(&store, &id, "Are you there?").await?;
//! assert_eq!(output.text().as_deref(), Some("Still here."));
//!
//! let stored = store.load::<()>(&id).await?.unwrap();
//! assert_eq!(stored.version, 2);
//! assert_eq!(stored.thread.messages().len(), 4);
//! # Ok(())
//! # }
//! ```

mod dyn_store;
mod encoded;
mod error;
mod file;
mod memory;
mod store;

pub use dyn_store::DynThreadStore;
pub use encoded::{EncodedThread, MAX_ID_LEN, MAX_THREAD_LEN, StoredThread, too_large, valid_id};
pub use error::ThreadStoreError;
pub use file::FileThreadStore;
pub use memory::InMemoryThreadStore;
pub use store::ThreadStore;
