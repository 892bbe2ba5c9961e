//! How to reach one MCP server, and the limits of a connection to it.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use crate::elicitation::ElicitationHandler;
use crate::oauth::McpOAuth;
use crate::protocol::McpProtocol;
use crate::trace_context::{TraceContext, TraceContextFn};

/// The default time a tool call may take (see [`McpServer::call_timeout`]).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default time to start a server, finish the handshake and list its tools (see
/// [`McpServer::connect_timeout`]).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default largest number of tools taken from one server (see [`McpServer::max_tools`]).
pub const DEFAULT_MAX_TOOLS: usize = 512;

/// The default most bytes of one tool result the model reads: 1 MiB (see
/// [`McpServer::max_result_bytes`]).
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;

/// One MCP server of a [`McpToolset`](crate::McpToolset): a program run as a child process
/// that speaks MCP on its stdin and stdout ([`stdio`](Self::stdio)), or a URL that speaks
/// streamable HTTP ([`http`](Self::http)).
///
/// Examples: *Servers and their tools* in the docs of `hookchain::mcp`.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) prefix: Option<String>,
    pub(crate) call_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) max_tools: usize,
    pub(crate) max_result_bytes: usize,
    pub(crate) elicitation: bool,
    pub(crate) protocol: McpProtocol,
    pub(crate) elicitation_handler: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) trace_context: Option<TraceContextFn>,
}

/// Where the server is.
#[derive(Clone)]
pub(crate) enum Endpoint {
    Stdio(StdioCommand),
    Http(HttpEndpoint),
}

/// The command of a stdio server.
#[derive(Debug, Clone)]
pub(crate) struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) current_dir: Option<PathBuf>,
}

/// The URL and headers of a streamable-HTTP server.
#[derive(Clone)]
pub(crate) struct HttpEndpoint {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) bearer_token: Option<String>,
    pub(crate) oauth: Option<Box<McpOAuth>>,
}

impl McpServer {
    /// The server `name` (used in errors, logs and [`McpToolset`](crate::McpToolset) lookups),
    /// run as the child process `program`, speaking MCP on its stdin and stdout. The toolset
    /// owns the process: it is killed and reaped when the toolset and its tools are dropped
    /// or [closed](crate::McpToolset::close), and restarted when it dies. What it writes to
    /// stderr is logged (`tracing`, target `hookchain_mcp::stderr`), and its last lines are
    /// kept for the errors that say it failed.
    pub fn stdio(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        Self::new(
            name,
            Endpoint::Stdio(StdioCommand {
                program: program.into(),
                args: Vec::new(),
                env: Vec::new(),
                current_dir: None,
            }),
        )
    }

