//! Every request gets an id — the client's `x-request-id` if it sent a usable one, else a
//! random one made here — sent back in the answer's `x-request-id` and named by the request's span, so
//! that a client's report finds the server's logs.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

use super::random::random_hex;

const HEADER: &str = "x-request-id";

/// The id of a request, in its extensions.
#[derive(Debug, Clone)]
pub(crate) struct RequestId(pub(crate) String);

pub(crate) async fn with_request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic()))
        // Random, not a count: clients see it, and one request's id tells nothing of another's.
        .map_or_else(random_hex, str::to_owned);
    request.extensions_mut().insert(RequestId(id.clone()));
    let span = tracing::info_span!(
        "http_request",
        request_id = %id,
        method = %request.method(),
        path = %request.uri().path(),
    );
    let mut response = next.run(request).instrument(span).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, value);
    }
    response
}
