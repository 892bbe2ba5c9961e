//! An agent's tools served as an MCP server: the other way round from
//! [`McpToolset`](crate::McpToolset).

mod access;
mod asking;
mod content;
mod driving;
mod error;
mod handler;
mod http;
mod http_service;
mod in_session;
mod logging;
mod pauses;
mod problem;
mod resuming;
mod sessions;
mod stdio;
mod tasks;

use std::fmt;
use std::sync::Arc;

use hookchain_core::auth::Authorize;
use hookchain_core::{Agent, Principal};
use rmcp::model::Tool as McpToolInfo;
use rmcp::transport::StreamableHttpServerConfig;

use access::Access;
pub use error::ServeError;
pub use http_service::McpHttpService;
use logging::SessionLevel;
pub use pauses::{DEFAULT_ANSWER_WITHIN, ServedPauses};
pub use tasks::{DEFAULT_TASK_TTL, ServedTasks, TaskSupport};

/// The default largest `arguments` of one `tools/call`, as JSON (see
/// [`McpToolServer::max_argument_bytes`]).
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1024 * 1024;

/// An agent's tools, served to MCP clients (Claude Desktop, an IDE, the MCP Inspector, another
/// agent) over stdio ([`serve_stdio`](Self::serve_stdio)) or streamable HTTP
/// ([`serve_http`](Self::serve_http), or [`http_service`](Self::http_service) to mount in a
/// server of your own).
///
/// - `tools/list` lists the agent's [`ToolRegistry`](hookchain_core::ToolRegistry): each
///   tool's name, description and input schema (with a top-level `"type": "object"` and
///   `"properties"` where it has none, as MCP requires).
/// - `tools/call` runs the call through the agent's chain with
///   [`Agent::call_tool`]: the `after_model` gate (approval, limits) and the `wrap_tool_call`
///   onion (retry, caches, timeouts, `Pii`, tracing) run as when the agent's own model calls the
///   tool. The result's text is the MCP result's text; an error result (a tool's error, bad
///   arguments, a failure) is a result with `isError: true`, which the client reads.
/// - A call that a hook or the tool **interrupts** — a
///   [`HumanInTheLoop`](hookchain_core::builtin::HumanInTheLoop) that gates the tool, a tool
///   that asks the user — waits for the client's user when its interrupt can be asked (an
///   approval of the call is a yes/no form; a payload that is an MCP form, or MCP input
///   requests, is asked as it is: see [`ServedPauses`]) and the client declared that it
///   answers such requests (elicitation, sampling, roots):
///   - a client of 2025-11-25 is asked in its session (the server's own
///     `elicitation/create`, …), the call waiting in this process;
///   - a client of 2026-07-28 gets an input-required result when the server keeps paused
///     calls ([`pauses`](Self::pauses)): its `requestState` names the call kept in the store,
///     and the client's next call with the answer runs it from where it asked — once, on any
///     replica. A client that did not declare what the call needs gets `-32021` (missing
///     required client capability), naming it.
///
///   Otherwise the result has `isError: true` and says that the call needs an answer from
///   outside that this server cannot ask for; it did not run (or complete). The client's
///   user is the person in the loop: serve gated tools where that is who should approve.
/// - A call of a tool the agent does not have, and arguments over
///   [`max_argument_bytes`](Self::max_argument_bytes) or not a JSON object, are refused with a
///   JSON-RPC error (`-32602`, invalid params), before anything runs.
/// - A request the client cancels (`notifications/cancelled`) drops the call's future, as a
///   cancelled run does: the tool stops at its next `.await`.
/// - A tool's [`ToolContext::progress`](hookchain_core::ToolContext::progress) reaches a client
///   that asked for the call's progress (a progress token in the request's `_meta`) as
///   `notifications/progress`, in order and before the result (a client slower than 64
///   waiting reports loses some; the call never waits for it).
/// - A tool's [`ToolContext::log`](hookchain_core::ToolContext::log) lines reach a client that
///   asked for them as `notifications/message`: at the level a client of 2026-07-28 names on
///   the request (`_meta`'s `io.modelcontextprotocol/logLevel`), or the one a client of
///   2025-11-25 set for its session (`logging/setLevel`); none to a client that asked for none.
///
/// Each call has a fresh context (no history; in its [`RunContext`](hookchain_core::RunContext),
/// the caller's [`Principal`], see below) and fresh middleware state: a limit per run or per
/// thread bounds one call, not a client's session (see [`Agent::call_tool`]).
///
/// # Who may call
///
/// Over **HTTP**, the server must be told, or it does not serve
/// ([`ServeError::NoAuthorizer`] from [`serve_http`](Self::serve_http) and
/// [`http_service`](Self::http_service)):
///
/// - [`authorize(authorizer)`](Self::authorize): the application's
///   [`Authorize`] (`hookchain::auth`) is called on **every** HTTP request — the `initialize`,
///   each `POST`, the `GET` of the event stream, the `DELETE` — before rmcp reads it. A
///   refusal ([`Denied`](hookchain_core::auth::Denied)) is answered with its status, a problem
///   body and its `WWW-Authenticate` challenge, and nothing runs. The principal it returns is
///   put into the `RunContext` of each call that request makes: tools and hooks read it with
///   `cx.get::<Principal>()`. An MCP session belongs to the principal that opened it: another
///   principal naming it gets `404`, as for a session that does not exist (see
///   [`McpHttpService`]).
/// - [`allow_anonymous()`](Self::allow_anonymous): anyone who can reach the address may call
///   every tool, each call running as [`Principal::anonymous`]. For loopback and tests.
///
/// Gates stay gates: an authorized caller of a tool that a
/// [`HumanInTheLoop`](hookchain_core::builtin::HumanInTheLoop) gates is asked for the
/// approval as above (or gets the error result), and the tool does not run without it; a
/// paused call's state is good for the principal it was given to and no other. The
/// authorizer says who calls; the chain still says what may run.
///
/// Over **stdio** ([`serve_stdio`](Self::serve_stdio), [`serve_io`](Self::serve_io)) no
/// authorizer is asked: the client is the process that started this one (or the peer the
/// application connected itself), acting for whoever started it. Its calls carry no
/// principal, unless the application names one for the whole session with
/// [`stdio_principal`](Self::stdio_principal).
///
/// ```
/// use std::sync::Arc;
///
/// use hookchain::auth::Denied;
/// use hookchain::auth::http::{header, request::Parts};
/// use hookchain::prelude::*;
/// use hookchain::{Principal, ToolContext, tool};
/// use hookchain_mcp::{McpToolServer, ServeError};
///
/// /// Says who called.
/// #[tool]
/// async fn whoami(cx: ToolContext<'_>) -> String {
///     cx.get::<Principal>()
///         .map_or_else(|| "no one".to_owned(), |who| who.id().to_owned())
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Arc::new(Agent::builder(ScriptedModel::new([])).tool(whoami).build()?);
///
/// // Not told who may call: it does not serve HTTP.
/// let unsaid = McpToolServer::new(agent.clone());
/// assert!(matches!(unsaid.http_service(), Err(ServeError::NoAuthorizer)));
///
/// // `Authorization: Bearer <user>` taken as the user (a stand-in for a real token check).
/// let server = McpToolServer::new(agent).authorize(|parts: &Parts| {
///     // Read before the `async` block: its future does not borrow the request.
///     let bearer = parts
///         .headers
///         .get(header::AUTHORIZATION)
///         .and_then(|value| value.to_str().ok())
///         .and_then(|value| value.strip_prefix("Bearer "))
///         .map(str::to_owned);
///     async move {
///         let user = bearer.ok_or_else(|| {
///             Denied::unauthenticated("sign in first").with_challenge(r#"Bearer realm="mcp""#)
///         })?;
///         Ok(Principal::new(user))
///     }
/// });
/// // Mount it in a server of your own, or `server.serve_http(listener, shutdown)`.
/// let service = server.http_service()?;
/// # let _ = service;
/// # Ok(())
/// # }
/// ```
///
/// Examples: *Serving an agent's tools* in the docs of `hookchain::mcp` (feature `mcp-serve`).
pub struct McpToolServer<M, C> {
    agent: Arc<Agent<M, C>>,
    settings: Arc<Settings>,
    /// The log level its session's client set (a server per session: see `for_session`).
    session_level: SessionLevel,
}

