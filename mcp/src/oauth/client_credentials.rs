//! The client-credentials grant (OAuth 2.1 §4.2, MCP's SEP-1046): a client with no person
//! behind it — a service, a scheduled agent — buys its token with its own id and secret.
//!
//! There is no authorization URL and no handler: on a refusal, the client discovers the
//! authorization server as for the authorization code, then asks its token endpoint for a
//! token directly. rmcp's `ClientCredentialsConfig` does the exchange; this module chooses
//! what goes into it (the scopes, the `resource`) and refuses to send a secret in clear text.

use std::fmt;
use std::net::IpAddr;

use rmcp::transport::AuthError;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig, WWWAuthenticateParams,
};

/// A client id and the secret the authorization server issued with it, for the
/// client-credentials grant ([`McpOAuth::client_credentials`](super::McpOAuth::client_credentials)).
#[derive(Clone)]
pub(crate) struct ClientCredentials {
    pub(crate) id: String,
    pub(crate) secret: String,
}

impl fmt::Debug for ClientCredentials {
    /// The secret is a credential: not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// A scope asked of the authorization code for a refresh token: the client-credentials grant
/// gets none (RFC 6749 §4.4.3) — it asks for a new token instead — so it is not asked.
const OFFLINE_ACCESS: &str = "offline_access";

/// Gets a token for the server at `resource` (its URL, the `resource` of RFC 8707) after it
/// refused a request with `challenge`, and keeps it in the manager's credential store, where
/// the connection's HTTP client takes it from.
///
/// The scopes: `configured` when the application set them, else those of the challenge, else
/// of the server's metadata (`scopes_supported`), else none; after a
/// `403 insufficient_scope`, those granted so far (or configured) and the ones it names.
pub(super) async fn authorize(
    manager: &mut AuthorizationManager,
    credentials: &ClientCredentials,
    challenge: &str,
    resource: &str,
    configured: Option<&[String]>,
) -> Result<(), AuthError> {
    let (_, scopes) = discover(
        manager,
        challenge,
        resource,
        configured,
        None,
        "the client secret",
    )
    .await?;
    let config = ClientCredentialsConfig::ClientSecret {
        client_id: credentials.id.clone(),
        client_secret: credentials.secret.clone(),
        scopes,
        resource: Some(resource.to_owned()),
    };
    // Refused when the authorization server takes neither `client_secret_basic` nor
    // `client_secret_post`; rmcp sends the secret with HTTP Basic when the server takes only
    // that, else in the form.
    manager.validate_client_credentials_metadata(&config)?;
    manager.configure_client_credentials(&config)?;
    manager.exchange_client_credentials(&config).await?;
    Ok(())
}

/// Discovery from `challenge` (the authorization server's metadata, set in the manager, whose
/// token endpoint must take `credential` safely: see [`check_token_endpoint`]), then the
/// scopes of a grant without a person for the server at `resource`: `configured` when the
/// application set them, else those of the challenge, else of the server's metadata
/// (`scopes_supported`), else none; after a `403 insufficient_scope`, those granted so far
/// (or configured) and the ones it names. Never `offline_access`. `granted`: the scopes
/// granted so far when the manager does not know them (a token this crate asked for itself).
/// The metadata is returned too.
pub(super) async fn discover(
    manager: &mut AuthorizationManager,
    challenge: &str,
    resource: &str,
    configured: Option<&[String]>,
    granted: Option<Vec<String>>,
    credential: &str,
) -> Result<(AuthorizationMetadata, Vec<String>), AuthError> {
    let params = match url::Url::parse(resource) {
        Ok(base) => WWWAuthenticateParams::parse(challenge, &base),
        Err(_) => WWWAuthenticateParams::default(),
    };
    let step_up = params.is_insufficient_scope();
    // Read before discovery, which starts the scope selection over.
    let granted = match granted {
        Some(granted) => granted,
        None => manager.get_current_scopes().await,
    };
    let resolution = manager
        .resolve_metadata_from_challenge(Some(challenge))
        .await?;
    let metadata = resolution.metadata;
    check_token_endpoint(&metadata.token_endpoint, credential)?;
    manager.set_metadata(metadata.clone());
    let mut scopes = match configured {
        Some(scopes) => scopes.to_vec(),
        None if step_up => granted,
        None => manager.select_initial_scopes(&[]).await,
    };
    if step_up {
        scopes.extend(
            params
                .scope
                .iter()
                .flat_map(|scope| scope.split_whitespace().map(str::to_owned)),
        );
    }
    let mut seen = std::collections::HashSet::new();
    scopes.retain(|scope| scope != OFFLINE_ACCESS && seen.insert(scope.clone()));
    Ok((metadata, scopes))
}

/// A secret goes to a token endpoint over HTTPS only, or to this machine (a development
/// server, a test): metadata that names a plain-HTTP endpoint elsewhere would have the secret
/// sent in clear text (OAuth 2.1 §1.5 requires TLS there).
/// `credential` names what would be sent, for the error.
pub(super) fn check_token_endpoint(endpoint: &str, credential: &str) -> Result<(), AuthError> {
    let secure = url::Url::parse(endpoint).is_ok_and(|url| {
        url.scheme() == "https"
            || (url.scheme() == "http"
                && match url.host() {
                    Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
                    Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
                    Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
                    None => false,
                })
    });
    if secure {
        Ok(())
    } else {
        Err(AuthError::ClientCredentialsError(format!(
            "the token endpoint {endpoint} is not HTTPS: {credential} is not sent to it"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_goes_over_https_or_to_this_machine_only() {
        for endpoint in [
            "https://auth.example.com/token",
            "http://localhost:9000/token",
            "http://127.0.0.1:9000/token",
            "http://[::1]:9000/token",
        ] {
            assert!(
                check_token_endpoint(endpoint, "the secret").is_ok(),
                "{endpoint}"
            );
        }
        for endpoint in [
            "http://auth.example.com/token",
            "http://10.0.0.1/token",
            "ftp://localhost/token",
            "not a url",
        ] {
            let Err(error) = check_token_endpoint(endpoint, "the secret") else {
                panic!("{endpoint} was taken");
            };
            assert!(error.to_string().contains("not HTTPS"), "{error}");
        }
    }

    #[test]
    fn the_secret_is_not_in_debug_output() {
        let credentials = ClientCredentials {
            id: "service".to_owned(),
            secret: "the-secret".to_owned(),
        };
        let shown = format!("{credentials:?}");
        assert!(shown.contains("service"), "{shown}");
        assert!(!shown.contains("the-secret"), "{shown}");
    }
}
