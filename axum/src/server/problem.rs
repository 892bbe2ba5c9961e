//! Errors as problem responses (RFC 9457, `application/problem+json`): a status, a stable
//! type, a title and a detail written for the client — never the error's internals (a
//! provider's message, a path, a database's text), which go to the logs.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A problem response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// A stable identifier of the problem (`urn:hookchain:problem:<code>`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The HTTP status's reason.
    pub title: &'static str,
    /// The status.
    pub status: u16,
    /// What went wrong, for the client.
    pub detail: String,
    /// The same code as in `type`, for clients that switch on it.
    pub code: &'static str,
    /// Seconds to wait before trying again, when that helps.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

impl Problem {
    /// A problem of status `status`, code `code`, with `detail`.
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            kind: format!("urn:hookchain:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error"),
            status: status.as_u16(),
            detail: detail.into(),
            code,
            retry_after: None,
        }
    }

    /// The problem, telling the client to try again after `seconds`.
    #[must_use]
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