/// What the server says of itself, and its bounds.
#[derive(Debug, Clone)]
struct Settings {
    name: String,
    version: String,
    instructions: Option<String>,
    max_argument_bytes: usize,
    http: StreamableHttpServerConfig,
    /// Who may call over HTTP.
    access: Access,
    /// The principal of the calls over stdio (and `serve_io`), if the application names one.
    stdio_principal: Option<Principal>,
    /// The tools as `tools/list` lists them, made once (an agent's tools do not change).
    tools: Arc<Vec<McpToolInfo>>,
    /// Where the calls waiting for their client's answer are kept, if anywhere.
    pauses: Option<ServedPauses>,
    /// Where the calls served as tasks are kept, if any are.
    tasks: Option<ServedTasks>,
}

impl<M, C> McpToolServer<M, C> {
    /// A server of `agent`'s tools, named after the agent ([`Agent::name`]), with the version
    /// of this crate (give your application's with [`version`](Self::version)).
    pub fn new(agent: Arc<Agent<M, C>>) -> Self {
        let tools = agent
            .tools()
            .specs()
            .iter()
            .map(handler::tool_info)
            .collect();
        let settings = Settings {
            name: agent.name().to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            http: StreamableHttpServerConfig::default(),
            access: Access::Unset,
            stdio_principal: None,
            tools: Arc::new(tools),
            pauses: None,
            tasks: None,
        };
        Self {
            agent,
            settings: Arc::new(settings),
            session_level: SessionLevel::default(),
        }
    }

