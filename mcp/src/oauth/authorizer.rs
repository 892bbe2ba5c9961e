//! A connection's OAuth: the HTTP client that puts the token on every request, and the
//! authorization it goes through when a server refuses one.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    OAuthClientConfig, OAuthHttpClient, WWWAuthenticateParams,
};

use super::client_credentials;
use super::dpop::{Dpop, DpopClient};
use super::enterprise;
use super::error::AuthorizationError;
use super::handler::AuthorizationPrompt;
use super::handler::{AuthorizationCallback, CallbackError};
use super::http_client::OAuthHttp;
use super::interrupt::{McpAuthorization, query_value};
use super::jwt_bearer;
use super::private_key_jwt;
use super::store::{SharedStates, SharedStore};
use super::{Grant, McpOAuth};
use crate::error::Error;

/// The OAuth of one connection to a server: rmcp's authorization manager (metadata, client,
/// PKCE state, scopes; tokens in the application's store) inside the HTTP client every
/// session of the connection sends through; the connection's DPoP key, shared by its OAuth
/// requests and that client.
pub(crate) struct Authorizer {
    server: String,
    url: String,
    oauth: McpOAuth,
    http: Arc<OAuthHttp>,
    client: AuthClient<DpopClient>,
    /// The challenges of the last authorizations left to a person, by their URL: a call
    /// that pauses on one puts it in the interrupt, for the discovery of the resumed call.
    challenges: std::sync::Mutex<std::collections::VecDeque<(String, String)>>,
}

