//! Why connecting to an MCP server, or listing its tools, failed.

use std::time::Duration;

/// Why a toolset could not be built: a server did not start or answer, its tool list was
/// refused, or two tools ended up with the same name.
///
/// A failed *call* is not an `Error`: it becomes a [`ToolError`](hookchain_core::ToolError)
/// that the model reads (see [`McpTool`](crate::McpTool)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The stdio server's process could not be started (no such program, not executable).
    #[error("MCP server `{server}`: could not start `{program}`")]
    Spawn {
        /// The server's name.
        server: String,
        /// The program that was run.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client for a streamable-HTTP server could not be built.
    #[error("MCP server `{server}`: could not build the HTTP client")]
    HttpClient {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A configured HTTP header has a name or value HTTP does not allow.
    #[error("MCP server `{server}`: invalid HTTP header `{header}`")]
    InvalidHeader {
        /// The server's name.
        server: String,
        /// The header's name, as configured.
        header: String,
    },
    /// The server asks for an OAuth authorization where no run can pause (connecting, in
    /// [`McpToolset::connect`](crate::McpToolset::connect)), and no
    /// [`AuthorizationHandler`](crate::oauth::AuthorizationHandler) is configured to have a
    /// person give it: `url` is the authorization URL, for the application to show what is
    /// missing (see [`crate::oauth`]). The authorization it starts is not finished through
    /// this error: configure a handler, or let the server list its tools without a token, so
    /// that a tool call pauses the run on an
    /// [`McpAuthorization`](crate::oauth::McpAuthorization) instead.
    #[error("MCP server `{server}` needs an authorization: open {url}")]
    AuthorizationRequired {
        /// The server's name.
        server: String,
        /// The authorization server's URL to open in a browser.
        url: String,
    },
    /// The OAuth authorization of the server failed.
    #[error("MCP server `{server}`: authorization failed")]
    Authorization {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: crate::oauth::AuthorizationError,
    },
    /// The MCP handshake (`initialize`) failed: the server exited, or spoke something else.
    #[error("MCP server `{server}`: the handshake failed{stderr}", stderr = stderr_suffix(.stderr))]
    Initialize {
        /// The server's name.
        server: String,
        /// The last lines the server wrote to stderr, if it is a stdio server that wrote any.
        stderr: Option<String>,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server did not finish its handshake and tool listing in time.
    #[error("MCP server `{server}` did not answer within {timeout:?}{stderr}", stderr = stderr_suffix(.stderr))]
    ConnectTimeout {
        /// The server's name.
        server: String,
        /// The connect timeout.
        timeout: Duration,
        /// The last lines the server wrote to stderr, if any.
        stderr: Option<String>,
    },
    /// `tools/list` failed.
    #[error("MCP server `{server}`: listing its tools failed")]
    ListTools {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: rmcp::ServiceError,
    },
    /// The server's tool list is over a limit (too many tools or pages, a schema too large):
    /// refused rather than handed to the model.
    #[error("MCP server `{server}`: {what} (limit {limit})")]
    TooLarge {
        /// The server's name.
        server: String,
        /// What is over the limit.
        what: String,
        /// The limit.
        limit: usize,
    },
    /// Two tools, of the same server or of two, would be offered to the model under one name:
    /// give one of the servers a [`prefix`](crate::McpServer::prefix).
    #[error(
        "two tools named `{name}`: `{first_tool}` of MCP server `{first_server}` and \
         `{second_tool}` of MCP server `{second_server}`; give one server a prefix"
    )]
    DuplicateToolName {
        /// The name both would have.
        name: String,
        /// The server of the first tool.
        first_server: String,
        /// The first tool's name on its server.
        first_tool: String,
        /// The server of the second tool.
        second_server: String,
        /// The second tool's name on its server.
        second_tool: String,
    },
    /// Two servers of one toolset have the same name (names are how errors and tools tell them
    /// apart).
    #[error("two MCP servers named `{0}`")]
    DuplicateServerName(String),
}

fn stderr_suffix(stderr: &Option<String>) -> String {
    match stderr {
        Some(lines) => format!("; its stderr ended with:\n{lines}"),
        None => String::new(),
    }
}
