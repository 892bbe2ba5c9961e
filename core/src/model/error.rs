//! [`ModelError`]: why a model call failed, classified by what retry and fallback decide on.

use std::fmt;
use std::time::Duration;

use crate::report::BoxError;

/// What kind of failure a [`ModelError`] is: what retry and fallback middleware decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The provider rate-limited the request (HTTP 429); see [`ModelError::retry_after`].
    RateLimited,
    /// The provider is overloaded or failed on its side (HTTP 5xx, Anthropic's 529).
    Overloaded,
    /// The call took too long.
    Timeout,
    /// The connection could not be made, or broke before the answer was complete.
    Connection,
    /// The request does not fit the model's context window.
    ContextLengthExceeded,
    /// The provider refused the credentials (HTTP 401 or 403).
    Authentication,
    /// The provider rejected the request as invalid (other HTTP 4xx).
    InvalidRequest,
    /// The provider's content filter refused the request or the answer.
    ContentFiltered,
    /// The answer could not be understood: undecodable JSON, a truncated stream, a tool call
    /// that never ended, no answer at all.
    MalformedResponse,
    /// Any other failure.
    Other,
}

impl ModelErrorKind {
    /// Whether the same request may succeed if sent again: rate limited, overloaded, timed out
    /// and connection failures are; the others fail the same way every time.
    #[must_use]
    pub const fn is_retryable(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Overloaded | Self::Timeout | Self::Connection
        )
    }

    const fn describe(self) -> &'static str {
        match self {
            Self::RateLimited => "rate limited",
            Self::Overloaded => "provider overloaded",
            Self::Timeout => "timed out",
            Self::Connection => "connection failed",
            Self::ContextLengthExceeded => "context length exceeded",
            Self::Authentication => "authentication failed",
            Self::InvalidRequest => "invalid request",
            Self::ContentFiltered => "content filtered",
            Self::MalformedResponse => "malformed response",
            Self::Other => "model call failed",
        }
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why a [`Model`](crate::Model) call failed, classified by [`kind`](Self::kind).
///
/// `Display` says what failed; the cause, if any, is the [`source`](std::error::Error::source)
/// and is not repeated in the message, so printing the chain of sources shows each cause once.
///
/// ```
/// use std::time::Duration;
/// use hookchain::{ModelError, model::ModelErrorKind};
///
/// let error = ModelError::rate_limited("the provider rate-limited the request")
///     .with_status(429)
///     .with_retry_after(Duration::from_secs(2));
/// assert_eq!(error.kind(), ModelErrorKind::RateLimited);
/// assert!(error.is_retryable());
/// assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(error.to_string(), "the provider rate-limited the request");
/// ```
#[derive(Debug)]
pub struct ModelError {
    kind: ModelErrorKind,
    message: String,
    status: Option<u16>,
    retry_after: Option<Duration>,
    request_id: Option<String>,
    source: Option<BoxError>,
}

