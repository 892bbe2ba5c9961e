//! Serving on stdio: for a server an MCP client starts as its child process.

use hookchain_core::{Middleware, Model};
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{McpToolServer, ServeError};

impl<M, C> McpToolServer<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    /// Serves one MCP session on this process's stdin and stdout (the way an MCP client runs a
    /// server it started), until the client closes stdin. Log to stderr, never stdout: stdout
    /// carries the protocol.
    ///
    /// # Errors
    ///
    /// [`ServeError::Initialize`] when the client's handshake fails, [`ServeError::Session`]
    /// when the session's task panicked.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves one MCP session on `read` and `write` (newline-delimited JSON-RPC, as on stdio),
    /// until `read` ends: a pipe, a socket, an in-memory stream in a test.
    ///
    /// # Errors
    ///
    /// As [`serve_stdio`](Self::serve_stdio).
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .serve((read, write))
            .await
            .map_err(|error| ServeError::Initialize(Box::new(error)))?;
        let reason = running.waiting().await.map_err(ServeError::Session)?;
        tracing::debug!(?reason, "MCP session on stdio ended");
        Ok(())
    }
}
