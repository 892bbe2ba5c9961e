//! Every request gets an id — the client's `x-request-id` if it sent a usable one, else one
//! made here — sent back in the answer's `x-request-id` and named by the request's span, so
//! that a client's report finds the server's logs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

const HEADER: &str = "x-request-id";

/// The id of a request, in its extensions.
#[derive(Debug, Clone)]
pub(crate) struct RequestId(pub(crate) String);

/// A fresh id: this process's start and a count, unique enough to find a request in logs.
fn fresh() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let start = *START.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64)
    });
    format!("{start:x}-{:x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

pub(crate) async fn with_request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(fresh, str::to_owned);
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
