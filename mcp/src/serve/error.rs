//! Why serving an agent's tools stopped.

/// Why an [`McpToolServer`](crate::McpToolServer) stopped serving with an error.
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
}
