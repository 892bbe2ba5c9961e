//! One live MCP session with a server, started again after the server died or stopped
//! answering.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation, InputResponses, JsonObject, PingRequest,
    ProgressNotificationParam, ProtocolVersion, RequestMetaObject, ServerResult,
    Tool as McpToolInfo,
};
use rmcp::service::{
    ClientCacheConfig, ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer,
    PeerRequestOptions, RequestContext, RunningService,
};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError};

use crate::elicitation::routes::{Asked, ElicitationRoutes};
use crate::elicitation::{Asker, ElicitationAnswer, ElicitationHandler, InputRound, RoundError};
use crate::error::Error;
use crate::freshness::ListingAge;
use crate::oauth::{
    AuthorizationCallback, AuthorizationError, Authorizer, CallbackError, MAX_AUTHORIZATIONS,
    McpAuthorization,
};
use crate::progress::{CancelOnDrop, ProgressRoutes};
use crate::protocol::McpProtocol;
use crate::server::{Endpoint, McpServer};
use crate::stdio::{self, StderrTail};
use crate::{http, limits};

/// A session: rmcp's service task, which owns the transport (and so the child process).
type Session = RunningService<RoleClient, Handler>;

/// How long a server that let a call time out has to answer a ping before it is taken for
/// hung and started again.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a stdio server that failed its handshake has to finish writing to stderr, for the
/// error to quote it.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// The client side of a session: says who we are, lists the tools again on
/// `tools/list_changed`, hands each progress notification to the call it is about, and
/// answers elicitations for the call in flight.
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    list_changed: Arc<AtomicBool>,
    progress: ProgressRoutes,
    /// `None` when the server was told the client does not elicit.
    elicitation: Option<ElicitationRoutes>,
    /// Answers elicitations in the process when it can.
    answerer: Option<Arc<dyn ElicitationHandler>>,
    /// Weak: the connection owns the session, which owns the handler.
    connection: Weak<Connection>,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("server", &self.server)
            .field("elicitation", &self.elicitation.is_some())
            .field("answerer", &self.answerer.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.progress.route(params);
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed.store(true, Ordering::Release);
        // At once, in a task of its own (rmcp runs this handler in one already, but the
        // listing is a request on the same session, and may take until the connect timeout):
        // new tools reach the model at its next call, not after a call of this server's.
        if let Some(connection) = self.connection.upgrade() {
            tokio::spawn(async move { connection.relist_changed().await });
        }
        std::future::ready(())
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let result = match &self.elicitation {
            Some(routes) => routes.answer(&self.server, request, self.answerer.as_deref()),
            // Not declared: a server that asks anyway is declined, as rmcp's default does.
            None => ElicitResult::new(rmcp::model::ElicitationAction::Decline),
        };
        std::future::ready(Ok(result))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        // The handshake (2025-11-25) names the newest revision that has one: 2026-07-28 is
        // negotiated by `server/discover`, not by `initialize` (see `McpProtocol`).
        ClientConfig::new(
            capabilities,
            Implementation::new("hookchain-mcp", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// Why a call did not get a result from the server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The server's current tool list does not have the tool (it changed since the toolset
    /// was built).
    #[error("the MCP server `{server}` no longer offers this tool")]
    NotOffered { server: String },
    /// No answer within the call timeout.
    #[error("the MCP server `{server}` did not answer within {timeout:?}")]
    Timeout { server: String, timeout: Duration },
    /// The server went away during the call (it exited, the connection broke).
    #[error("the MCP server `{server}` stopped during the call")]
    Disconnected {
        server: String,
        #[source]
        source: ServiceError,
    },
    /// The server answered with something other than a result.
    #[error("the MCP server `{server}` did not answer the call with a result")]
    Unexpected {
        server: String,
        #[source]
        source: ServiceError,
    },
    /// The server could not be started again.
    #[error("the MCP server `{server}` is unavailable")]
    Unavailable {
        server: String,
        #[source]
        source: Error,
    },
    /// The server refused the call with a JSON-RPC error (an unknown tool, invalid arguments).
    #[error("the MCP server `{server}` refused the call: {message}")]
    Refused { server: String, message: String },
    /// The server refused the call for want of an authorization, and none was had (no
    /// handler to ask a person, or the authorization failed).
    #[error("the MCP server `{server}` refused the call: not authorized")]
    Unauthorized {
        server: String,
        #[source]
        source: Error,
    },
    /// The server asked for input this client cannot give (2026-07-28).
    #[error("the MCP server `{server}` asked for input this client cannot give")]
    Input {
        server: String,
        #[source]
        source: RoundError,
    },
}

/// The live session, if any, and what is known of it.
struct Live {
    session: Arc<Session>,
    /// Which session this is: a failure seen on an older one does not end a newer one.
    generation: u64,
    /// The tools the server offers now (original names).
    offered: HashSet<String>,
    /// A call timed out: the next call first checks that the server still answers.
    suspect: bool,
    /// The stdio server's process id.
    process_id: Option<u32>,
}

/// Told each new listing of the server's tools (after a changed list, or on a new session).
pub(crate) type OnListed = Box<dyn Fn(&[McpToolInfo]) + Send + Sync>;

/// Where a connection's new listings go.
enum Listings {
    /// Nowhere yet (the toolset waits for its other servers): the last one is kept for it.
    Unclaimed(Option<Vec<McpToolInfo>>),
    /// To the toolset.
    Reported(OnListed),
}

/// A connection to one server: a session, opened again when needed.
pub(crate) struct Connection {
    /// Itself, for the handler of each session.
    me: Weak<Connection>,
    server: McpServer,
    /// The OAuth of an HTTP server configured with it.
    authorizer: Option<Authorizer>,
    stderr: StderrTail,
    list_changed: Arc<AtomicBool>,
    progress: ProgressRoutes,
    elicitation: ElicitationRoutes,
    live: tokio::sync::Mutex<Option<Live>>,
    generations: std::sync::atomic::AtomicU64,
    listings: Mutex<Listings>,
    /// How long the last listing may be reused (`ttlMs`).
    age: ListingAge,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server.name)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to `server` and lists its tools.
    pub(crate) async fn connect(server: McpServer) -> Result<(Arc<Self>, Vec<McpToolInfo>), Error> {
        let authorizer = match &server.endpoint {
            Endpoint::Http(endpoint) => match &endpoint.oauth {
                Some(oauth) => Some(
                    Authorizer::new(&server.name, &endpoint.url, oauth, server.connect_timeout)
                        .await?,
                ),
                None => None,
            },
            Endpoint::Stdio(_) => None,
        };
        let connection = Arc::new_cyclic(|me| Connection {
            me: me.clone(),
            server,
            authorizer,
            stderr: StderrTail::default(),
            list_changed: Arc::new(AtomicBool::new(false)),
            progress: ProgressRoutes::default(),
            elicitation: ElicitationRoutes::default(),
            live: tokio::sync::Mutex::new(None),
            generations: std::sync::atomic::AtomicU64::new(0),
            listings: Mutex::new(Listings::Unclaimed(None)),
            age: ListingAge::default(),
        });
        // Locked while it opens, as for a call: a listing for a `list_changed` that comes
        // meanwhile waits for the session, rather than finding none.
        let mut live = connection.live.lock().await;
        let (fresh, tools) = connection.open().await?;
        *live = Some(fresh);
        drop(live);
        Ok((connection, tools))
    }

    pub(crate) fn server(&self) -> &McpServer {
        &self.server
    }

    /// Tells `on_listed` every later listing of the server's tools, and at once the one made
    /// since the connection was opened, if any (a server may change its list while the
    /// toolset still waits for its other servers). A connection belongs to one toolset.
    pub(crate) fn on_listed(&self, on_listed: OnListed) {
        let mut listings = self.listings();
        if let Listings::Unclaimed(Some(tools)) = &*listings {
            on_listed(tools);
        }
        *listings = Listings::Reported(on_listed);
    }

    /// The server said its tool list changed: lists it now on the live session, unless a
    /// call did meanwhile (the flag is taken under the session's lock, so one listing answers
    /// one notification). Without a live session there is nothing to do: the next call opens
    /// one, and lists its tools.
    async fn relist_changed(&self) {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_mut()
            && self.list_changed.swap(false, Ordering::AcqRel)
        {
            self.relist(current).await;
        }
    }

    /// The last listing ran out (its `ttlMs`, see [`crate::freshness`]): lists the tools again,
    /// in a task of its own (the caller — a model call, a tool call — does not wait for it),
    /// unless a listing for it is under way. Nothing without a runtime to run it on.
    pub(crate) fn relist_if_stale(&self) {
        if !self.age.start_relisting() {
            return;
        }
        match (tokio::runtime::Handle::try_current(), self.me.upgrade()) {
            (Ok(runtime), Some(connection)) => {
                runtime.spawn(async move {
                    connection.relist_stale().await;
                    connection.age.relisting_done();
                });
            }
            _ => self.age.relisting_done(),
        }
    }

    /// Lists the tools again on the live session if its listing is still out (another
    /// listing — a changed list, a new session — may have come meanwhile). Without a live
    /// session there is nothing to do: the next call opens one, and lists its tools.
    async fn relist_stale(&self) {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_mut()
            && self.age.is_stale()
        {
            tracing::debug!(server = %self.server.name, "the MCP server's tool list ran out (ttlMs): listing it again");
            self.relist(current).await;
        }
    }

    fn listed(&self, tools: &[McpToolInfo]) {
        // Under the lock, so that a listing made while the toolset claims them is not lost.
        match &mut *self.listings() {
            Listings::Reported(on_listed) => on_listed(tools),
            Listings::Unclaimed(last) => *last = Some(tools.to_vec()),
        }
    }

    fn listings(&self) -> std::sync::MutexGuard<'_, Listings> {
        // What it holds is replaced whole, never left half-written by a panic.
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The process id of a stdio server's current process.
    pub(crate) async fn process_id(&self) -> Option<u32> {
        self.live
            .lock()
            .await
            .as_ref()
            .and_then(|live| live.process_id)
    }

    /// Calls the server's tool `original` with `arguments` and the call's idempotency key in
    /// `_meta` (under [`IDEMPOTENCY_KEY_META`](crate::IDEMPOTENCY_KEY_META)), within the
    /// call timeout. A session that is gone, or that no longer answers, is opened again
    /// first; a session that breaks during the call is dropped, for the next call to open
    /// a new one.
    ///
    /// The server's progress notifications for the call go to `on_progress` as they come.
    /// `calling` says how the call goes on (see [`crate::elicitation`]): its first time (with
    /// the answers for a 2025-11-25 server's elicitations in it, in order), or again with a
    /// 2026-07-28 server's state and the answers to its round. A round a person must answer
    /// ends the call with it; one this client answers itself (the roots, a declined URL) is
    /// answered and the call made again, up to [`MAX_INPUT_ROUNDS`] times. Dropping the
    /// returned future mid-call sends `notifications/cancelled` for the request in flight, as
    /// does the timeout.
    pub(crate) async fn call(
        &self,
        original: &str,
        arguments: Option<JsonObject>,
        idempotency_key: String,
        calling: Calling,
        on_progress: impl Fn(&ProgressNotificationParam),
    ) -> Result<Answered, CallError> {
        let (session, generation) = self.session(original).await?;
        let mut params = CallToolRequestParams::new(original.to_owned());
        params.arguments = arguments;
        // The same in every attempt of the call (a retry, a run resumed after its worker
        // died): a server that deduplicates by it acts once.
        let mut meta = RequestMetaObject::new();
        meta.insert(
            crate::IDEMPOTENCY_KEY_META.to_owned(),
            serde_json::Value::String(idempotency_key),
        );
        if let Some(trace_context) = &self.server.trace_context {
            trace_context.write_current(&mut meta);
        }
        params.meta = Some(meta);
        let answers = match calling {
            Calling::First(answers) => answers,
            Calling::Again {
                request_state,
                responses,
            } => {
                params.request_state = request_state;
                params.input_responses = Some(responses);
                Vec::new()
            }
        };
        let elicitations = self.elicitation.enter(original, answers);
        let timeout = self.server.call_timeout;
        let peer = session.peer();
        let server = || self.server.name.clone();
        // A refusal for want of a token or of a scope: authorized (outside the call timeout: a
        // person may take a while), then the call sent again, a few times at most.
        let mut authorizations = 0;
        let outcome = loop {
            let calling = async {
                for round in 0..MAX_INPUT_ROUNDS {
                    let answer =
                        match send(peer, params.clone(), &self.progress, &on_progress).await? {
                            ServerResult::CallToolResult(result) => result,
                            ServerResult::InputRequiredResult(required) => {
                                let asker = Asker {
                                    server: &self.server.name,
                                    tool: original,
                                    handler: self.server.elicitation_handler.as_deref(),
                                };
                                let round_asked =
                                    InputRound::read(required, &asker).map_err(Stop::Round)?;
                                match round_asked.responses(&[]) {
                                    Some((request_state, responses)) => {
                                        if responses.is_empty() {
                                            // Only state: the server is not ready yet.
                                            tokio::time::sleep(state_only_backoff(round)).await;
                                        }
                                        params.request_state = request_state;
                                        params.input_responses =
                                            (!responses.is_empty()).then_some(responses);
                                        continue;
                                    }
                                    None => return Ok(Answered::Round(round_asked)),
                                }
                            }
                            // A task (this client declares no tasks) or another kind of answer.
                            _ => return Err(Stop::Service(ServiceError::UnexpectedResponse)),
                        };
                    // A 2025-11-25 server's result that followed a `cancel` it was given for want
                    // of an answer: set aside, the run pauses for the user's.
                    return Ok(match elicitations.unanswered() {
                        Some(asked) => Answered::Asked(asked),
                        None => Answered::Result(answer),
                    });
                }
                Err(Stop::Round(RoundError::TooManyRounds(MAX_INPUT_ROUNDS)))
            };
            let outcome = tokio::time::timeout(timeout, calling).await;
            let challenge = match &outcome {
                Ok(Err(Stop::Service(error))) => error.auth_challenge().map(str::to_owned),
                _ => None,
            };
            let (Some(challenge), Some(authorizer)) = (challenge, &self.authorizer) else {
                break outcome;
            };
            let unauthorized = |source| CallError::Unauthorized {
                server: server(),
                source,
            };
            if authorizations == MAX_AUTHORIZATIONS {
                return Err(unauthorized(Error::Authorization {
                    server: server(),
                    source: AuthorizationError::TooManyAttempts(MAX_AUTHORIZATIONS),
                }));
            }
            authorizations += 1;
            authorizer
                .authorize(&challenge)
                .await
                .map_err(unauthorized)?;
        };
        match outcome {
            Ok(Ok(answered)) => Ok(answered),
            Ok(Err(Stop::Round(source))) => Err(CallError::Input {
                server: server(),
                source,
            }),
            Ok(Err(Stop::Service(ServiceError::McpError(error)))) => Err(CallError::Refused {
                server: server(),
                message: limits::cut(&error.message, limits::MAX_REFUSAL_BYTES),
            }),
            Ok(Err(Stop::Service(
                source @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)),
            ))) => {
                self.discard(generation).await;
                Err(CallError::Disconnected {
                    server: server(),
                    source,
                })
            }
            // An answer that is not a result (a task this client does not drive), on a
            // session that still works.
            Ok(Err(Stop::Service(source))) => Err(CallError::Unexpected {
                server: server(),
                source,
            }),
            Err(_elapsed) => {
                self.mark_suspect(generation).await;
                Err(CallError::Timeout {
                    server: server(),
                    timeout,
                })
            }
        }
    }

    /// Closes the session: a stdio server's stdin is closed and the process waited for
    /// (then sent SIGTERM, then killed: rmcp's shutdown), and reaped.
    pub(crate) async fn close(&self) {
        let live = self.live.lock().await.take();
        if let Some(live) = live {
            match Arc::try_unwrap(live.session) {
                Ok(mut session) => {
                    let _ = session.close().await;
                }
                // A call is still running: the session ends when it does.
                Err(session) => drop(session),
            }
        }
    }

    /// The session to call `tool` on: the live one, checked; a new one if there is none.
    async fn session(&self, tool: &str) -> Result<(Arc<Session>, u64), CallError> {
        // The call is a use of the list: one that ran out is listed again, meanwhile.
        self.relist_if_stale();
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_mut() {
            // A session whose transport ended (the process exited, between calls) is not
            // `is_closed` for rmcp: its peer's channel says so.
            let alive =
                !current.session.is_closed() && !current.session.peer().is_transport_closed();
            let usable = alive && (!current.suspect || self.answers(current).await);
            if usable {
                current.suspect = false;
                if self.list_changed.swap(false, Ordering::AcqRel) {
                    self.relist(current).await;
                }
            } else {
                tracing::info!(server = %self.server.name, "the MCP server is gone or hung: starting it again");
                *live = None;
            }
        }
        let current = match live.take() {
            Some(current) => current,
            None => {
                let (fresh, tools) =
                    self.open().await.map_err(|source| CallError::Unavailable {
                        server: self.server.name.clone(),
                        source,
                    })?;
                // A server started again may offer other tools.
                self.listed(&tools);
                fresh
            }
        };
        let current = live.insert(current);
        if !current.offered.contains(tool) {
            return Err(CallError::NotOffered {
                server: self.server.name.clone(),
            });
        }
        Ok((current.session.clone(), current.generation))
    }

    /// Whether the server of `live` answers a ping in time.
    async fn answers(&self, live: &Live) -> bool {
        let ping = live
            .session
            .peer()
            .send_request(ClientRequest::PingRequest(PingRequest::default()));
        // Any reply: a 2026-07-28 server answers `ping` that the method is not found.
        matches!(
            tokio::time::timeout(PING_TIMEOUT, ping).await,
            Ok(Ok(_) | Err(ServiceError::McpError(_)))
        )
    }

    /// Lists the tools of `live` again, after the server said its list changed (or the last
    /// listing ran out), within the connect timeout, and tells the toolset. On failure the old
    /// list stays (a call of a removed tool then gets the server's own refusal).
    async fn relist(&self, live: &mut Live) {
        let listing = limits::list_tools(&self.server, live.session.peer());
        match tokio::time::timeout(self.server.connect_timeout, listing).await {
            Ok(Ok((tools, freshness))) => {
                live.offered = tools.iter().map(|tool| tool.name.to_string()).collect();
                self.age.listed(freshness);
                self.listed(&tools);
            }
            Ok(Err(error)) => {
                tracing::warn!(server = %self.server.name, %error, "listing the changed tools failed");
            }
            Err(_elapsed) => {
                tracing::warn!(server = %self.server.name, "listing the changed tools timed out");
            }
        }
    }

    /// Drops the session of `generation` if it is still the live one.
    async fn discard(&self, generation: u64) {
        let mut live = self.live.lock().await;
        if live
            .as_ref()
            .is_some_and(|live| live.generation == generation)
        {
            *live = None;
        }
    }

    async fn mark_suspect(&self, generation: u64) {
        let mut live = self.live.lock().await;
        if let Some(live) = live.as_mut().filter(|live| live.generation == generation) {
            live.suspect = true;
        }
    }

    /// Finishes the OAuth authorization `asked` that a call paused on, with the person's
    /// `callback` (see [`crate::oauth`]); the call is then made as a first one.
    pub(crate) async fn complete_authorization(
        &self,
        asked: &McpAuthorization,
        callback: &AuthorizationCallback,
    ) -> Result<(), Error> {
        match &self.authorizer {
            Some(authorizer) => authorizer.complete(asked, callback).await,
            None => Err(Error::Authorization {
                server: self.server.name.clone(),
                source: AuthorizationError::Callback(CallbackError::Unknown),
            }),
        }
    }

    /// The challenge that led to the authorization URL `url`, left to a person.
    pub(crate) fn authorization_challenge(&self, url: &str) -> String {
        self.authorizer
            .as_ref()
            .map(|authorizer| authorizer.challenge_of(url))
            .unwrap_or_default()
    }

    /// Starts the server (or reaches it), does the handshake and lists its tools, within the
    /// connect timeout. A server that refuses for want of a token or of a scope is authorized
    /// (outside the timeout: a person may take a while), and opened again, a few times at
    /// most.
    async fn open(&self) -> Result<(Live, Vec<McpToolInfo>), Error> {
        let mut authorizations = 0;
        loop {
            let (challenge, authorizer) = match (self.open_once().await, &self.authorizer) {
                (Ok(opened), _) => return Ok(opened),
                (Err(Opening::Refused { challenge, .. }), Some(authorizer)) => {
                    (challenge, authorizer)
                }
                (Err(Opening::Failed(error) | Opening::Refused { error, .. }), _) => {
                    return Err(error);
                }
            };
            if authorizations == MAX_AUTHORIZATIONS {
                return Err(Error::Authorization {
                    server: self.server.name.clone(),
                    source: AuthorizationError::TooManyAttempts(MAX_AUTHORIZATIONS),
                });
            }
            authorizations += 1;
            authorizer.authorize(&challenge).await?;
        }
    }

    /// One attempt of [`open`](Self::open).
    async fn open_once(&self) -> Result<(Live, Vec<McpToolInfo>), Opening> {
        let server = &self.server;
        let opening = async {
            let (session, process_id) = match self.start(server.protocol.lifecycle()).await {
                // A server of an older revision that does not answer `server/discover` with a
                // JSON-RPC error (it closes the connection, or answers an HTTP error of its
                // own): the handshake, on a new connection.
                Err(Opening::Failed(error @ Error::Initialize { .. }))
                    if server.protocol == McpProtocol::Negotiate =>
                {
                    tracing::debug!(server = %server.name, error = %error, "`server/discover` failed: trying the `initialize` handshake");
                    self.start(ClientLifecycleMode::Initialize).await?
                }
                started => started?,
            };
            self.list_changed.store(false, Ordering::Release);
            // The toolset keeps the listing and says when it ran out, on tokio's clock; rmcp's
            // own cache of responses would answer a listing that ran out from itself (or, when
            // the server fails, with its stale copy as if it were new).
            session
                .peer()
                .set_response_cache_config(ClientCacheConfig::disabled())
                .await;
            let (tools, freshness) =
                limits::list_tools(server, session.peer())
                    .await
                    .map_err(|error| {
                        let challenge = match &error {
                            Error::ListTools { source, .. } => source.auth_challenge(),
                            _ => None,
                        };
                        match challenge {
                            Some(challenge) => Opening::Refused {
                                challenge: challenge.to_owned(),
                                error,
                            },
                            None => Opening::Failed(error),
                        }
                    })?;
            Ok::<_, Opening>((session, process_id, tools, freshness))
        };
        let (session, process_id, tools, freshness) =
            tokio::time::timeout(server.connect_timeout, opening)
                .await
                .map_err(|_elapsed| Error::ConnectTimeout {
                    server: server.name.clone(),
                    timeout: server.connect_timeout,
                    stderr: self.stderr.text(),
                })??;
        self.age.listed(freshness);
        let live = Live {
            session: Arc::new(session),
            generation: self.generations.fetch_add(1, Ordering::Relaxed),
            offered: tools.iter().map(|tool| tool.name.to_string()).collect(),
            suspect: false,
            process_id,
        };
        Ok((live, tools))
    }

    /// Starts the server (or reaches it) and opens a session the way `lifecycle` says.
    async fn start(
        &self,
        lifecycle: ClientLifecycleMode,
    ) -> Result<(Session, Option<u32>), Opening> {
        let server = &self.server;
        let handler = Handler {
            server: server.name.clone(),
            list_changed: self.list_changed.clone(),
            progress: self.progress.clone(),
            elicitation: server.elicitation.then(|| self.elicitation.clone()),
            answerer: server.elicitation_handler.clone(),
            connection: self.me.clone(),
        };
        match &server.endpoint {
            Endpoint::Stdio(command) => {
                let (process, stderr_reader) = stdio::spawn(&server.name, command, &self.stderr)?;
                let process_id = process.id();
                let session = handler.serve_with_lifecycle(process, lifecycle).await;
                if session.is_err()
                    && let Some(reader) = stderr_reader
                {
                    // The process is exiting: let the reader take in its last words, which say
                    // why (a missing argument, a bad configuration).
                    let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
                }
                let session = session.map_err(|error| self.initialize_error(error.into()))?;
                Ok((session, process_id))
            }
            Endpoint::Http(endpoint) => {
                let session = match &self.authorizer {
                    None => {
                        let transport = http::transport(&server.name, endpoint)?;
                        handler.serve_with_lifecycle(transport, lifecycle).await
                    }
                    Some(authorizer) => {
                        let transport = http::authorized_transport(
                            &server.name,
                            endpoint,
                            authorizer.client(),
                        )?;
                        handler.serve_with_lifecycle(transport, lifecycle).await
                    }
                };
                let session = session.map_err(|error| match error.auth_challenge() {
                    Some(challenge) => Opening::Refused {
                        challenge: challenge.to_owned(),
                        error: self.initialize_error(error.into()),
                    },
                    None => Opening::Failed(self.initialize_error(error.into())),
                })?;
                Ok((session, None))
            }
        }
    }

    fn initialize_error(&self, source: Box<dyn std::error::Error + Send + Sync>) -> Error {
        Error::Initialize {
            server: self.server.name.clone(),
            stderr: self.stderr.text(),
            source,
        }
    }
}