impl ModelError {
    /// An error of `kind`; `message` says what failed (not why: that is the source).
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
            request_id: None,
            source: None,
        }
    }

    /// Wraps a provider's error as the cause of a failure of kind [`Other`](ModelErrorKind::Other).
    ///
    /// An `Other` failure is **not retried** by [`ModelRetry`](crate::builtin::ModelRetry) nor
    /// taken as a reason to fall back (a failure of unknown cause would likely come again).
    /// A model of your own that knows better classifies its error with
    /// [`with_kind`](Self::with_kind) (or builds it with [`new`](Self::new) and its kind):
    ///
    /// ```
    /// use hookchain::{ModelError, ModelErrorKind};
    ///
    /// let io = std::io::Error::other("the GPU server is restarting");
    /// let error = ModelError::provider(io).with_kind(ModelErrorKind::Overloaded);
    /// assert!(error.is_retryable());
    /// assert!(!ModelError::provider(std::io::Error::other("?")).is_retryable());
    /// ```
    pub fn provider(error: impl Into<BoxError>) -> Self {
        Self::new(ModelErrorKind::Other, "the model provider failed").with_source(error)
    }

    /// The error, classified as `kind`: what decides whether
    /// [`ModelRetry`](crate::builtin::ModelRetry) retries it
    /// ([`ModelErrorKind::is_retryable`]) and what a fallback or a policy matches on.
    #[must_use]
    pub fn with_kind(mut self, kind: ModelErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// A [`RateLimited`](ModelErrorKind::RateLimited) error.
    pub fn rate_limited(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::RateLimited, message)
    }

    /// An [`Overloaded`](ModelErrorKind::Overloaded) error.
    pub fn overloaded(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Overloaded, message)
    }

    /// A [`Timeout`](ModelErrorKind::Timeout) error.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Timeout, message)
    }

    /// A [`Connection`](ModelErrorKind::Connection) error.
    pub fn connection(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Connection, message)
    }

    /// A [`ContextLengthExceeded`](ModelErrorKind::ContextLengthExceeded) error.
    pub fn context_length_exceeded(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::ContextLengthExceeded, message)
    }

    /// An [`Authentication`](ModelErrorKind::Authentication) error.
    pub fn authentication(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Authentication, message)
    }

    /// An [`InvalidRequest`](ModelErrorKind::InvalidRequest) error.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::InvalidRequest, message)
    }

    /// A [`ContentFiltered`](ModelErrorKind::ContentFiltered) error.
    pub fn content_filtered(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::ContentFiltered, message)
    }

    /// A [`MalformedResponse`](ModelErrorKind::MalformedResponse) error.
    pub fn malformed_response(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::MalformedResponse, message)
    }

    /// An [`Other`](ModelErrorKind::Other) error.
    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Other, message)
    }

    /// Records how long the provider asked to wait before trying again.
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: Duration) -> Self {
        self.retry_after = Some(retry_after);
        self
    }

    /// Records the HTTP status the provider answered with.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Records the id the provider gave the request (Anthropic's `request-id`, OpenAI's
    /// `x-request-id`), which its support asks for; `Display` shows it after the message.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// Records the cause of the failure, reported by [`source`](std::error::Error::source).
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What kind of failure this is.
    #[must_use]
    pub fn kind(&self) -> ModelErrorKind {
        self.kind
    }

    /// Whether the same request may succeed if sent again (see
    /// [`ModelErrorKind::is_retryable`]).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }

    /// How long the provider asked to wait before trying again, if it said.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The HTTP status the provider answered with, if the failure came from one.
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The id the provider gave the request, if it sent one.
    #[must_use]
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// What failed, without the cause.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str(self.kind.describe())?;
        } else {
            f.write_str(&self.message)?;
        }
        match &self.request_id {
            Some(id) => write!(f, " (request id {id})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// Renders an error and its chain of sources, one per line, the way a reporter would.
    fn chain(error: &dyn std::error::Error) -> Vec<String> {
        let mut lines = vec![error.to_string()];
        let mut next = error.source();
        while let Some(cause) = next {
            lines.push(cause.to_string());
            next = cause.source();
        }
        lines
    }

    #[derive(Debug, thiserror::Error)]
    #[error("connection reset by peer")]
    struct Reset;

    #[derive(Debug, thiserror::Error)]
    #[error("reading the response body failed")]
    struct Body(#[source] Reset);

    #[test]
    fn display_says_what_failed_and_source_says_why() {
        let error =
            ModelError::connection("the stream from the model broke").with_source(Body(Reset));
        assert_eq!(error.to_string(), "the stream from the model broke");
        assert_eq!(
            chain(&error),
            [
                "the stream from the model broke",
                "reading the response body failed",
                "connection reset by peer",
            ]
        );
        // Each cause appears once in the whole rendered chain.
        let rendered = chain(&error).join(": ");
        assert_eq!(rendered.matches("connection reset").count(), 1);
        assert!(error.source().is_some());
    }

    #[test]
    fn an_error_without_cause_has_no_source() {
        let error = ModelError::timeout("no answer within 30s");
        assert!(error.source().is_none());
        assert_eq!(chain(&error), ["no answer within 30s"]);
    }

    #[test]
    fn the_request_id_follows_the_message() {
        let error = ModelError::overloaded("anthropic request failed")
            .with_request_id("req_011CRxA")
            .with_source(Body(Reset));
        assert_eq!(error.request_id(), Some("req_011CRxA"));
        assert_eq!(
            chain(&error)[0],
            "anthropic request failed (request id req_011CRxA)"
        );
        assert_eq!(ModelError::timeout("t").request_id(), None);
    }

    #[test]
    fn an_empty_message_falls_back_to_the_kind() {
        assert_eq!(
            ModelError::new(ModelErrorKind::Overloaded, "").to_string(),
            "provider overloaded"
        );
    }

    #[test]
    fn provider_keeps_the_wrapped_error_as_the_source() {
        let error = ModelError::provider("provider is down");
        assert_eq!(error.kind(), ModelErrorKind::Other);
        assert_eq!(
            chain(&error),
            ["the model provider failed", "provider is down"]
        );
    }

    #[test]
    fn retryable_kinds_are_the_transient_ones() {
        use ModelErrorKind::*;
        for kind in [RateLimited, Overloaded, Timeout, Connection] {
            assert!(ModelError::new(kind, "x").is_retryable(), "{kind:?}");
        }
        for kind in [
            ContextLengthExceeded,
            Authentication,
            InvalidRequest,
            ContentFiltered,
            MalformedResponse,
            Other,
        ] {
            assert!(!ModelError::new(kind, "x").is_retryable(), "{kind:?}");
        }
    }

    #[test]
    fn builders_record_status_and_retry_after() {
        let error = ModelError::rate_limited("slow down")
            .with_status(429)
            .with_retry_after(Duration::from_secs(7));
        assert_eq!(error.status(), Some(429));
        assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(error.message(), "slow down");
        let plain = ModelError::other("x");
        assert_eq!((plain.status(), plain.retry_after()), (None, None));
    }
}
