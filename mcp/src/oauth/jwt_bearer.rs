//! The JWT-bearer grant (RFC 7523 §2.1): a client with no person behind it presents a JWT
//! someone else signed for it — a workload's identity token (workload identity federation,
//! MCP's SEP-1933) — at the token endpoint, and gets a token for it.
//!
//! rmcp has no such grant: discovery and the token store are rmcp's, the token request is
//! this crate's (its own HTTP client, `post_form`). The assertion comes from the application
//! each time a token is needed ([`AssertionSource`]): a workload's token is short-lived, and
//! the file a platform mounts it in is rewritten.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::transport::AuthError;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, CredentialStore, OAuthTokenResponse,
    StoredCredentials,
};

use super::PreRegistered;
use super::client_credentials;
use super::error::AuthorizationError;
use super::handler::HandlerError;
use super::http_client::OAuthHttp;

/// The grant type of RFC 7523 §2.1.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Gives the JWT a grant presents, each time a token is needed
/// ([`McpOAuth::jwt_bearer`](super::McpOAuth::jwt_bearer)): the current one, read again from
/// where the platform keeps it fresh (a mounted file, a metadata endpoint), since a
/// workload's token lives minutes.
///
/// Any `Fn() -> impl Future<Output = Result<String, E>>` is a source:
///
/// ```
/// use hookchain_mcp::oauth::McpOAuth;
///
/// let oauth = McpOAuth::jwt_bearer(|| async {
///     std::fs::read_to_string("/var/run/secrets/tokens/mcp-token")
///         .map(|token| token.trim().to_owned())
/// });
/// # drop(oauth);
/// ```
pub trait AssertionSource: Send + Sync {
    /// The current assertion (a JWT, compact serialization).
    fn assertion(&self) -> BoxFuture<'_, Result<String, HandlerError>>;
}

impl<F, Fut, E> AssertionSource for F
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<String, E>> + Send + 'static,
    E: Into<HandlerError>,
{
    fn assertion(&self) -> BoxFuture<'_, Result<String, HandlerError>> {
        let assertion = self();
        Box::pin(async move { assertion.await.map_err(Into::into) })
    }
}

/// The JWT-bearer grant's configuration: where its assertion comes from.
#[derive(Clone)]
pub(crate) struct JwtBearer {
    pub(crate) assertion: Arc<dyn AssertionSource>,
}

impl fmt::Debug for JwtBearer {
    /// The source gives credentials: nothing of it is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtBearer").finish_non_exhaustive()
    }
}

/// What a token request of this module needs besides its grant: the connection's HTTP
/// client and stores, and the client's identity at the authorization server.
pub(super) struct TokenRequest<'a> {
    pub(super) http: &'a OAuthHttp,
    pub(super) store: &'a Arc<dyn CredentialStore>,
    pub(super) client: Option<&'a PreRegistered>,
    /// The server's URL, the `resource` of RFC 8707.
    pub(super) resource: &'a str,
    pub(super) configured: Option<&'a [String]>,
}

/// Gets a token with the JWT-bearer grant for the server that refused a request with
/// `challenge`: discovery, the scopes chosen as for the client-credentials grant, the
/// source's assertion presented; the token kept in the store.
pub(super) async fn authorize(
    manager: &mut AuthorizationManager,
    grant: &JwtBearer,
    request: &TokenRequest<'_>,
    challenge: &str,
) -> Result<(), AuthorizationError> {
    let (metadata, scopes) = discover(manager, request, challenge).await?;
    let assertion = grant
        .assertion
        .assertion()
        .await
        .map_err(AuthorizationError::Assertion)?;
    present(manager, request, &metadata, &assertion, &scopes).await
}

/// Discovery from `challenge` and the scopes to ask (see `client_credentials::discover`),
/// with the scopes granted so far taken from the store.
pub(super) async fn discover(
    manager: &mut AuthorizationManager,
    request: &TokenRequest<'_>,
    challenge: &str,
) -> Result<(AuthorizationMetadata, Vec<String>), AuthorizationError> {
    let granted = request
        .store
        .load()
        .await?
        .map(|stored| stored.granted_scopes)
        .unwrap_or_default();
    Ok(client_credentials::discover(
        manager,
        challenge,
        request.resource,
        request.configured,
        Some(granted),
        "the assertion",
    )
    .await?)
}

/// Presents `assertion` at the token endpoint of `metadata` with the JWT-bearer grant, for
/// `scopes` and the server's URL, and keeps the token in the store. The client
/// authenticates as the authorization server's metadata says when it has a secret
/// (`client_secret_basic` when that is the only one it names of the two, else
/// `client_secret_post`), names itself with `client_id` when it has an id only, and is
/// not named at all without one (the assertion says who it is). See [`keep`].
pub(super) async fn present(
    manager: &mut AuthorizationManager,
    request: &TokenRequest<'_>,
    metadata: &AuthorizationMetadata,
    assertion: &str,
    scopes: &[String],
) -> Result<(), AuthorizationError> {
    let scope = scopes.join(" ");
    let mut form = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion),
        ("resource", request.resource),
    ];
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let mut basic = None;
    if let Some(client) = request.client {
        match &client.secret {
            Some(secret) => {
                if only_basic(metadata)? {
                    basic = Some((client.id.as_str(), secret.as_str()));
                } else {
                    form.push(("client_id", &client.id));
                    form.push(("client_secret", secret));
                }
            }
            None => form.push(("client_id", &client.id)),
        }
    }
    let answer = send(request.http, &metadata.token_endpoint, &form, basic).await?;
    let client_id = request
        .client
        .map_or_else(|| JWT_BEARER.to_owned(), |client| client.id.clone());
    keep(manager, request.store, metadata, answer, scopes, &client_id).await
}