    /// The name the server gives in `initialize` (`serverInfo.name`).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.settings_mut().name = name.into();
        self
    }

    /// The version the server gives in `initialize` (`serverInfo.version`).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.settings_mut().version = version.into();
        self
    }

    /// Instructions for the client's model, given in `initialize`.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.settings_mut().instructions = Some(instructions.into());
        self
    }

    /// The largest `arguments` of one call, as JSON: a larger one is refused with a JSON-RPC
    /// error before anything runs; [`DEFAULT_MAX_ARGUMENT_BYTES`] (1 MiB) by default. (A whole
    /// message is bounded before that by rmcp: a 16 MiB line on stdio, a 4 MiB request body
    /// over HTTP unless [`http_config`](Self::http_config) says otherwise.)
    #[must_use]
    pub fn max_argument_bytes(mut self, max: usize) -> Self {
        self.settings_mut().max_argument_bytes = max;
        self
    }

    /// rmcp's configuration of the streamable-HTTP service: the `Host` values it accepts
    /// (only loopback ones by default, against DNS rebinding: list yours to serve beyond this
    /// machine), the `Origin` values, the largest request body, sessions, keep-alives.
    #[must_use]
    pub fn http_config(mut self, config: StreamableHttpServerConfig) -> Self {
        self.settings_mut().http = config;
        self
    }

    /// Over HTTP, `authorizer` says who sent each request: it is called on every request
    /// (each of a session's too), a refusal is answered as it says and runs nothing, and the
    /// principal it returns is in the `RunContext` of the calls the request makes. See
    /// [Who may call](Self#who-may-call). Replaces [`allow_anonymous`](Self::allow_anonymous).
    #[must_use]
    pub fn authorize(mut self, authorizer: impl Authorize) -> Self {
        self.settings_mut().access = Access::Authorized(Arc::new(authorizer));
        self
    }

    /// Over HTTP, lets anyone who can reach the address call every tool, each call running as
    /// [`Principal::anonymous`] (which owns nothing): for a server on loopback and for tests.
    /// Without this or [`authorize`](Self::authorize), the server does not serve HTTP.
    /// Replaces `authorize`.
    #[must_use]
    pub fn allow_anonymous(mut self) -> Self {
        self.settings_mut().access = Access::Anonymous;
        self
    }

    /// The principal of the calls over stdio and [`serve_io`](Self::serve_io): the one the
    /// application runs for (the user who started it, a peer it authenticated). Without it,
    /// those calls carry no principal. HTTP calls never get it: theirs is the authorizer's.
    #[must_use]
    pub fn stdio_principal(mut self, principal: Principal) -> Self {
        self.settings_mut().stdio_principal = Some(principal);
        self
    }

    /// Keeps the calls that wait for an answer in `pauses`, so that a client of MCP
    /// 2026-07-28 answers them (an approval, a question) with an input-required round trip,
    /// on any replica that has the same store and keys. See [`ServedPauses`].
    #[must_use]
    pub fn pauses(mut self, pauses: ServedPauses) -> Self {
        self.settings_mut().pauses = Some(pauses);
        self
    }

    /// Serves the tools `tasks` names as MCP Tasks (the `io.modelcontextprotocol/tasks`
    /// extension) to the clients that take them: a call answered at once with a task, run in
    /// the background, its status and result read with `tasks/get` on any replica that
    /// shares the store. See [`ServedTasks`].
    #[must_use]
    pub fn tasks(mut self, tasks: ServedTasks) -> Self {
        self.settings_mut().tasks = Some(tasks);
        self
    }

    /// The agent whose tools are served.
    #[must_use]
    pub fn agent(&self) -> &Arc<Agent<M, C>> {
        &self.agent
    }

    fn settings_mut(&mut self) -> &mut Settings {
        // A builder call on a server shared with a running one changes only this one.
        Arc::make_mut(&mut self.settings)
    }
}

impl<M, C> McpToolServer<M, C> {
    /// The server of a new session: the same agent and settings, the session's own state.
    pub(crate) fn for_session(&self) -> Self {
        Self {
            agent: self.agent.clone(),
            settings: self.settings.clone(),
            session_level: SessionLevel::default(),
        }
    }
}

impl<M, C> Clone for McpToolServer<M, C> {
    fn clone(&self) -> Self {
        Self {
            agent: self.agent.clone(),
            settings: self.settings.clone(),
            session_level: self.session_level.clone(),
        }
    }
}

impl<M, C> fmt::Debug for McpToolServer<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolServer")
            .field("name", &self.settings.name)
            .field("version", &self.settings.version)
            .field("tools", &self.settings.tools.len())
            .field("max_argument_bytes", &self.settings.max_argument_bytes)
            .field("access", &self.settings.access)
            .finish_non_exhaustive()
    }
}
