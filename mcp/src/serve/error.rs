//! Why serving an agent's tools stopped.

/// Why an [`McpToolServer`](crate::McpToolServer) did not serve, or stopped serving with an
/// error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client's MCP handshake (`initialize`) on stdio failed: it closed the stream, or
    /// spoke something else.
    #[error("the MCP handshake with the client failed")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The task serving the session on stdio ended abnormally (it panicked).
    #[error("the MCP session ended abnormally")]
    Session(#[source] tokio::task::JoinError),
    /// Reading the listener's address failed.
    #[error("the HTTP listener failed")]
    Listener(#[source] std::io::Error),
    /// The server was asked to serve HTTP without being told who may call: anyone who can
    /// reach the address would run the agent's tools.
    #[error(
        "the MCP server was not told who may call over HTTP: give it an authorizer with \
         `authorize(..)`, which is asked on every request who sent it, or call \
         `allow_anonymous()` to let anyone who can reach the address call every tool, each \
         call then running as the anonymous principal (for loopback and tests)"
    )]
    NoAuthorizer,
}
