//! [`AgentServerBuilder`]: an [`AgentServer`]'s settings — who may ask (an authorizer, or
//! explicitly no one in particular), what a browser may do, what a client may send and see,
//! and how much the server keeps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain_core::auth::{Anonymous, Authorize, SharedAuthorizer};
use hookchain_core::interrupt::Interrupt;
use serde_json::Value;
use tokio::sync::watch;

use super::access::{OwnerOnly, ThreadAccess};
use super::browser::{BrowserGuard, Hosts};
use super::client_urls::ClientUrls;
use super::{AgentServer, Shared};
use crate::agui::InterruptMetadata;
use crate::runs::{Bounds, Runs};
use hookchain_core::Agent;

/// The most runs going at once unless the server is told otherwise.
pub const DEFAULT_MAX_RUNNING: usize = 256;
/// The most runs of one principal going at once unless the server is told otherwise.
pub const DEFAULT_MAX_RUNNING_PER_PRINCIPAL: usize = 8;
/// The most events kept per run for clients that reconnect.
pub const DEFAULT_EVENTS_PER_RUN: usize = 10_000;
/// The most bytes of events kept per run for clients that reconnect.
pub const DEFAULT_EVENT_BYTES_PER_RUN: usize = 2 * 1024 * 1024;
/// How long an ended run's events are kept for a client that reconnects.
pub const DEFAULT_KEEP_ENDED: Duration = Duration::from_secs(300);
/// The most ended runs whose events are kept for clients that reconnect.
pub const DEFAULT_MAX_ENDED: usize = 256;
/// The largest request body read (an AG-UI client sends the whole conversation each time).
pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// Configures an [`AgentServer`]: see [`AgentServer::builder`].
#[derive(Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentServerBuilder {
    bounds: Bounds,
    max_body: usize,
    authorizer: Option<SharedAuthorizer>,
    access: Arc<dyn ThreadAccess>,
    origins: Vec<String>,
    hosts: Hosts,
    client_urls: ClientUrls,
    interrupt_metadata: Option<InterruptMetadata>,
}

/// Why an [`AgentServer`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerBuildError {
    /// Neither an authorizer nor `allow_anonymous()` was given.
    #[error(
        "the server has no authorizer: give it one with `AgentServerBuilder::authorize` (your \
         login: a token or session check), or, for a server only you reach (a chat page on \
         loopback, a test), call `allow_anonymous()` — then every request is the same anonymous \
         principal, and anyone who reaches the server reads and answers every conversation"
    )]
    NoAuthorizer,
    /// An origin given to `allow_origin` is not `scheme://host[:port]`.
    #[error("`{0}` is not an origin (`https://app.example.com`, `http://localhost:3000`)")]
    Origin(String),
}

impl std::fmt::Debug for AgentServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentServerBuilder")
            .field("bounds", &self.bounds)
            .field("max_body", &self.max_body)
            .field("authorizer", &self.authorizer.as_ref().map(|_| "set"))
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("client_urls", &self.client_urls)
            .finish_non_exhaustive()
    }
}

impl Default for AgentServerBuilder {
    fn default() -> Self {
        AgentServerBuilder {
            bounds: Bounds {
                max_running: DEFAULT_MAX_RUNNING,
                max_running_per_principal: DEFAULT_MAX_RUNNING_PER_PRINCIPAL,
                events_per_run: DEFAULT_EVENTS_PER_RUN,
                event_bytes_per_run: DEFAULT_EVENT_BYTES_PER_RUN,
                keep_ended: DEFAULT_KEEP_ENDED,
                max_ended: DEFAULT_MAX_ENDED,
            },
            max_body: DEFAULT_MAX_BODY,
            authorizer: None,
            access: Arc::new(OwnerOnly),
            origins: Vec::new(),
            hosts: Hosts::Loopback,
            client_urls: ClientUrls::default(),
            interrupt_metadata: None,
        }
    }
}

impl AgentServerBuilder {
    /// Who asks: `authorizer` is called on every request, before anything is read or loaded;
    /// the [`Principal`](hookchain_core::Principal) it returns owns the threads it makes, is
    /// checked against the owner of every thread it names, and is put into the run's
    /// [`RunContext`](hookchain_core::RunContext), where hooks and tools read it. A refusal
    /// ([`Denied`](hookchain_core::auth::Denied)) is answered as a problem response of its
    /// status (`401`, `403`).
    pub fn authorize(mut self, authorizer: impl Authorize) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// Serves without an authorizer: every request is the same
    /// [`Principal::anonymous`](hookchain_core::Principal::anonymous), which owns no thread
    /// and reaches every thread no one owns — **anyone who reaches the server reads, runs and
    /// answers every conversation it made**. For a server only you reach (the chat page on
    /// loopback, a test). Without this or [`authorize`](Self::authorize),
    /// [`build`](Self::build) refuses.
    pub fn allow_anonymous(mut self) -> Self {
        self.authorizer = Some(Arc::new(Anonymous));
        self
    }