/// The most rounds of input a call goes through before it fails: a server that keeps asking
/// for what this client answers itself (or only sends state) does not hold a call forever.
pub(crate) const MAX_INPUT_ROUNDS: usize = 10;

/// How a call is made.
#[derive(Debug)]
pub(crate) enum Calling {
    /// Its first time, or again under 2025-11-25: with the answers for the server's
    /// elicitations during the call, in order.
    First(Vec<ElicitationAnswer>),
    /// Again under 2026-07-28: with the server's state and the answers to its round.
    Again {
        request_state: Option<String>,
        responses: InputResponses,
    },
}

/// A call's answer: its result, or what the server asked that a person must answer first.
#[derive(Debug)]
pub(crate) enum Answered {
    Result(CallToolResult),
    /// Asked during the call (2025-11-25), with no answer given: the call pauses.
    Asked(Asked),
    /// Answered *input required* (2026-07-28), with at least one question.
    Round(InputRound),
}

/// Why an attempt to open a session failed.
enum Opening {
    Failed(Error),
    /// The server refused for want of a token or of a scope, with this `WWW-Authenticate`:
    /// authorized and opened again with OAuth, `error` without.
    Refused {
        challenge: String,
        error: Error,
    },
}

impl From<Error> for Opening {
    fn from(error: Error) -> Self {
        Opening::Failed(error)
    }
}

