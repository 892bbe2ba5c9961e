//! # hookchain
//!
//! Middleware for LLM agents, composed statically and checked by the compiler.
//!
//! An agent run calls a model in a loop, runs the tools the model asks for, and stops when the
//! model answers without calling tools. Middleware hook into that loop — before and after the
//! run, before and after every model call, and around every model and tool call — to retry,
//! cache, redact, limit, approve or trace. In hookchain a chain of middleware is one concrete
//! type: no `Box<dyn>`, no boxed futures, no allocation per call, and hooks a middleware does not
//! implement cost nothing.
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::{chain, hook, middleware};
//!
//! /// A function is a middleware with one hook.
//! #[hook(before_model, phase = input)]
//! fn stamp(request: &mut ModelRequest) {
//!     request.system_prompt = Some("Be brief.".into());
//! }
//!
//! /// A type with `#[hook]` methods is a middleware with several; its fields configure it and
//! /// its state is created afresh for every run.
//! struct Budget {
//!     max_calls: u32,
//! }
//!
//! #[middleware(state = u32)]
//! impl Budget {
//!     #[hook(before_model, jumps = [end])]
//!     fn check(&self, calls: &mut u32) -> Flow {
//!         *calls += 1;
//!         if *calls > self.max_calls { Flow::end() } else { Flow::Continue }
//!     }
//!
//!     #[hook(after_agent)]
//!     fn report(&self, cx: &mut Context, calls: &mut u32) {
//!         assert_eq!(*calls as usize, cx.step());
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
//! let agent = Agent::builder(model)
//!     .chain(chain![stamp, Budget { max_calls: 5 }])
//!     .build()?;
//! let output = agent.run("Hi").await?;
//! assert_eq!(output.text().as_deref(), Some("Hello!"));
//! # Ok::<(), hookchain::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Where to read on
//!
//! - [`Middleware`]: the six hooks, the order they run in, phases, state, and how to implement
//!   one by hand.
//! - [`macro@hook`], [`macro@middleware`], [`chain!`]: the DSL — accepted signatures, options,
//!   what each expands to, and the checks the compiler makes.
//! - [`Agent`]: the agent loop; [`Flow`] and [`Jump`]: what sequential hooks return.
//! - [`Tool`], [`FnTool`], [`ToolRegistry`]: tools with JSON schemas; [`ScriptedModel`]: the
//!   offline model for tests and examples.
//! - [`RunContext`]: typed values (a database handle, a tenant id, request metadata) given to a
//!   run with [`Agent::with_context`], which every hook and tool reads.
//! - [`tool::ToolExecution`]: the tool calls of a step polled together in the run's task (the
//!   default), or each in a tokio task of its own (feature `tokio`) for tools that block.
//! - [`chain::Description`]: `chain.describe()` lists, per hook, the order the middleware run in.
//! - `hookchain::mcp` (feature `mcp`): the tools of MCP servers, stdio or streamable HTTP, as
//!   [`Tool`]s (the crate `hookchain-mcp`); with `mcp-serve`, the other way: an agent's tools
//!   served as an MCP server (`McpToolServer`), each call through the agent's chain.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use hookchain_core::*;
pub use hookchain_macros::{chain, hook, middleware, tool};

/// Real models: HTTP clients for model providers (features `openai`, `anthropic`, `gemini`,
/// `bedrock`).
///
/// Each provider is a module behind the cargo feature of the same name, off by default so
/// that programs without one build no HTTP stack:
///
/// ```toml
/// hookchain = { version = "0.1", features = ["openai"] }
/// ```
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "openai",
        feature = "anthropic",
        feature = "gemini",
        feature = "bedrock"
    )))
)]
pub mod providers {
    #[cfg(feature = "anthropic")]
    #[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
    pub use hookchain_providers::anthropic;
    #[cfg(feature = "bedrock")]
    #[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
    pub use hookchain_providers::bedrock;
    #[cfg(feature = "gemini")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gemini")))]
    pub use hookchain_providers::gemini;
    #[cfg(feature = "openai")]
    #[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
    pub use hookchain_providers::openai;
    #[cfg(feature = "openai")]
    #[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
    pub use hookchain_providers::responses;
    pub use hookchain_providers::{ApiError, BuildError};
}

