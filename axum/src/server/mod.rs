//! [`AgentServer`]: an agent served over HTTP — its runs streamed as AG-UI events, its threads
//! kept in a [`ThreadStore`].

mod handlers;
mod problem;
mod request_id;
mod shutdown;
mod turn;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use hookchain_core::thread_store::ThreadStore;
use hookchain_core::{Agent, Middleware, Model};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

pub use problem::Problem;
pub use shutdown::ShutdownReport;

use crate::runs::Runs;

/// The most runs going at once unless the server is told otherwise.
pub const DEFAULT_MAX_RUNNING: usize = 256;
/// The most events kept per run for clients that reconnect.
pub const DEFAULT_EVENTS_PER_RUN: usize = 10_000;
/// How long an ended run's events are kept for a client that reconnects.
pub const DEFAULT_KEEP_ENDED: Duration = Duration::from_secs(300);
/// The largest request body read (an AG-UI client sends the whole conversation each time).
pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// An agent served over HTTP, in the [AG-UI](https://docs.ag-ui.com) protocol.
///
/// [`router`](Self::router) answers:
///
/// - `POST /` — an AG-UI `RunAgentInput`: a new turn of the thread `threadId` (the last
///   message, the user's), or the answers to its pause (`resume`). With `Accept:
///   text/event-stream` (what AG-UI clients send), the run's events as server-sent events,
///   each with an id; otherwise, once the run ends, its last event as JSON (`RUN_FINISHED`),
///   or a problem response. A request naming a run the server knows (the same `runId`, sent
///   again) joins that run instead of starting another, reading its events from the one after
///   `Last-Event-ID`.
/// - `GET /runs/{run_id}/events` — the events of a run going or recently ended, from the one
///   after `Last-Event-ID` (a client that lost its connection reconnects here).
/// - `GET /threads/{thread_id}` — the conversation: its messages in AG-UI's form, its version,
///   whether it is paused.
///
/// # Runs, disconnects and shutdown
///
/// Each run is a task of its own: **a client that disconnects does not stop it**. It goes on
/// to its answer or its pause, and its thread is saved; the client reads it back from the log
/// (reconnecting) or from the thread. A thread runs one turn at a time on a server (another
/// request for it is refused, `409 thread_busy`); between servers the store's versions make
/// the later save fail instead of both appending (`thread_conflict`).
///
/// A pause is resumed by the thread's id from the agent's checkpointer: give the agent one
/// ([`AgentBuilder::checkpointer`](hookchain_core::AgentBuilder::checkpointer)) with a
/// durable store, and a paused conversation survives a restart of the server.
///
/// [`shutdown`](Self::shutdown) refuses new runs, lets the running ones end within a grace
/// period, then stops the rest: their threads are left as they were before their turn, and
/// their clients are told (`RUN_ERROR` `server_shutdown`) to send the turn again. Paused
/// threads stay paused, resumable after the restart.
///
/// A stopped run — by a shutdown, or a server that died — is **continued, not started over**,
/// when its client sends it again to any server of the deployment: the same turn (a user
/// message with the same `id`, as AG-UI clients give every message) or the same answers to the
/// pause it resumed. It goes on from its last completed step, so no tool call it completed
/// runs again (one in flight runs again with the same
/// [idempotency key](hookchain_core::ToolContext::idempotency_key)). This needs an agent
/// that keeps its runs' steps: a checkpointer with
/// [`Durability::EveryStep`](hookchain_core::Durability::EveryStep) (with `Pauses`, only
/// resumed runs are kept so). Otherwise — or when the client sends another message — the turn
/// runs from the start, and the stopped run is given up. A server that died holds its runs'
/// keys until their [lease](hookchain_core::AgentBuilder::lease) expires: until then a
/// request for the thread is refused with `RUN_ERROR` `thread_busy`.
///
/// # Errors
///
/// Problem responses (RFC 9457) and `RUN_ERROR` events carry a stable code and words for the
/// client, never an error's internals (a provider's message, a path, a database's text); those
/// are logged, in the span of the request (`http_request`, with its `request_id`, from the
/// `x-request-id` header or made up and sent back) and of the run (`agui_run`, with the
/// thread's and the run's ids).
pub struct AgentServer<M, C, S> {
    shared: Arc<Shared<M, C, S>>,
}

