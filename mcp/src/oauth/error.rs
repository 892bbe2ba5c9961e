//! Why authorizing at a server's authorization server failed.

use super::handler::{CallbackError, HandlerError};

/// Why this client could not get a token a server accepts (the source of
/// [`Error::Authorization`](crate::Error::Authorization)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizationError {
    /// A step of OAuth failed: discovery (the server's protected-resource metadata, the
    /// authorization server's metadata, an issuer or a `resource` that does not match),
    /// registration, the token exchange (an `iss` that is missing or wrong), a refresh.
    #[error("OAuth failed")]
    OAuth(#[source] Box<rmcp::transport::AuthError>),
    /// The [`AuthorizationHandler`](super::AuthorizationHandler) gave no answer.
    #[error("the authorization handler gave no answer")]
    Handler(#[source] HandlerError),
    /// The [`AssertionSource`](super::AssertionSource) of a JWT-bearer grant (or the ID
    /// token's, of enterprise-managed authorization) gave no assertion.
    #[error("the assertion source gave no assertion")]
    Assertion(#[source] HandlerError),
    /// The handler's answer is not an authorization server's answer.
    #[error("the authorization answer is unusable")]
    Callback(#[source] CallbackError),
    /// The server still refused after this many authorizations in one connect or call (a
    /// scope it asks for and the authorization server does not grant, say).
    #[error("the server still refused after {0} authorizations")]
    TooManyAttempts(usize),
}

impl From<rmcp::transport::AuthError> for AuthorizationError {
    fn from(error: rmcp::transport::AuthError) -> Self {
        AuthorizationError::OAuth(Box::new(error))
    }
}