    /// Who may do what to a thread, once the authorizer said who asks (default
    /// [`OwnerOnly`]): replace it for shared threads or administrators.
    pub fn thread_access(mut self, access: impl ThreadAccess) -> Self {
        self.access = Arc::new(access);
        self
    }

    /// Lets pages of `origin` (`https://app.example.com`) call the server from a browser: their
    /// requests pass the `Origin` check, and the server answers CORS for them (preflights,
    /// credentials allowed). Without any, a browser may call it only from its own origin,
    /// and CORS is off.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into());
        self
    }

    /// The `Host`s the server answers (names, without port): a request for another is refused
    /// (`403 host_not_allowed`). By default only loopback (`localhost`, `127.0.0.1`, `[::1]`),
    /// which keeps a web page from reaching a server on the user's machine by pointing a name
    /// of its own at it (DNS rebinding); a server on a network names its hosts here, or calls
    /// [`any_host`](Self::any_host).
    pub fn allowed_hosts<I, H>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = H>,
        H: Into<String>,
    {
        self.hosts = Hosts::List(
            hosts
                .into_iter()
                .map(|host| host.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Answers requests for any `Host` (behind a proxy that checks it, say).
    pub fn any_host(mut self) -> Self {
        self.hosts = Hosts::Any;
        self
    }

    /// Which URLs a client may send as an image's source (default: none, `data:` only).
    pub fn client_urls(mut self, urls: ClientUrls) -> Self {
        self.client_urls = urls;
        self
    }

    /// What a client is shown of each interrupt a person answers, as its `metadata` (default
    /// `{"payload": <its payload>}`); see [`ClientPause`](crate::agui::ClientPause) for what is
    /// never shown.
    pub fn interrupt_metadata(
        mut self,
        metadata: impl Fn(&Interrupt) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.interrupt_metadata = Some(Arc::new(metadata));
        self
    }

    /// The most runs going at once (default [`DEFAULT_MAX_RUNNING`]); past it, a new run is
    /// refused with `503 busy` and a `Retry-After`.
    pub fn max_running(mut self, runs: usize) -> Self {
        self.bounds.max_running = runs.max(1);
        self
    }

    /// The most runs one principal has going at once (default
    /// [`DEFAULT_MAX_RUNNING_PER_PRINCIPAL`]; the anonymous principal counts as one); past it,
    /// a new run is refused with `429 too_many_runs` and a `Retry-After`.
    pub fn max_running_per_principal(mut self, runs: usize) -> Self {
        self.bounds.max_running_per_principal = runs.max(1);
        self
    }

    /// The most events kept per run for a client that reconnects (default
    /// [`DEFAULT_EVENTS_PER_RUN`]); the oldest are dropped past it, and a client asking for
    /// them is told they are gone (`410`).
    pub fn events_per_run(mut self, events: usize) -> Self {
        self.bounds.events_per_run = events.max(1);
        self
    }

    /// The most bytes of events kept per run (default [`DEFAULT_EVENT_BYTES_PER_RUN`]); the
    /// oldest are dropped past it, as past [`events_per_run`](Self::events_per_run).
    pub fn event_bytes_per_run(mut self, bytes: usize) -> Self {
        self.bounds.event_bytes_per_run = bytes;
        self
    }

    /// How long an ended run's events are kept for a client that reconnects, and a request
    /// with its `runId` joins it instead of starting another (default [`DEFAULT_KEEP_ENDED`]).
    pub fn keep_ended(mut self, keep: Duration) -> Self {
        self.bounds.keep_ended = keep;
        self
    }

    /// The most ended runs kept so (default [`DEFAULT_MAX_ENDED`]); past it, the oldest is
    /// forgotten.
    pub fn max_ended(mut self, runs: usize) -> Self {
        self.bounds.max_ended = runs;
        self
    }

    /// The largest request body read, in bytes (default [`DEFAULT_MAX_BODY`]); a larger one
    /// is refused with `413`.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The server of `agent`, with its threads in `threads`.
    ///
    /// # Errors
    ///
    /// [`ServerBuildError::NoAuthorizer`] without [`authorize`](Self::authorize) or
    /// [`allow_anonymous`](Self::allow_anonymous); [`ServerBuildError::Origin`] for an origin
    /// that is not one.
    pub fn build<M, C, S>(
        self,
        agent: Arc<Agent<M, C>>,
        threads: S,
    ) -> Result<AgentServer<M, C, S>, ServerBuildError> {
        let authorizer = self.authorizer.ok_or(ServerBuildError::NoAuthorizer)?;
        let browser = BrowserGuard::new(self.origins, self.hosts)?;
        Ok(AgentServer {
            shared: Arc::new(Shared {
                agent,
                threads,
                runs: Arc::new(Runs::new(self.bounds)),
                busy: Mutex::default(),
                stop: watch::Sender::new(false),
                max_body: self.max_body,
                authorizer,
                access: self.access,
                browser: Arc::new(browser),
                client_urls: self.client_urls,
                interrupt_metadata: self.interrupt_metadata,
            }),
        })
    }
}