pub mod interrupt {
    //! Interrupts: a hook or a tool pauses the run to ask for outside input (an approval, an
    //! answer), and the run resumes later, in this process or another, from a [`Checkpoint`].
    //!
    //! Everything of the core's [`interrupt`](hookchain_core::interrupt) module (whose docs, in
    //! the crate `hookchain-core`, tell the whole story: how a run pauses, how it resumes, what a
    //! checkpoint holds), and the checkpoint stores in databases.
    //! A [`Checkpointer`] keeps checkpoints by key, shared by the workers of a deployment:
    //!
    //! | store | where | feature |
    //! |---|---|---|
    //! | [`InMemoryCheckpointer`] | this process | |
    //! | [`FileCheckpointer`] | JSON files, written atomically (one machine) | |
    //! | `SqliteCheckpointer` | one SQLite file shared by the processes of a machine | `sqlite` |
    //! | `PostgresCheckpointer` | a Postgres server shared by many machines, over TLS | `postgres` |
    //!
    //! The database stores come from the crate `hookchain-stores`, behind the features of the
    //! same names, off by default so that programs without them build no database driver:
    //!
    //! ```toml
    //! hookchain = { version = "0.1", features = ["sqlite"] }
    //! ```
    //!
    //! A checkpoint handed to a client is signed with a `SigningKey` (HMAC-SHA256, feature
    //! `signing`, on by default) and read back only unchanged: see *A checkpoint is trusted
    //! input* on [`Checkpoint`].

    pub use hookchain_core::interrupt::*;
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use hookchain_stores::PostgresCheckpointer;
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use hookchain_stores::SqliteCheckpointer;
    /// The crates of [`PostgresCheckpointer`]'s pool and client (feature `postgres`), to build
    /// a pool of your own for [`PostgresCheckpointer::from_pool`].
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub mod postgres {
        pub use hookchain_stores::postgres::{deadpool_postgres, tokio_postgres};
    }
}

pub mod thread_store {
    //! Thread stores: where the [`Thread`](crate::Thread)s of conversations are kept between
    //! requests, by id, each with a version (optimistic concurrency: two requests on one
    //! thread never both append; see [`ThreadStore`]).
    //!
    //! Everything of the core's [`thread_store`](hookchain_core::thread_store) module, and the
    //! thread stores in databases, each in the database of the checkpoint store of the same
    //! name (one file or server, one pool, a table of its own):
    //!
    //! | store | where | feature |
    //! |---|---|---|
    //! | [`InMemoryThreadStore`] | this process | |
    //! | [`FileThreadStore`] | JSON files, written atomically (one machine) | |
    //! | `SqliteThreadStore` | `SqliteCheckpointer::threads`: its SQLite file | `sqlite` |
    //! | `PostgresThreadStore` | `PostgresCheckpointer::threads`: its Postgres pool | `postgres` |

    pub use hookchain_core::thread_store::*;
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use hookchain_stores::PostgresThreadStore;
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use hookchain_stores::SqliteThreadStore;
}

/// Agent runs as durable [Temporal](https://temporal.io) workflows, spread over many workers
/// (feature `temporal`): each step of a run is an activity that runs one step of the agent
/// ([`Agent::step`]) on the run its checkpointer holds; see the crate `hookchain-temporal`.
///
/// ```toml
/// hookchain = { version = "0.1", features = ["temporal", "postgres"] }
/// ```
#[cfg(feature = "temporal")]
#[cfg_attr(docsrs, doc(cfg(feature = "temporal")))]
pub mod temporal {
    pub use hookchain_temporal::*;
}

/// Tools from [MCP](https://modelcontextprotocol.io) servers (feature `mcp`): a program run as
/// a child process speaking stdio, or a URL speaking streamable HTTP; each of their tools is a
/// [`Tool`] to which every `wrap_tool_call` middleware applies; see the crate `hookchain-mcp`
/// (on the official SDK, `rmcp`).
///
/// ```toml
/// hookchain = { version = "0.1", features = ["mcp"] }
/// ```
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp {
    pub use hookchain_mcp::*;
}

/// Serving agents over HTTP (feature `axum`): runs streamed as server-sent events in the
/// [AG-UI](https://docs.ag-ui.com) protocol; see the crate `hookchain-axum`.
///
/// ```toml
/// hookchain = { version = "0.1", features = ["axum"] }
/// ```
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum {
    pub use hookchain_axum::*;
}

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