/// Why a call's rounds stopped short of a result.
enum Stop {
    Service(ServiceError),
    Round(RoundError),
}

impl From<ServiceError> for Stop {
    fn from(error: ServiceError) -> Self {
        Stop::Service(error)
    }
}

/// Sends one `tools/call` on `peer`, its progress to `on_progress`, and waits for its answer.
async fn send(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    progress: &ProgressRoutes,
    on_progress: &impl Fn(&ProgressNotificationParam),
) -> Result<ServerResult, ServiceError> {
    // rmcp gives every request a progress token of its own: its handle says which.
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut abandoned = CancelOnDrop::new(peer, handle.id.clone());
    let mut reports = progress.subscribe(handle.progress_token.clone());
    let answer = handle.await_response();
    tokio::pin!(answer);
    let answer = loop {
        tokio::select! {
            biased;
            answer = &mut answer => break answer,
            Some(report) = reports.next() => on_progress(&report),
        }
    };
    abandoned.disarm();
    // Reports routed while the answer came. (One the session's task has yet to route is lost:
    // MCP does not order a call's progress before its answer for us.)
    while let Some(report) = reports.try_next() {
        on_progress(&report);
    }
    answer
}

/// How long to wait before calling again a server that answered with state only: a little
/// longer each round, as rmcp's own loop does.
fn state_only_backoff(round: usize) -> Duration {
    Duration::from_millis(match round {
        0 => 50,
        1 => 100,
        2 => 200,
        _ => 250,
    })
}
