//! [`AgentServer`]: an agent served over HTTP — its runs streamed as AG-UI events, its threads
//! kept in a [`ThreadStore`].

mod access;
mod authorize;
mod browser;
mod builder;
mod client_urls;
mod handlers;
mod problem;
mod random;
mod request_id;
mod shutdown;
mod threads;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, Method, header};
use axum::routing::{get, post};
use hookchain_core::auth::SharedAuthorizer;
use hookchain_core::thread_store::ThreadStore;
use hookchain_core::{Agent, Middleware, Model};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tower::ServiceExt;
use tower_http::cors::{AllowOrigin, CorsLayer};

pub use access::{Action, OwnerOnly, ThreadAccess, ThreadRef};
pub use builder::{
    AgentServerBuilder, DEFAULT_EVENT_BYTES_PER_RUN, DEFAULT_EVENTS_PER_RUN, DEFAULT_KEEP_ENDED,
    DEFAULT_MAX_BODY, DEFAULT_MAX_ENDED, DEFAULT_MAX_RUNNING, DEFAULT_MAX_RUNNING_PER_PRINCIPAL,
    ServerBuildError,
};
pub use client_urls::ClientUrls;
pub use problem::Problem;
pub use shutdown::ShutdownReport;

use crate::agui::InterruptMetadata;
use crate::runs::Runs;
use browser::BrowserGuard;

/// An agent served over HTTP, in the [AG-UI](https://docs.ag-ui.com) protocol.
///
/// [`router`](Self::router) answers (and [`mount`](Self::mount) under a path of yours):
///
/// - `POST /` — an AG-UI `RunAgentInput`: a new turn of the thread `threadId` (the last
///   message, the user's), or the answers to its pause (`resume`). With `Accept:
///   text/event-stream` (what AG-UI clients send), the run's events as server-sent events,
///   each with an id; otherwise, once the run ends, its last event as JSON (`RUN_FINISHED`),
///   or a problem response. A request naming a run the server knows (the same `runId`, sent
///   again) joins that run instead of starting another, reading its events from the one after
///   `Last-Event-ID`.
/// - `GET /threads/{thread_id}/runs/{run_id}/events` — the events of a run going or recently
///   ended, from the one after `Last-Event-ID` (a client that lost its connection reconnects
///   here).
/// - `GET /threads/{thread_id}` — the conversation: its messages in AG-UI's form, its version,
///   whether it is paused, and what its pause asks (`interrupts`, as `RUN_FINISHED` showed
///   them).
/// - `GET /threads?after=&limit=` — the ids of the caller's conversations, a page at a time
///   (`next` is the `after` of the next page; `null` at the end).
///
/// # Who may do what
///
/// Every request passes, in order: the browser guard (its `Host` one the server answers —
/// loopback unless [`allowed_hosts`](AgentServerBuilder::allowed_hosts); from no page, the
/// server's own origin or one [allowed](AgentServerBuilder::allow_origin); a body that is
/// `application/json`), then the [authorizer](AgentServerBuilder::authorize), which says who
/// asks — a [`Principal`](hookchain_core::Principal), put into the run's
/// [`RunContext`](hookchain_core::RunContext) — or refuses (`401`, `403`). A server is built
/// with an authorizer or told to [`allow_anonymous`](AgentServerBuilder::allow_anonymous).
///
/// A thread records its owner, the principal whose turn made it. Every route asks the
/// [`ThreadAccess`] (default [`OwnerOnly`]) before it reads or changes anything of a thread,
/// and answers a thread the principal may not reach exactly as one that does not exist
/// (`404 unknown_thread`): a second user who knows a thread's id learns nothing of it and
/// changes nothing. A principal's tenant keeps its threads under keys of their own
/// (`<tenant>/<id>`, in the thread store and the checkpointer). A client's thread ids hold no
/// `/` (refused as input).
///
/// A client sees of a pause only what a person answers (see
/// [`ClientPause`](crate::agui::ClientPause)): a sub-agent's pause is opened to its own
/// interrupts, checkpoints and run-context values stay on the server, and interrupt ids are
/// opaque (a hash keyed by 128 random bits drawn per turn). Images from a client come as
/// `data:` unless [`client_urls`](AgentServerBuilder::client_urls) allows their URLs.
///
/// Everything a client can make the server keep is bounded: runs going (in all and per
/// principal), the events kept per run (by count and bytes), the ended runs kept (by count and
/// age), the body read.
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
/// [idempotency key](hookchain_core::ToolContext::idempotency_key)); a pause or an end the
/// stopped server stored and never saved in the thread is handed back as it stands, nothing
/// run ([`Agent::unseen_run`](hookchain_core::Agent::unseen_run)). A client whose stream was
/// cut before the run's end reads the thread first (`GET /threads/{id}`): the turn's answer
/// is there when the thread was saved with it, the pause's interrupts when it paused; else
/// (or when a paused thread shows no interrupts: the stopped run had taken the answers) it
/// sends the same request again. `tests/crash_turns.rs` kills a server at every write of a
/// turn, between any two of its events, and checks that the client so gets the turn's
/// answer with each tool call acting once. This needs an agent
/// with a checkpointer, of any durability: the server keeps every run it starts after each
/// step ([`RunContext::with_steps_kept`](hookchain_core::RunContext::with_steps_kept)). Without
/// one — or when the client sends another message — the turn runs from the start, and the
/// stopped run is given up. A server that died holds its runs'
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
    /// The threads with a run going on this server (their keys), with their owners: a thread
    /// made by its first run is not stored before that run ends.
    busy: Mutex<HashMap<String, Option<String>>>,
    /// Set when the shutdown's grace is over: the runs still going stop.
    pub(crate) stop: watch::Sender<bool>,
    max_body: usize,
    authorizer: SharedAuthorizer,
    pub(crate) access: Arc<dyn ThreadAccess>,
    browser: Arc<BrowserGuard>,
    pub(crate) client_urls: ClientUrls,
    pub(crate) interrupt_metadata: Option<InterruptMetadata>,
}