/// The most challenges an authorizer remembers (one per authorization left to a person).
const KEPT_CHALLENGES: usize = 16;

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.server)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// The OAuth of the server `server` at `url`. A token kept in the store from an earlier
    /// run is used as it is; the client it was issued to is configured again, within
    /// `within` (it takes the metadata discovery), so that it can be refreshed — on failure it
    /// is still sent, and a refusal leads to a new authorization.
    pub(crate) async fn new(
        server: &str,
        url: &str,
        oauth: &McpOAuth,
        within: Duration,
    ) -> Result<Self, Error> {
        let dpop = Arc::new(Dpop::new().map_err(|error| Error::HttpClient {
            server: server.to_owned(),
            source: error.into(),
        })?);
        let http = Arc::new(OAuthHttp::new(server, dpop.clone())?);
        let mut manager = new_manager(server, url, &http, oauth).await?;
        match tokio::time::timeout(within, manager.initialize_from_store()).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                tracing::warn!(server, %error, "the stored OAuth client could not be configured again");
            }
            Err(_elapsed) => {
                tracing::warn!(server, "configuring the stored OAuth client timed out");
            }
        }
        Ok(Self {
            server: server.to_owned(),
            url: url.to_owned(),
            oauth: oauth.clone(),
            http,
            client: AuthClient::new(
                DpopClient {
                    inner: crate::http::client(server)?,
                    dpop,
                },
                manager,
            ),
            challenges: std::sync::Mutex::new(std::collections::VecDeque::new()),
        })
    }

    /// The HTTP client of a session's transport.
    pub(crate) fn client(&self) -> AuthClient<DpopClient> {
        self.client.clone()
    }

    /// Authorizes after the server refused a request with `challenge` (its
    /// `WWW-Authenticate`): a `403 insufficient_scope` asks for the scopes granted so far and
    /// the ones it names; anything else starts over from discovery (the server may have moved
    /// to another authorization server). Then the person's step, by the handler; without one,
    /// [`Error::AuthorizationRequired`] with the URL to open (its challenge kept, for a call
    /// that pauses on it: [`challenge_of`](Self::challenge_of)). With the client-credentials
    /// grant, no person: the token endpoint is asked at once (see `client_credentials`).
    pub(crate) async fn authorize(&self, challenge: &str) -> Result<(), Error> {
        // Held throughout: requests of the connection wait for the token rather than be
        // refused meanwhile, and a second refusal does not start a second authorization.
        let mut manager = self.client.auth_manager.lock().await;
        let redirect_uri = match &self.oauth.grant {
            Grant::AuthorizationCode { redirect_uri } => redirect_uri,
            Grant::ClientCredentials(credentials) => {
                tracing::info!(server = %self.server, "the MCP server needs an authorization: asking for a token with the client's credentials");
                return client_credentials::authorize(
                    &mut manager,
                    credentials,
                    challenge,
                    &self.url,
                    self.oauth.scopes.as_deref(),
                )
                .await
                .map_err(|error| self.failed(error.into()));
            }
            Grant::JwtBearer(grant) => {
                tracing::info!(server = %self.server, "the MCP server needs an authorization: presenting the workload's assertion");
                return jwt_bearer::authorize(
                    &mut manager,
                    grant,
                    &self.token_request(),
                    challenge,
                )
                .await
                .map_err(|error| self.failed(error));
            }
            Grant::ClientCredentialsJwt(client) => {
                tracing::info!(server = %self.server, "the MCP server needs an authorization: asking for a token with a signed client assertion");
                return private_key_jwt::authorize(
                    &mut manager,
                    client,
                    &self.token_request(),
                    challenge,
                )
                .await
                .map_err(|error| self.failed(error));
            }
            Grant::Enterprise(grant) => {
                tracing::info!(server = %self.server, "the MCP server needs an authorization: exchanging the ID token at the enterprise's IdP");
                return enterprise::authorize(
                    &mut manager,
                    grant,
                    &self.token_request(),
                    challenge,
                )
                .await
                .map_err(|error| self.failed(error));
            }
        };
        let params = match url::Url::parse(&self.url) {
            Ok(base) => WWWAuthenticateParams::parse(challenge, &base),
            Err(_) => WWWAuthenticateParams::default(),
        };
        let step_up = params.is_insufficient_scope();
        let upgraded = if step_up {
            let required = params.scope.as_deref().unwrap_or_default();
            match manager.request_scope_upgrade(required).await {
                Ok(url) => Some(url),
                // Not authorized before (a token of an earlier run whose client could not
                // be configured again): from discovery, with the scopes asked so far.
                Err(error) => {
                    tracing::debug!(server = %self.server, %error, "no scope upgrade: authorizing anew");
                    None
                }
            }
        } else {
            None
        };
        let url = match upgraded {
            Some(url) => url,
            None => {
                self.start(&mut manager, challenge, redirect_uri, step_up)
                    .await?
            }
        };
        let Some(handler) = &self.oauth.handler else {
            let mut challenges = self
                .challenges
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if challenges.len() == KEPT_CHALLENGES {
                challenges.pop_front();
            }
            challenges.push_back((url.clone(), challenge.to_owned()));
            drop(challenges);
            return Err(Error::AuthorizationRequired {
                server: self.server.clone(),
                url,
            });
        };
        tracing::info!(server = %self.server, "the MCP server needs an authorization: asking the handler");
        let prompt = AuthorizationPrompt {
            server: self.server.clone(),
            url,
        };
        let callback = handler
            .authorize(prompt)
            .await
            .map_err(|error| self.failed(AuthorizationError::Handler(error)))?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|error| self.failed(error.into()))?;
        Ok(())
    }

    /// The challenge that led to the authorization URL `url`, left to a person (empty when
    /// it is no longer remembered: the resumed call discovers from the well-known paths).
    pub(crate) fn challenge_of(&self, url: &str) -> String {
        self.challenges
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .rev()
            .find(|(asked, _)| asked == url)
            .map(|(_, challenge)| challenge.clone())
            .unwrap_or_default()
    }

    /// Finishes the authorization `asked`, which a run paused on, with the person's
    /// `callback` — in this process or in another one that shares the state store: discovery
    /// again (from the challenge kept in the interrupt), the client of the authorization URL
    /// configured, the code exchanged with the PKCE verifier kept under its `state`, the
    /// tokens saved in the credential store.
    pub(crate) async fn complete(
        &self,
        asked: &McpAuthorization,
        callback: &AuthorizationCallback,
    ) -> Result<(), Error> {
        let Grant::AuthorizationCode { redirect_uri } = &self.oauth.grant else {
            return Err(self.failed(AuthorizationError::Callback(CallbackError::Unknown)));
        };
        // Checked before anything is sent: an answer nobody waits for (used already).
        let waiting = self
            .oauth
            .states
            .load(&callback.state)
            .await
            .map_err(|error| self.failed(error.into()))?;
        if waiting.is_none() {
            return Err(self.failed(AuthorizationError::Callback(CallbackError::Unknown)));
        }
        let mut manager = self.client.auth_manager.lock().await;
        let challenge = (!asked.challenge.is_empty()).then_some(asked.challenge.as_str());
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|error| self.failed(error.into()))?;
        // The code is for the authorization server the URL was of.
        let without_query = |url: &str| {
            url::Url::parse(url).ok().map(|mut url| {
                url.set_query(None);
                url
            })
        };
        let asked_at = without_query(&asked.url);
        if asked_at.is_none()
            || asked_at != without_query(&resolution.metadata.authorization_endpoint)
        {
            return Err(self.failed(
                rmcp::transport::AuthError::AuthorizationFailed(
                    "the server's authorization server is no longer the one the person authorized at"
                        .to_owned(),
                )
                .into(),
            ));
        }
        manager.set_metadata(resolution.metadata);
        // The client the URL names (registered when the authorization started, perhaps in
        // another process), with its secret when it is the pre-registered one.
        let client_id = query_value(&asked.url, "client_id").ok_or_else(|| {
            self.failed(AuthorizationError::Callback(CallbackError::Missing(
                "client_id",
            )))
        })?;
        let redirect_uri =
            query_value(&asked.url, "redirect_uri").unwrap_or_else(|| redirect_uri.clone());
        let mut config = OAuthClientConfig::new(client_id.clone(), redirect_uri);
        config.application_type = self
            .oauth
            .application_type
            .clone()
            .or(config.application_type);
        if let Some(secret) = self
            .oauth
            .client
            .as_ref()
            .filter(|client| client.id == client_id)
            .and_then(|client| client.secret.clone())
        {
            config = config.with_client_secret(secret);
        }
        manager
            .configure_client(config)
            .map_err(|error| self.failed(error.into()))?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|error| self.failed(error.into()))?;
        tracing::info!(server = %self.server, "the MCP server's authorization was completed with the person's answer");
        Ok(())
    }

    /// Discovery from `challenge`, the client's identity (pre-registered, a metadata
    /// document, or registered now), and the authorization URL (PKCE). `cumulative`: the
    /// scopes asked are all those asked or challenged so far, else those of this challenge
    /// (or of the server's metadata).
    async fn start(
        &self,
        manager: &mut AuthorizationManager,
        challenge: &str,
        redirect_uri: &str,
        cumulative: bool,
    ) -> Result<String, Error> {
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
            .map_err(|error| self.failed(error.into()))?;
        manager.set_metadata(resolution.metadata);
        // rmcp's session takes the manager by value, and gives it back.
        let taken = std::mem::replace(manager, self.manager().await?);
        match AuthorizationSession::new(taken, self.request(redirect_uri, cumulative)).await {
            Ok(session) => {
                let AuthorizationSession {
                    auth_manager,
                    auth_url,
                    ..
                } = session;
                *manager = auth_manager;
                Ok(auth_url)
            }
            Err((taken, error)) => {
                *manager = taken;
                Err(self.failed(error.into()))
            }
        }
    }

    fn request(&self, redirect_uri: &str, cumulative: bool) -> AuthorizationRequest {
        let oauth = &self.oauth;
        let mut request =
            AuthorizationRequest::new(redirect_uri).with_client_name(oauth.client_name.clone());
        if let Some(scopes) = &oauth.scopes {
            request = request.with_scopes(scopes.iter().cloned());
        } else if !cumulative {
            request = request.with_initial_scope_selection();
        }
        if let Some(client) = &oauth.client {
            request = request.with_preregistered_client(client.id.clone());
            if let Some(secret) = &client.secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        if let Some(url) = &oauth.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        if let Some(application_type) = &oauth.application_type {
            request = request.with_application_type(application_type.clone());
        }
        request
    }

    /// What a token request this crate sends itself needs of the connection.
    fn token_request(&self) -> jwt_bearer::TokenRequest<'_> {
        jwt_bearer::TokenRequest {
            http: &self.http,
            store: &self.oauth.store,
            client: self.oauth.client.as_ref(),
            resource: &self.url,
            configured: self.oauth.scopes.as_deref(),
        }
    }

    async fn manager(&self) -> Result<AuthorizationManager, Error> {
        new_manager(&self.server, &self.url, &self.http, &self.oauth).await
    }

    fn failed(&self, source: AuthorizationError) -> Error {
        Error::Authorization {
            server: self.server.clone(),
            source,
        }
    }
}

/// A manager of the server `server` at `url`, with the application's store.
async fn new_manager(
    server: &str,
    url: &str,
    http: &Arc<OAuthHttp>,
    oauth: &McpOAuth,
) -> Result<AuthorizationManager, Error> {
    let http: Arc<dyn OAuthHttpClient> = http.clone();
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, http)
        .await
        .map_err(|error| Error::Authorization {
            server: server.to_owned(),
            source: error.into(),
        })?;
    manager.set_credential_store(SharedStore(oauth.store.clone()));
    manager.set_state_store(SharedStates(oauth.states.clone()));
    Ok(manager)
}