    /// The server `name` at `url` (its MCP endpoint, often ending in `/mcp`), over streamable
    /// HTTP: TLS with rustls and the platform's certificate verifier.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            name,
            Endpoint::Http(HttpEndpoint {
                url: url.into(),
                headers: Vec::new(),
                bearer_token: None,
                oauth: None,
            }),
        )
    }

    fn new(name: impl Into<String>, endpoint: Endpoint) -> Self {
        Self {
            name: name.into(),
            endpoint,
            prefix: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_tools: DEFAULT_MAX_TOOLS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            elicitation: true,
            protocol: McpProtocol::Negotiate,
            elicitation_handler: None,
            trace_context: None,
        }
    }

    /// Adds an argument of a stdio server's program (nothing for an HTTP server).
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.args.push(arg.into());
        }
        self
    }

    /// Adds arguments of a stdio server's program (nothing for an HTTP server).
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.args.extend(args.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable of a stdio server's process (nothing for an HTTP server);
    /// the process inherits this process's environment otherwise.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.env.push((key.into(), value.into()));
        }
        self
    }

    /// The working directory of a stdio server's process (nothing for an HTTP server).
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.current_dir = Some(dir.into());
        }
        self
    }

    /// Adds an HTTP header sent with every request to an HTTP server (nothing for a stdio
    /// server). A name or value HTTP does not allow fails the connection
    /// ([`Error::InvalidHeader`](crate::Error::InvalidHeader)).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` to an HTTP server (nothing for a stdio server).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.bearer_token = Some(token.into());
        }
        self
    }

    /// Authorizes with OAuth 2.1 at the server's authorization server, as MCP specifies,
    /// when the server asks for it (nothing for a stdio server): see [`crate::oauth`]. The
    /// token replaces a [`bearer_token`](Self::bearer_token).
    #[must_use]
    pub fn oauth(mut self, oauth: McpOAuth) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.oauth = Some(Box::new(oauth));
        }
        self
    }

    /// Puts `prefix` and `_` before the names of this server's tools, as the model sees them
    /// (`git` makes `status` `git_status`); the server is still called with its own names.
    /// Two servers offering a tool of the same name need a prefix on one of them.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// How long a tool call may take before it ends with an error the model reads (the server
    /// is told the call is cancelled); [`DEFAULT_CALL_TIMEOUT`] by default.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long starting the server (or reaching it), its handshake and the listing of its
    /// tools may take; [`DEFAULT_CONNECT_TIMEOUT`] by default.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The largest number of tools taken from this server: a longer list is refused
    /// ([`Error::TooLarge`](crate::Error::TooLarge)); [`DEFAULT_MAX_TOOLS`] by default.
    #[must_use]
    pub fn max_tools(mut self, max: usize) -> Self {
        self.max_tools = max;
        self
    }

    /// The most bytes of one tool result of this server that the model reads;
    /// [`DEFAULT_MAX_RESULT_BYTES`] (1 MiB) by default. A result is sent to the model whole,
    /// and again on every later turn of the run: beyond this, its text is cut (on a character
    /// boundary) and its images and links that do not fit are dropped, and a note at the end
    /// says how much was cut and what was dropped
    /// (`[… 7,340,032 more bytes cut: the result was larger than this agent takes]`). The bytes
    /// counted are those sent to the model: a text's, an image's base64 data, the text of a
    /// link or of structured JSON. (The transport bounds one message of the server to 16 MiB
    /// before this.)
    #[must_use]
    pub fn max_result_bytes(mut self, max: usize) -> Self {
        self.max_result_bytes = max;
        self
    }

    /// Whether the server is told that this client answers elicitations (forms): on by
    /// default. A call whose server elicits then pauses the run with an interrupt, and goes on
    /// when the run is resumed with the user's answer (see [`crate::elicitation`]). Off, the
    /// server is told nothing (servers then offer no tools that need an answer, or refuse to
    /// ask), and an elicitation it sends anyway is declined.
    #[must_use]
    pub fn elicitation(mut self, enabled: bool) -> Self {
        self.elicitation = enabled;
        self
    }

    /// Answers the server's elicitations in the process when `handler` has the answer (see
    /// [`ElicitationHandler`]); the others pause the run, as without it. For a client with
    /// nobody to ask, [`accept_defaults`](crate::elicitation::accept_defaults) accepts every
    /// form as its schema fills it.
    #[must_use]
    pub fn on_elicitation(mut self, handler: impl ElicitationHandler + 'static) -> Self {
        self.elicitation_handler = Some(Arc::new(handler));
        self
    }

    /// The revision of MCP spoken with the server: the newest both sides speak by default
    /// ([`McpProtocol::Negotiate`]). Pin one for a server that is known to speak it — a server
    /// that ignores requests it does not know is taken for an older one only after a wait.
    #[must_use]
    pub fn protocol(mut self, protocol: McpProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Sends the W3C trace context of the work each request is part of in the request's
    /// `_meta` (`traceparent`, and `tracestate` when there is one: SEP-414), so that the
    /// server's spans join the agent's trace. `current` says what that context is; it is
    /// called when a request is made, in the task that makes it — a tool call's, inside its
    /// `execute_tool` span — and returns `None` when there is no trace to join. The requests
    /// that carry it are `tools/call` and `tools/list` (a listing made in a task of its own,
    /// after a changed list, is in no span of the application's).
    ///
    /// This crate has no OpenTelemetry dependency: with `tracing-opentelemetry`, the current
    /// span's OpenTelemetry context gives it.
    ///
    /// ```no_run
    /// use hookchain_mcp::{McpServer, TraceContext};
    /// use opentelemetry::trace::TraceContextExt;
    /// use tracing_opentelemetry::OpenTelemetrySpanExt;
    ///
    /// /// The trace context of the current `tracing` span, as tracing-opentelemetry keeps it.
    /// fn current_trace_context() -> Option<TraceContext> {
    ///     let context = tracing::Span::current().context();
    ///     let span = context.span();
    ///     let span_context = span.span_context();
    ///     if !span_context.is_valid() {
    ///         return None;
    ///     }
    ///     let traceparent = format!(
    ///         "00-{}-{}-{:02x}",
    ///         span_context.trace_id(),
    ///         span_context.span_id(),
    ///         span_context.trace_flags().to_u8(),
    ///     );
    ///     let tracestate = span_context.trace_state().header();
    ///     TraceContext::new(traceparent, Some(tracestate))
    /// }
    ///
    /// let server = McpServer::http("docs", "https://mcp.example.com/mcp")
    ///     .trace_context(current_trace_context);
    /// # drop(server);
    /// ```
    #[must_use]
    pub fn trace_context(
        mut self,
        current: impl Fn() -> Option<TraceContext> + Send + Sync + 'static,
    ) -> Self {
        self.trace_context = Some(TraceContextFn(Arc::new(current)));
        self
    }

    /// The server's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("prefix", &self.prefix)
            .field("call_timeout", &self.call_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_tools", &self.max_tools)
            .field("max_result_bytes", &self.max_result_bytes)
            .field("elicitation", &self.elicitation)
            .field("protocol", &self.protocol)
            .field("elicitation_handler", &self.elicitation_handler.is_some())
            .field("trace_context", &self.trace_context.is_some())
            .finish()
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Stdio(command) => f.debug_tuple("Stdio").field(command).finish(),
            Endpoint::Http(http) => f.debug_tuple("Http").field(http).finish(),
        }
    }
}

impl fmt::Debug for HttpEndpoint {
    /// Header values and the token are secrets (an API key): only the names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url)
            .field("headers", &names)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("oauth", &self.oauth)
            .finish()
    }
}
