//! Who may call a server over HTTP: the setting that [`McpToolServer::authorize`] and
//! [`McpToolServer::allow_anonymous`] make, and without which it does not serve HTTP.
//!
//! [`McpToolServer::authorize`]: super::McpToolServer::authorize
//! [`McpToolServer::allow_anonymous`]: super::McpToolServer::allow_anonymous

use std::fmt;
use std::sync::Arc;

use hookchain_core::auth::{Anonymous, SharedAuthorizer};

use super::ServeError;

/// Who may call over HTTP, as the application said (or did not).
#[derive(Clone, Default)]
pub(super) enum Access {
    /// Not said: the server refuses to serve HTTP ([`ServeError::NoAuthorizer`]), rather than
    /// let anyone who reaches the address run the agent's tools by default.
    #[default]
    Unset,
    /// Anyone, as the anonymous principal (`allow_anonymous()`).
    Anonymous,
    /// Whom the application's authorizer vouches for.
    Authorized(SharedAuthorizer),
}

/// The authorizer every HTTP request goes through, once the setting says who may call.
#[derive(Clone)]
pub(super) struct Gatekeeper {
    pub(super) authorizer: SharedAuthorizer,
    /// Whether every request is the anonymous principal: then no session belongs to anyone in
    /// particular, and a session this process does not know may be restored from rmcp's
    /// session store (see `sessions.rs`).
    pub(super) anonymous: bool,
}

impl Access {
    /// The gatekeeper of the HTTP service, or the error that says how to choose one.
    pub(super) fn gatekeeper(&self) -> Result<Gatekeeper, ServeError> {
        match self {
            Access::Unset => Err(ServeError::NoAuthorizer),
            Access::Anonymous => Ok(Gatekeeper {
                authorizer: Arc::new(Anonymous),
                anonymous: true,
            }),
            Access::Authorized(authorizer) => Ok(Gatekeeper {
                authorizer: authorizer.clone(),
                anonymous: false,
            }),
        }
    }
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The authorizer is the application's (keys, a verifier): named, never shown.
        f.write_str(match self {
            Access::Unset => "Unset",
            Access::Anonymous => "Anonymous",
            Access::Authorized(_) => "Authorized",
        })
    }
}