impl<M, C, S> Shared<M, C, S> {
    pub(crate) fn busy_threads(&self) -> MutexGuard<'_, HashMap<String, Option<String>>> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// On one type only (any would do), so that `AgentServer::builder()` needs no type annotation:
// the builder's `build` gives the server its types.
impl AgentServer<(), (), ()> {
    /// A builder of the server's settings; [`AgentServerBuilder::build`] makes the server.
    /// It needs an authorizer ([`authorize`](AgentServerBuilder::authorize)), or to be told
    /// that it serves anyone ([`allow_anonymous`](AgentServerBuilder::allow_anonymous)).
    pub fn builder() -> AgentServerBuilder {
        AgentServerBuilder::default()
    }
}

impl<M, C, S> AgentServer<M, C, S>
where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    /// The routes (see [`AgentServer`]); nest them under a path of your own with
    /// [`Router::nest`].
    pub fn router(&self) -> Router {
        let shared = &self.shared;
        let routes = Router::new()
            .route("/", post(handlers::start::<M, C, S>))
            .route("/threads", get(handlers::list::<M, C, S>))
            .route("/threads/{thread_id}", get(handlers::thread::<M, C, S>))
            .route(
                "/threads/{thread_id}/runs/{run_id}/events",
                get(handlers::events::<M, C, S>),
            )
            .fallback(handlers::not_found)
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&shared.authorizer),
                authorize::authorize,
            ))
            .layer(DefaultBodyLimit::max(shared.max_body))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&shared.browser),
                browser::guard,
            ))
            .layer(axum::middleware::from_fn(request_id::with_request_id));
        let routes = match cors(shared.browser.origins()) {
            Some(cors) => routes.layer(cors),
            None => routes,
        };
        routes.with_state(self.clone())
    }

    /// The routes under `path` (`/agent`): [`router`](Self::router) nested there, and its
    /// `POST` at `path/` too — axum's `nest` answers `path` alone, and AG-UI clients may be
    /// given either. Merge it into the application's router.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use hookchain::prelude::*;
    /// # use hookchain::thread_store::InMemoryThreadStore;
    /// # use hookchain_axum::AgentServer;
    /// # let agent = Agent::builder(ScriptedModel::new([])).build().unwrap();
    /// let server = AgentServer::builder()
    ///     .allow_anonymous()
    ///     .build(Arc::new(agent), InMemoryThreadStore::new())?;
    /// let app = axum::Router::new()
    ///     .route("/", axum::routing::get(|| async { "the page" }))
    ///     .merge(server.mount("/agent"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mount(&self, path: &str) -> Router {
        let path = path.trim_end_matches('/');
        // The request for `path/` is the router's own `/`.
        let at_root = self
            .router()
            .map_request(|mut request: axum::extract::Request| {
                let query = request.uri().query().map(|query| format!("/?{query}"));
                if let Ok(uri) = query.as_deref().unwrap_or("/").parse() {
                    *request.uri_mut() = uri;
                }
                request
            });
        Router::new()
            .nest(path, self.router())
            .route_service(&format!("{path}/"), at_root)
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

/// CORS for the origins allowed, if any: preflights answered, credentials allowed (the
/// origins are named, never `*`).
fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let origins = origins
        .iter()
        .filter_map(|origin| origin.parse().ok())
        .collect::<Vec<_>>();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                header::ACCEPT,
                HeaderName::from_static("last-event-id"),
                HeaderName::from_static("x-request-id"),
            ])
            .expose_headers([HeaderName::from_static("x-request-id")])
            .allow_credentials(true),
    )
}
