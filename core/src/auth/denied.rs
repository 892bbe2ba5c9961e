//! [`Denied`]: an authorizer's refusal, as a server tells it to the client.

use std::fmt;

use http::StatusCode;

/// Why a request is refused by an [`Authorize`](super::Authorize)r: `401` (no valid
/// credentials; with a `WWW-Authenticate` challenge if you give one) or `403` (credentials,
/// but not enough). A server answers it as a problem response with the status, the code
/// (`unauthenticated`, `forbidden`) and `detail` — words for the client: never put a token or
/// a verifier's error in them (log those).
#[derive(Clone, PartialEq, Eq)]
pub struct Denied {
    status: StatusCode,
    detail: String,
    challenge: Option<String>,
}

impl Denied {
    /// `401`: the request carries no valid credentials.
    pub fn unauthenticated(detail: impl Into<String>) -> Self {
        Denied {
            status: StatusCode::UNAUTHORIZED,
            detail: detail.into(),
            challenge: None,
        }
    }

    /// `403`: the credentials are valid, and do not allow this.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Denied {
            status: StatusCode::FORBIDDEN,
            detail: detail.into(),
            challenge: None,
        }
    }

    /// A refusal of the server's own: the authorizer returned a principal that cannot be used.
    pub(crate) fn misconfigured() -> Self {
        Denied {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            detail: "the server could not establish who is asking".to_owned(),
            challenge: None,
        }
    }

    /// The refusal, with the `WWW-Authenticate` challenge `challenge` (`Bearer realm="api"`).
    #[must_use]
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = Some(challenge.into());
        self
    }

    /// Its status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Its words for the client.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Its `WWW-Authenticate` challenge, if it has one.
    #[must_use]
    pub fn challenge(&self) -> Option<&str> {
        self.challenge.as_deref()
    }

    /// The stable code a server's problem response carries.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self.status {
            StatusCode::UNAUTHORIZED => "unauthenticated",
            StatusCode::FORBIDDEN => "forbidden",
            _ => "internal",
        }
    }
}

impl fmt::Debug for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Denied")
            .field("status", &self.status.as_u16())
            .field("detail", &self.detail)
            .field("challenge", &self.challenge)
            .finish()
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused ({}): {}", self.status.as_u16(), self.detail)
    }
}

impl std::error::Error for Denied {}
