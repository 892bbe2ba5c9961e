//! Serve [hookchain](https://docs.rs/hookchain) agents over HTTP, on
//! [axum](https://docs.rs/axum): runs streamed as server-sent events in the
//! [AG-UI](https://docs.ag-ui.com) protocol — what AG-UI's clients (`@ag-ui/client`,
//! CopilotKit) and the reference chat page of the `chat_server` example read — conversations
//! kept in a [`ThreadStore`](hookchain_core::thread_store::ThreadStore), pauses answered by a
//! follow-up request that resumes from the agent's checkpointer.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use hookchain::prelude::*;
//! use hookchain::thread_store::InMemoryThreadStore;
//! use hookchain_axum::AgentServer;
//!
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?;
//! let server = AgentServer::new(Arc::new(agent), InMemoryThreadStore::new());
//! let app = axum::Router::new().nest("/agent", server.router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! let shutdown = server.clone();
//! axum::serve(listener, app)
//!     .with_graceful_shutdown(async move {
//!         let _ = tokio::signal::ctrl_c().await;
//!         shutdown.shutdown(Duration::from_secs(30)).await;
//!     })
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! See [`AgentServer`] for the routes, what a disconnect and a shutdown do to a run, and the
//! errors; [`agui`] for how a run's events map to AG-UI's.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agui;
mod runs;
mod server;

pub use server::{
    AgentServer, AgentServerBuilder, DEFAULT_EVENTS_PER_RUN, DEFAULT_KEEP_ENDED, DEFAULT_MAX_BODY,
    DEFAULT_MAX_RUNNING, Problem, ShutdownReport,
};
