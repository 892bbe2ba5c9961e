//! Who asks: the authorizer a served agent calls on every request before it loads anything,
//! and what it answers — a [`Principal`] (put into the run's
//! [`RunContext`](crate::RunContext)), or a refusal ([`Denied`]).
//!
//! Every server of hookchain's takes one: `hookchain::axum::AgentServer` (AG-UI) and
//! `hookchain::mcp::McpToolServer` over HTTP. Write it as a closure of the request's parts, or
//! implement [`Authorize`] on a type of your own (a verifier holding its keys):
//!
//! ```
//! use hookchain::auth::http::{header, request::Parts};
//! use hookchain::auth::{Authorize, Denied};
//! use hookchain::Principal;
//!
//! /// Takes `Authorization: Bearer <user>` as the user (a stand-in for a real token check:
//! /// see the README's *Serve it safely* for one with `jsonwebtoken`).
//! fn authorizer() -> impl Authorize {
//!     |parts: &Parts| {
//!         // What the check needs is read before the `async` block: the future does not
//!         // borrow the request.
//!         let bearer = parts
//!             .headers
//!             .get(header::AUTHORIZATION)
//!             .and_then(|value| value.to_str().ok())
//!             .and_then(|value| value.strip_prefix("Bearer "))
//!             .map(str::to_owned);
//!         async move {
//!             let user = bearer.ok_or_else(|| Denied::unauthenticated("sign in first"))?;
//!             Ok(Principal::new(user))
//!         }
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let authorize = authorizer();
//! let request = hookchain::auth::http::Request::builder()
//!     .header("authorization", "Bearer alice")
//!     .body(())
//!     .unwrap();
//! let (parts, ()) = request.into_parts();
//! assert_eq!(authorize.authorize(&parts).await.unwrap().id(), "alice");
//! # });
//! ```

mod denied;

use std::future::Future;
use std::sync::Arc;

pub use http;

pub use crate::context::{MAX_PRINCIPAL_LEN, Principal, PrincipalError};
pub use denied::Denied;

use crate::interrupt::BoxFuture;
use http::request::Parts;

/// Establishes who sent a request: its [`Principal`], or a refusal ([`Denied`]: `401` or
/// `403`, with words for the client). A server calls it on every request, before it reads
/// the body's ids or loads anything; the principal goes into the run's
/// [`RunContext`](crate::RunContext).
///
/// A closure `|parts: &Parts| { …; async move { … } }` is one (see [the module](self)); so is
/// [`Anonymous`], which vouches for no one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an authorizer",
    label = "not an authorizer",
    note = "an authorizer is a type with `impl Authorize`, or a closure \
            `|parts: &Parts| {{ let token = parts.headers.get(..).cloned(); async move {{ … }} }}` \
            returning `Result<Principal, Denied>`: read what the check needs from the parts before \
            the `async` block, so that its future does not borrow the request"
)]
pub trait Authorize: Send + Sync + 'static {
    /// The principal of the request whose head is `request`, or why it is refused.
    fn authorize(&self, request: &Parts) -> impl Future<Output = Result<Principal, Denied>> + Send;
}

impl<F, Fut> Authorize for F
where
    F: Fn(&Parts) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Principal, Denied>> + Send,
{
    fn authorize(&self, request: &Parts) -> impl Future<Output = Result<Principal, Denied>> + Send {
        self(request)
    }
}

/// The authorizer of a server that vouches for no one: every request is the
/// [`Principal::anonymous`] principal, which owns no thread and reaches only the threads no
/// one owns. For a chat page on loopback and for tests; what a server's `allow_anonymous()`
/// sets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Authorize for Anonymous {
    async fn authorize(&self, _request: &Parts) -> Result<Principal, Denied> {
        Ok(Principal::anonymous())
    }
}

/// [`Authorize`] as an object, for servers that keep the application's authorizer without a
/// type parameter of its own (one boxed future per request, next to the request's I/O).
pub trait DynAuthorize: Send + Sync + 'static {
    /// [`Authorize::authorize`].
    fn dyn_authorize<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Principal, Denied>>;
}

impl<T: Authorize> DynAuthorize for T {
    fn dyn_authorize<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Principal, Denied>> {
        Box::pin(self.authorize(request))
    }
}

/// An authorizer shared by a server's handlers.
pub type SharedAuthorizer = Arc<dyn DynAuthorize>;

/// Calls `authorizer` and checks the principal it returns: one whose id or tenant cannot be
/// recorded is the authorizer's bug, refused as such (`500`) rather than taken.
pub async fn authorize(
    authorizer: &dyn DynAuthorize,
    request: &Parts,
) -> Result<Principal, Denied> {
    let principal = authorizer.dyn_authorize(request).await?;
    match principal.validate() {
        Ok(()) => Ok(principal),
        Err(error) => {
            tracing::error!(%error, "the authorizer returned a principal that cannot be used");
            Err(Denied::misconfigured())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(header: Option<&str>) -> Parts {
        let mut request = http::Request::builder();
        if let Some(value) = header {
            request = request.header("x-user", value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn by_header() -> SharedAuthorizer {
        Arc::new(|parts: &Parts| {
            let user = parts
                .headers
                .get("x-user")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            async move {
                user.map(Principal::new)
                    .ok_or_else(|| Denied::unauthenticated("no user"))
            }
        })
    }

    #[tokio::test]
    async fn a_closure_authorizes_and_refuses() {
        let authorizer = by_header();
        let alice = authorize(&*authorizer, &parts(Some("alice")))
            .await
            .unwrap();
        assert_eq!(alice.id(), "alice");
        let refused = authorize(&*authorizer, &parts(None)).await.unwrap_err();
        assert_eq!(refused.status(), http::StatusCode::UNAUTHORIZED);
    }

    #[tokio::test]
    async fn a_principal_that_cannot_be_recorded_is_the_authorizers_bug() {
        let authorizer = by_header();
        let refused = authorize(&*authorizer, &parts(Some(""))).await.unwrap_err();
        assert_eq!(refused.status(), http::StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[tokio::test]
    async fn anonymous_vouches_for_no_one() {
        let principal = authorize(&Anonymous, &parts(None)).await.unwrap();
        assert!(principal.is_anonymous());
        assert_eq!(principal.owner(), None);
    }
}
