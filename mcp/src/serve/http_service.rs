//! [`McpHttpService`]: the streamable-HTTP MCP endpoint, every request authorized before rmcp
//! reads it.

use std::convert::Infallible;
use std::fmt::{self, Display};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use hookchain_core::{Middleware, Model, auth};
use http_body::Body;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;

use super::McpToolServer;
use super::access::Gatekeeper;
use super::problem::{HttpResponse, denied_response, session_not_found};
use super::sessions::{OwnedSessions, SessionOwners};

/// An [`McpToolServer`]'s streamable-HTTP endpoint as a tower `Service` (any path), made by
/// [`McpToolServer::http_service`]: mount it in a server of your own (an axum `Router` with
/// `route_service("/mcp", …)`, say).
///
/// Every request — the `initialize` that opens a session, each `POST` in it, the `GET` of its
/// event stream, the `DELETE` that ends it — is given to the server's authorizer before
/// anything else reads it:
///
/// - A refusal is answered with its status (`401`, `403`), a problem body
///   (`application/problem+json`: `type` `urn:hookchain:problem:<code>`, `title`, `status`,
///   `detail`, `code`) and its `WWW-Authenticate` challenge, if it has one. Nothing runs.
/// - The principal goes with the request to rmcp (in the extensions of its
///   [`Parts`](http::request::Parts)), and from there into the [`RunContext`] of the tool call
///   it asks for: tools and hooks read it with `cx.get::<Principal>()`.
/// - A session belongs to the principal that opened it: a request naming it
///   (`Mcp-Session-Id`) with another principal — another id, tenant, or anonymity — is
///   answered `404` as a session that does not exist. A session this process did not open is
///   refused too unless the server [allows anonymous](McpToolServer::allow_anonymous) calls,
///   so sessions are not restored from an rmcp session store under an authorizer (the client
///   opens a new one, as MCP clients do on a `404`).
///
/// [`RunContext`]: hookchain_core::RunContext
pub struct McpHttpService<M, C> {
    mcp: StreamableHttpService<McpToolServer<M, C>, OwnedSessions>,
    gatekeeper: Gatekeeper,
    owners: Arc<SessionOwners>,
}

impl<M, C> McpHttpService<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    pub(super) fn new(server: McpToolServer<M, C>, gatekeeper: Gatekeeper) -> Self {
        let sessions = Arc::new(OwnedSessions::default());
        let owners = sessions.owners().clone();
        let config = server.settings.http.clone();
        let mcp = StreamableHttpService::new(move || Ok(server.for_session()), sessions, config);
        Self {
            mcp,
            gatekeeper,
            owners,
        }
    }

    /// The response to `request`: a refusal, or rmcp's answer with the principal in the
    /// request's extensions.
    async fn handle<B>(&self, request: http::Request<B>) -> HttpResponse
    where
        B: Body + Send + 'static,
        B::Error: Display,
    {
        let (mut parts, body) = request.into_parts();
        let principal = match auth::authorize(&*self.gatekeeper.authorizer, &parts).await {
            Ok(principal) => principal,
            Err(denied) => {
                tracing::debug!(%denied, method = %parts.method, "an MCP request was refused");
                return denied_response(&denied);
            }
        };
        // rmcp reads the header the same way (a value that is not text is no session).
        let session = parts
            .headers
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok());
        if let Some(session) = session
            && !self
                .owners
                .admits(session, &principal, self.gatekeeper.anonymous)
        {
            tracing::debug!(
                principal = principal.id(),
                "an MCP request named a session that is not its principal's"
            );
            return session_not_found();
        }
        parts.extensions.insert(principal);
        self.mcp
            .handle(http::Request::from_parts(parts, body))
            .await
    }
}

impl<M, C, B> tower_service::Service<http::Request<B>> for McpHttpService<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
    B: Body + Send + 'static,
    B::Error: Display,
    B::Data: Send + 'static,
{
    type Response = HttpResponse;
    type Error = Infallible;
    // rmcp's own service boxes its future the same way: one allocation per HTTP request.
    type Future = BoxFuture<'static, Result<HttpResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}

impl<M, C> Clone for McpHttpService<M, C> {
    fn clone(&self) -> Self {
        Self {
            mcp: self.mcp.clone(),
            gatekeeper: self.gatekeeper.clone(),
            owners: self.owners.clone(),
        }
    }
}

impl<M, C> fmt::Debug for McpHttpService<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpService")
            .field("anonymous", &self.gatekeeper.anonymous)
            .finish_non_exhaustive()
    }
}
