//! An agent's tools served as an MCP server: the other way round from
//! [`McpToolset`](crate::McpToolset).

mod content;
mod error;
mod handler;
mod http;
mod stdio;

use std::fmt;
use std::sync::Arc;

use hookchain_core::Agent;
use rmcp::model::Tool as McpToolInfo;
use rmcp::transport::StreamableHttpServerConfig;

pub use error::ServeError;

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
///   that asks the user — is a result with `isError: true` saying that the call needs an
///   answer from outside that this server cannot ask for, and did not run (or complete). MCP
///   has no pause to resume later, and an approval is not the client's to give: the client
///   is the party being gated. Serve the tools that need approval from an agent whose chain
///   does not gate them only if the client's user is the one who approves.
/// - A call of a tool the agent does not have, and arguments over
///   [`max_argument_bytes`](Self::max_argument_bytes) or not a JSON object, are refused with a
///   JSON-RPC error (`-32602`, invalid params), before anything runs.
/// - A request the client cancels (`notifications/cancelled`) drops the call's future, as a
///   cancelled run does: the tool stops at its next `.await`.
///
/// Each call has a fresh context (no history) and fresh middleware state: a limit per run or
/// per thread bounds one call, not a client's session (see [`Agent::call_tool`]).
///
/// Examples: *Serving an agent's tools* in the docs of `hookchain::mcp` (feature `mcp-serve`).
pub struct McpToolServer<M, C> {
    agent: Arc<Agent<M, C>>,
    settings: Arc<Settings>,
}

/// What the server says of itself, and its bounds.
#[derive(Debug, Clone)]
struct Settings {
    name: String,
    version: String,
    instructions: Option<String>,
    max_argument_bytes: usize,
    http: StreamableHttpServerConfig,
    /// The tools as `tools/list` lists them, made once (an agent's tools do not change).
    tools: Arc<Vec<McpToolInfo>>,
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
            tools: Arc::new(tools),
        };
        Self {
            agent,
            settings: Arc::new(settings),
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

impl<M, C> Clone for McpToolServer<M, C> {
    fn clone(&self) -> Self {
        Self {
            agent: self.agent.clone(),
            settings: self.settings.clone(),
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
            .finish_non_exhaustive()
    }
}
