//! Enterprise-managed authorization (MCP's SEP-990, the Identity Assertion JWT Authorization
//! Grant): the person signed in once at the enterprise's identity provider (IdP), and the
//! application holds the ID token it got; the IdP, which knows which MCP servers the
//! enterprise allows, exchanges it (RFC 8693 token exchange) for an ID-JAG — a JWT for the MCP
//! server's authorization server — which is then presented there with the JWT-bearer grant
//! (RFC 7523), as in `jwt_bearer`. No browser, no consent screen.

use std::fmt;
use std::sync::Arc;

use rmcp::transport::AuthError;
use rmcp::transport::auth::AuthorizationManager;

use super::client_credentials;
use super::error::AuthorizationError;
use super::jwt_bearer::{self, AssertionSource, TokenRequest};

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The enterprise's identity provider, where an ID token is exchanged for an ID-JAG
/// ([`McpOAuth::enterprise_managed`](super::McpOAuth::enterprise_managed)): its token
/// endpoint, and this application's client id there (and secret, for a confidential client).
///
/// Its `Debug` does not show the secret.
#[derive(Clone)]
pub struct EnterpriseIdp {
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
}

impl EnterpriseIdp {
    /// The IdP whose token endpoint is `token_endpoint` (HTTPS, but on this machine), where
    /// this application is the client `client_id`.
    pub fn new(token_endpoint: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
        }
    }

    /// The secret of the client at the IdP, sent in the exchange's form
    /// (`client_secret_post`) with the client id.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

impl fmt::Debug for EnterpriseIdp {
    /// The secret is a credential: not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Enterprise-managed authorization's configuration: the IdP, and where the person's ID token
/// comes from.
#[derive(Clone)]
pub(crate) struct Enterprise {
    pub(crate) idp: EnterpriseIdp,
    pub(crate) id_token: Arc<dyn AssertionSource>,
}

impl fmt::Debug for Enterprise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Enterprise")
            .field("idp", &self.idp)
            .finish_non_exhaustive()
    }
}

/// Gets a token for the server that refused a request with `challenge`: discovery (the
/// authorization server, its issuer the ID-JAG's audience), the ID token exchanged at the IdP
/// for an ID-JAG for that authorization server and the server's URL, then the ID-JAG
/// presented with the JWT-bearer grant; the token kept in the store.
pub(super) async fn authorize(
    manager: &mut AuthorizationManager,
    grant: &Enterprise,
    request: &TokenRequest<'_>,
    challenge: &str,
) -> Result<(), AuthorizationError> {
    let (metadata, scopes) = jwt_bearer::discover(manager, request, challenge).await?;
    let idp = &grant.idp;
    client_credentials::check_token_endpoint(&idp.token_endpoint, "the ID token")?;
    let Some(audience) = metadata.issuer.as_deref() else {
        return Err(AuthError::MetadataError(
            "the authorization server's metadata names no issuer: no ID-JAG can be asked for it"
                .to_owned(),
        )
        .into());
    };
    let id_token = grant
        .id_token
        .assertion()
        .await
        .map_err(AuthorizationError::Assertion)?;
    let scope = scopes.join(" ");
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token.as_str()),
        ("subject_token_type", ID_TOKEN),
        ("audience", audience),
        ("resource", request.resource),
        ("client_id", idp.client_id.as_str()),
    ];
    if let Some(secret) = &idp.client_secret {
        form.push(("client_secret", secret));
    }
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let answer = jwt_bearer::send(request.http, &idp.token_endpoint, &form, None).await?;
    if let Some(issued) = answer["issued_token_type"].as_str()
        && issued != ID_JAG
    {
        return Err(AuthError::TokenExchangeFailed(format!(
            "the IdP issued a {issued}, not an ID-JAG"
        ))
        .into());
    }
    let Some(id_jag) = answer["access_token"].as_str() else {
        return Err(AuthError::TokenExchangeFailed(
            "the IdP's answer has no access_token (the ID-JAG)".to_owned(),
        )
        .into());
    };
    jwt_bearer::present(manager, request, &metadata, id_jag, &scopes).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idp_secret_is_not_in_debug_output() {
        let idp = EnterpriseIdp::new("https://idp.example.com/token", "agent-at-idp")
            .client_secret("the-idp-secret");
        let shown = format!("{idp:?}");
        assert!(shown.contains("agent-at-idp"), "{shown}");
        assert!(!shown.contains("the-idp-secret"), "{shown}");
    }
}
