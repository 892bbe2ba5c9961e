//! Refusals as HTTP responses: an authorizer's [`Denied`] as a problem response (RFC 9457,
//! the shape of `hookchain-axum`'s), and a session the caller may not use as rmcp's own
//! "session not found".

use std::convert::Infallible;

use bytes::Bytes;
use hookchain_core::auth::Denied;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde::Serialize;

/// The responses of the HTTP service: rmcp's body type, so that ours and rmcp's are one type.
pub(super) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// A problem response's body (`application/problem+json`).
#[derive(Debug, Serialize)]
struct Problem<'a> {
    /// `urn:hookchain:problem:<code>`, as every server of hookchain's writes it.
    #[serde(rename = "type")]
    kind: String,
    title: &'static str,
    status: u16,
    detail: &'a str,
    code: &'static str,
}

/// The response that refuses a request as `denied` says: its status, a problem body with its
/// code and words for the client, and its `WWW-Authenticate` challenge if it has one.
pub(super) fn denied_response(denied: &Denied) -> HttpResponse {
    let status = denied.status();
    let problem = Problem {
        kind: format!("urn:hookchain:problem:{}", denied.code()),
        title: status.canonical_reason().unwrap_or("Error"),
        status: status.as_u16(),
        detail: denied.detail(),
        code: denied.code(),
    };
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    if let Some(challenge) = denied.challenge() {
        match HeaderValue::from_str(challenge) {
            Ok(value) => {
                headers.insert(header::WWW_AUTHENTICATE, value);
            }
            // The authorizer's text; the refusal stands without its challenge.
            Err(_) => tracing::warn!("an authorizer's challenge is not a valid header value"),
        }
    }
    response
}

/// rmcp's answer to a session it does not have, word for word: a session that belongs to
/// another principal is answered so, and cannot be told from one that does not exist.
pub(super) fn session_not_found() -> HttpResponse {
    let mut response =
        Response::new(Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_json(response: HttpResponse) -> serde_json::Value {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn a_refusal_is_a_problem_with_its_status_code_and_challenge() {
        let denied =
            Denied::unauthenticated("sign in first").with_challenge(r#"Bearer realm="mcp""#);
        let response = denied_response(&denied);
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
        assert_eq!(
            response.headers()[header::WWW_AUTHENTICATE],
            r#"Bearer realm="mcp""#
        );
        assert_eq!(
            body_json(response).await,
            serde_json::json!({
                "type": "urn:hookchain:problem:unauthenticated",
                "title": "Unauthorized",
                "status": 401,
                "detail": "sign in first",
                "code": "unauthenticated",
            })
        );
    }

    #[tokio::test]
    async fn a_challenge_that_is_no_header_value_is_left_out() {
        let denied = Denied::forbidden("not yours").with_challenge("line\nbreak");
        let response = denied_response(&denied);
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert!(response.headers().get(header::WWW_AUTHENTICATE).is_none());
        assert_eq!(body_json(response).await["code"], "forbidden");
    }
}