/// Keeps the token of the token endpoint's `answer` (asked for `scopes`, by `client_id`) in
/// the store, without its refresh token: a token that expires is asked for again, with a
/// fresh assertion, rather than refreshed.
pub(super) async fn keep(
    manager: &mut AuthorizationManager,
    store: &Arc<dyn CredentialStore>,
    metadata: &AuthorizationMetadata,
    mut answer: serde_json::Value,
    scopes: &[String],
    client_id: &str,
) -> Result<(), AuthorizationError> {
    if let Some(answer) = answer.as_object_mut() {
        answer.remove("refresh_token");
    }
    let granted = answer["scope"].as_str().map_or_else(
        || scopes.to_vec(),
        |granted| granted.split_whitespace().map(str::to_owned).collect(),
    );
    let token: OAuthTokenResponse = serde_json::from_value(answer).map_err(|error| {
        AuthError::TokenExchangeFailed(format!(
            "the answer of {} is not a token response: {error}",
            metadata.token_endpoint
        ))
    })?;
    let received_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    store
        .save(
            StoredCredentials::new(
                client_id.to_owned(),
                Some(token),
                granted,
                Some(received_at),
            )
            .with_issuer(metadata.issuer.clone()),
        )
        .await?;
    // A client for the manager, so that a token about to expire is not refreshed (it has no
    // refresh token) but asked for again, after the server refuses it.
    manager.configure_client_id(client_id)?;
    Ok(())
}

/// Whether a client secret goes with HTTP Basic: when the metadata names
/// `client_secret_basic` and not `client_secret_post`, or names no method (RFC 8414's
/// default is Basic). Metadata that names neither of the two is refused.
fn only_basic(metadata: &AuthorizationMetadata) -> Result<bool, AuthError> {
    let Some(methods) = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|methods| methods.as_array())
    else {
        return Ok(true);
    };
    let named = |method: &str| methods.iter().any(|named| named.as_str() == Some(method));
    match (named("client_secret_basic"), named("client_secret_post")) {
        (_, true) => Ok(false),
        (true, false) => Ok(true),
        (false, false) => Err(AuthError::TokenExchangeFailed(format!(
            "the authorization server takes neither client_secret_basic nor client_secret_post \
             (it takes {}): the client secret is not sent",
            serde_json::Value::Array(methods.clone())
        ))),
    }
}

/// POSTs a token request, and reads the answer (a JSON object) — or the authorization
/// server's `error` and `error_description`, and nothing else of its answer, into the error.
pub(super) async fn send(
    http: &OAuthHttp,
    endpoint: &str,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<serde_json::Value, AuthError> {
    let (status, body) = http
        .post_form(endpoint, form, basic)
        .await
        .map_err(|error| {
            AuthError::TokenExchangeFailed(format!(
                "the token request to {endpoint} failed: {error}"
            ))
        })?;
    if !status.is_success() {
        return Err(AuthError::TokenExchangeFailed(refusal(
            endpoint, status, &body,
        )));
    }
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(answer) if answer.is_object() => Ok(answer),
        _ => Err(AuthError::TokenExchangeFailed(format!(
            "the answer of {endpoint} is not a JSON object"
        ))),
    }
}

/// What an OAuth error answer says (RFC 6749 §5.2): its `error` and `error_description`.
pub(super) fn refusal(endpoint: &str, status: http::StatusCode, body: &[u8]) -> String {
    let answer: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let mut said = format!("{endpoint} refused the token request ({status})");
    if let Some(error) = answer["error"].as_str() {
        said.push_str(&format!(": {error}"));
        if let Some(description) = answer["error_description"].as_str() {
            said.push_str(&format!(" ({description})"));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationMetadata {
        let mut metadata = AuthorizationMetadata::default();
        if let Some(methods) = methods {
            metadata.additional_fields.insert(
                "token_endpoint_auth_methods_supported".to_owned(),
                serde_json::json!(methods),
            );
        }
        metadata
    }

    #[test]
    fn a_secret_goes_as_the_metadata_says() {
        assert!(only_basic(&metadata(None)).unwrap());
        assert!(only_basic(&metadata(Some(&["client_secret_basic"]))).unwrap());
        assert!(!only_basic(&metadata(Some(&["client_secret_post"]))).unwrap());
        assert!(
            !only_basic(&metadata(Some(&[
                "client_secret_basic",
                "client_secret_post"
            ])))
            .unwrap()
        );
        let Err(error) = only_basic(&metadata(Some(&["private_key_jwt"]))) else {
            panic!("a secret for private_key_jwt");
        };
        assert!(error.to_string().contains("private_key_jwt"), "{error}");
    }

    #[test]
    fn a_refusal_says_the_error_and_nothing_else_of_the_answer() {
        let said = refusal(
            "https://auth.example.com/token",
            http::StatusCode::BAD_REQUEST,
            br#"{"error": "invalid_grant", "error_description": "expired", "echo": "the-jwt"}"#,
        );
        assert!(said.contains("invalid_grant (expired)"), "{said}");
        assert!(!said.contains("the-jwt"), "{said}");
        let said = refusal(
            "https://auth.example.com/token",
            http::StatusCode::BAD_GATEWAY,
            b"<html>the-jwt</html>",
        );
        assert!(!said.contains("the-jwt"), "{said}");
    }
}
