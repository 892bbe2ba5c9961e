//! Serving over streamable HTTP: our authorizing service around rmcp's, on hyper, with a
//! graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hookchain_core::{Middleware, Model};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::{McpHttpService, McpToolServer, ServeError};

/// How long a graceful shutdown waits for requests in flight before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

impl<M, C> McpToolServer<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    /// The streamable-HTTP MCP endpoint as a tower `Service` (any path): mount it in a server
    /// of your own (an axum `Router` with `route_service("/mcp", …)`, say), with its own
    /// shutdown: cancel the [`http_config`](Self::http_config)'s `cancellation_token` to end
    /// the sessions. Every request goes through the server's authorizer first (see
    /// [`McpHttpService`] and [Who may call](Self#who-may-call)).
    ///
    /// # Errors
    ///
    /// [`ServeError::NoAuthorizer`] when the server was given neither
    /// [`authorize`](Self::authorize) nor [`allow_anonymous`](Self::allow_anonymous).
    pub fn http_service(&self) -> Result<McpHttpService<M, C>, ServeError> {
        let gatekeeper = self.settings.access.gatekeeper()?;
        Ok(McpHttpService::new(self.clone(), gatekeeper))
    }

    /// Serves MCP over streamable HTTP on `listener` (HTTP/1.1, any path) until `shutdown`
    /// completes, then shuts down gracefully: no new connection is accepted, the MCP sessions
    /// and their event streams end, and requests in flight get up to 10 s to finish.
    ///
    /// Every request goes through the server's authorizer first (see
    /// [Who may call](Self#who-may-call)). Only loopback `Host` values are accepted unless the
    /// [`http_config`](Self::http_config) lists others (rmcp's guard against DNS rebinding).
    ///
    /// # Errors
    ///
    /// [`ServeError::NoAuthorizer`] at once, serving nothing, when the server was given
    /// neither [`authorize`](Self::authorize) nor [`allow_anonymous`](Self::allow_anonymous);
    /// [`ServeError::Listener`] when the listener's address cannot be read. A connection that
    /// fails (an accept error, a client that breaks the protocol) is logged, and serving goes
    /// on.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        let sessions = self.settings.http.cancellation_token.child_token();
        let mut server = self;
        Arc::make_mut(&mut server.settings).http.cancellation_token = sessions.clone();
        let service = server.http_service()?;
        let address = listener.local_addr().map_err(ServeError::Listener)?;
        let graceful = GracefulShutdown::new();
        let connections = hyper::server::conn::http1::Builder::new();
        tracing::debug!(%address, "serving MCP over streamable HTTP");
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        // Out of file descriptors, most often: wait rather than spin.
                        tracing::warn!(%error, "accepting an MCP connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let service = TowerToHyperService::new(service.clone());
            let connection = connections.serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "an MCP connection ended with an error");
                }
            });
        }
        drop(listener);
        // Ends the sessions, so that their open event streams end too.
        sessions.cancel();
        if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("MCP connections still open after the grace period: dropped");
        }
        Ok(())
    }
}