impl<M, C, S> Clone for AgentServer<M, C, S> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<M, C, S> std::fmt::Debug for AgentServer<M, C, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentServer")
            .field("running", &self.shared.runs.running())
            .finish_non_exhaustive()
    }
}

/// What the server's handlers and runs share.
pub(crate) struct Shared<M, C, S> {
    pub(crate) agent: Arc<Agent<M, C>>,
    pub(crate) threads: S,
    pub(crate) runs: Arc<Runs>,
    /// The threads with a run going on this server.
    busy: Mutex<HashSet<String>>,
    /// Set when the shutdown's grace is over: the runs still going stop.
    pub(crate) stop: watch::Sender<bool>,
    max_body: usize,
}

impl<M, C, S> Shared<M, C, S> {
    pub(crate) fn busy_threads(&self) -> MutexGuard<'_, HashSet<String>> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Configures an [`AgentServer`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentServerBuilder {
    max_running: usize,
    events_per_run: usize,
    keep_ended: Duration,
    max_body: usize,
}

impl<M, C, S> AgentServer<M, C, S>
where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    /// `agent` served with its threads in `threads`, with the default settings.
    pub fn new(agent: Arc<Agent<M, C>>, threads: S) -> Self {
        Self::builder().build(agent, threads)
    }

    /// A builder of the server's settings.
    pub fn builder() -> AgentServerBuilder {
        AgentServerBuilder {
            max_running: DEFAULT_MAX_RUNNING,
            events_per_run: DEFAULT_EVENTS_PER_RUN,
            keep_ended: DEFAULT_KEEP_ENDED,
            max_body: DEFAULT_MAX_BODY,
        }
    }

    /// The routes (see [`AgentServer`]); nest them under a path of your own with
    /// [`Router::nest`].
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", post(handlers::start::<M, C, S>))
            .route("/runs/{run_id}/events", get(handlers::events::<M, C, S>))
            .route("/threads/{thread_id}", get(handlers::thread::<M, C, S>))
            .layer(DefaultBodyLimit::max(self.shared.max_body))
            .layer(axum::middleware::from_fn(request_id::with_request_id))
            .with_state(self.clone())
    }

    /// The agent served.
    pub fn agent(&self) -> &Arc<Agent<M, C>> {
        &self.shared.agent
    }

    /// How many runs are going.
    pub fn running(&self) -> usize {
        self.shared.runs.running()
    }
}

impl AgentServerBuilder {
    /// The most runs going at once (default [`DEFAULT_MAX_RUNNING`]); past it, a new run is
    /// refused with `503 busy` and a `Retry-After`.
    pub fn max_running(mut self, runs: usize) -> Self {
        self.max_running = runs.max(1);
        self
    }

    /// The most events kept per run for a client that reconnects (default
    /// [`DEFAULT_EVENTS_PER_RUN`]); the oldest are dropped past it, and a client asking for
    /// them is told they are gone (`410`).
    pub fn events_per_run(mut self, events: usize) -> Self {
        self.events_per_run = events.max(1);
        self
    }

    /// How long an ended run's events are kept for a client that reconnects, and a request
    /// with its `runId` joins it instead of starting another (default [`DEFAULT_KEEP_ENDED`]).
    pub fn keep_ended(mut self, keep: Duration) -> Self {
        self.keep_ended = keep;
        self
    }

    /// The largest request body read, in bytes (default [`DEFAULT_MAX_BODY`]); a larger one
    /// is refused with `413`.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The server of `agent`, with its threads in `threads`.
    pub fn build<M, C, S>(self, agent: Arc<Agent<M, C>>, threads: S) -> AgentServer<M, C, S> {
        AgentServer {
            shared: Arc::new(Shared {
                agent,
                threads,
                runs: Arc::new(Runs::new(
                    self.max_running,
                    self.events_per_run,
                    self.keep_ended,
                )),
                busy: Mutex::default(),
                stop: watch::Sender::new(false),
                max_body: self.max_body,
            }),
        }
    }
}
