//! The authorizer, called on every request before any handler: the principal it returns goes
//! into the request's extensions (the handlers take it from there), a refusal is answered at
//! once.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hookchain_core::auth::{self, Denied, SharedAuthorizer};

use super::Problem;

/// The middleware: authorizes `request`, or answers the refusal.
pub(crate) async fn authorize(
    State(authorizer): State<SharedAuthorizer>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    match auth::authorize(&*authorizer, &parts).await {
        Ok(principal) => {
            parts.extensions.insert(principal);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(denied) => refusal(&denied),
    }
}

/// A refusal as a problem response, with its challenge.
fn refusal(denied: &Denied) -> Response {
    let mut response =
        Problem::new(denied.status(), denied.code(), denied.detail()).into_response();
    if let Some(challenge) = denied
        .challenge()
        .and_then(|value| HeaderValue::from_str(value).ok())
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}
