//! OAuth 2.1 for streamable-HTTP servers, as MCP specifies it
//! ([`McpServer::oauth`](crate::McpServer::oauth)).
//!
//! A server that refuses a request with `401 Unauthorized` is authorized, then the request
//! is sent again with the token:
//!
//! 1. **Discovery.** The server's protected-resource metadata (RFC 9728: the URL its
//!    `WWW-Authenticate` names, else the well-known paths), then its authorization server's
//!    metadata (RFC 8414 or OpenID Connect), whose `issuer` must be the one it was found by;
//!    metadata whose `resource` is not this server is refused.
//! 2. **The client's identity**, in the order MCP recommends: a
//!    [pre-registered](McpOAuth::client) client id (and secret), else a
//!    [client-id metadata document](McpOAuth::client_metadata_url) when the authorization
//!    server takes them, else dynamic client registration (RFC 7591, with an
//!    `application_type`, `native` by default).
//! 3. **The person's step.** The authorization URL (PKCE S256, the `resource` of RFC 8707
//!    byte for byte as the metadata gives it, the scopes) goes to the application's
//!    [`AuthorizationHandler`], which has a person authorize and returns where the
//!    authorization server sent the browser back ([`AuthorizationCallback`]). Without a
//!    handler, a tool call pauses the run on an interrupt (see
//!    [below](#the-persons-step-as-an-interrupt)), and connecting fails with
//!    [`Error::AuthorizationRequired`](crate::Error::AuthorizationRequired), which carries
//!    the URL to open.
//! 4. **The token.** The code is exchanged (its `iss`, RFC 9207, checked when the
//!    authorization server sends or promises one), authenticated as the authorization server
//!    says (`client_secret_basic`, `client_secret_post` or none). The tokens go to the
//!    [credential store](McpOAuth::credential_store); an access token that is about to
//!    expire, or that the server refuses, is refreshed when there is a refresh token.
//!
//! **Without a person.** A client that has no person behind it (a service, a scheduled
//! agent) uses the client-credentials grant (SEP-1046) instead:
//! [`McpOAuth::client_credentials`] with the id and secret the authorization server issued it.
//! Discovery is the same; steps 2 and 3 are not taken, and the token endpoint gives the token
//! for the secret (with HTTP Basic or in the form, as the authorization server's metadata
//! says), or for an assertion signed with the client's key instead of a secret
//! ([`McpOAuth::client_credentials_jwt`], `private_key_jwt`). A token that expires is asked
//! for again the same way. A workload whose platform
//! gives it an identity — a JWT signed for the authorization server (workload identity
//! federation, SEP-1933) — uses the JWT-bearer grant (RFC 7523):
//! [`McpOAuth::jwt_bearer`] with where the current JWT comes from ([`AssertionSource`]); the
//! same discovery, then the JWT presented at the token endpoint as the `assertion`.
//!
//! **Enterprise-managed.** An application whose person signed in at the enterprise's
//! identity provider (SEP-990) uses [`McpOAuth::enterprise_managed`]: the person's ID token
//! is exchanged at the IdP (RFC 8693) for an ID-JAG for the server's authorization server,
//! which is presented there with the JWT-bearer grant — no browser, no consent screen; the
//! enterprise's IdP decides which servers its people may use.
//!
//! **Scopes.** Unless [`McpOAuth::scopes`] sets them, the first authorization asks for the
//! scopes of the server's challenge, else of its metadata (`scopes_supported`), else none;
//! `offline_access` is added when the authorization server offers it. A `403` with
//! `insufficient_scope` asks again for the scopes granted so far and the ones it names.
//!
//! **Bounds.** One connect, or one call, goes through at most three authorizations; a server
//! that still refuses then fails it with
//! [`AuthorizationError::TooManyAttempts`]. The connect and call timeouts do not run while
//! the handler waits for a person; the handler bounds that wait. Every response of the OAuth
//! flow is read up to 1 MiB, within 30 seconds.
//!
//! **DPoP** (RFC 9449, SEP-1932). When the authorization server's metadata lists `ES256` in
//! `dpop_signing_alg_values_supported`, tokens are bound to a key of the connection, whatever
//! the grant; there is nothing to configure. The key (ECDSA P-256, generated with `ring` when
//! the connection is made) stays in memory: a bound token kept in the credential store from an
//! earlier run is sent as a bearer token, and the server's refusal leads to a refresh, or a
//! new authorization, bound to the new key. Each token request carries a proof of the key in
//! its `DPoP` header (`typ` `dpop+jwt`, the public `jwk`; `jti`, `htm`, `htu`, `iat`); a token
//! the authorization server answers with `token_type` `DPoP` is sent as
//! `Authorization: DPoP <token>`, each request with a new proof (its method, its URL without
//! query, and `ath`, the token's SHA-256), and any other token as a bearer token. A server's
//! nonce (`DPoP-Nonce`) goes into the next proofs to its origin; a request it refuses with
//! `use_dpop_nonce` is sent again, once, with the nonce. rmcp's transport does not give back a
//! `401`'s headers, so the nonce of an MCP server that asks for one is read by sending the
//! refused request once more with the same stale nonce (which such a server refuses again,
//! without running it), then the request is sent with the nonce.
//!
//! **Secrets.** Tokens, the client secret, assertions, DPoP keys and the authorization code are
//! never logged, and the `Debug` of what holds them does not show them.
//!
//! ```no_run
//! use hookchain_mcp::oauth::{AuthorizationCallback, AuthorizationPrompt, McpOAuth};
//! use hookchain_mcp::{McpServer, McpToolset};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let oauth = McpOAuth::new("http://localhost:8976/callback")
//!     .client_name("My agent")
//!     .on_authorize(|prompt: AuthorizationPrompt| async move {
//!         println!("Open {} in a browser", prompt.url);
//!         let redirected = wait_for_the_browser_at_the_redirect_uri().await;
//!         AuthorizationCallback::from_redirect_url(&redirected)
//!     });
//! let toolset =
//!     McpToolset::connect([McpServer::http("docs", "https://mcp.example.com/mcp").oauth(oauth)])
//!         .await?;
//! # Ok(())
//! # }
//! # async fn wait_for_the_browser_at_the_redirect_uri() -> String { String::new() }
//! ```
//!
//! # The person's step as an interrupt
//!
//! A person may take a day to authorize, and answer another process: without an
//! [`AuthorizationHandler`], a tool call that needs a person pauses the run, like a server's
//! [elicitation](crate::elicitation). The interrupt's payload is an [`McpAuthorization`] —
//! `{"mcpAuthorization": {"server": …, "tool": …, "url": …, "challenge": …}}`, the server's
//! name, the tool's, the URL to open and the server's `WWW-Authenticate` — stored in the
//! run's checkpoint:
//!
//! 1. The application shows [`McpAuthorization::url`]; the browser comes back to the redirect
//!    URI with a code and the `state` ([`McpAuthorization::state`] tells which paused run it
//!    answers).
//! 2. It resumes the run with [`McpAuthorization::answer_redirect`] (the redirect URL) or
//!    [`McpAuthorization::answer`] (the parts): `{"mcpAuthorizationAnswer": {"server": …,
//!    "code": …, "state": …, "iss": …}}`. An answer for another server, or with another
//!    `state` than the URL's, is refused before the run resumes.
//! 3. The tool is called again — in this process, or in another that has the run's checkpoint
//!    and the same [state store](McpOAuth::state_store) and
//!    [credential store](McpOAuth::credential_store): discovery again (from the kept
//!    challenge; the authorization endpoint must be the URL's), the client the URL names
//!    (its secret when it is the [pre-registered](McpOAuth::client) one), the code exchanged
//!    with the PKCE verifier kept in the state store under the `state` (and the `iss`
//!    checked), the tokens saved in the credential store; then the call is made.
//!
//! The PKCE verifier is never in the payload or the answer (they reach UIs and browsers): it
//! stays in the state store, which an answer empties of its state. So a replayed answer, or
//! one for a state the store does not hold ([`CallbackError::Unknown`]), and a code the
//! authorization server refuses, fail the call with an
//! [`AuthorizationError`] — nothing is sent to the server's tool. The default state store
//! is in memory: a run paused in a process is resumed by that process only; a store the
//! workers share (a database) lets any of them resume it, after a restart too.
//!
//! Where no run can pause — [`McpToolset::connect`](crate::McpToolset::connect), whose
//! handshake or listing the server refuses without a token — a needed authorization is
//! still [`Error::AuthorizationRequired`](crate::Error::AuthorizationRequired). So this works
//! for a server that lists its tools without a token, or whose token runs out (or lacks a
//! scope, `403 insufficient_scope`) after the connect. A client registered dynamically is
//! known again by its id in the URL; a secret the registration gave it (rmcp registers
//! public clients, so there is normally none) is not kept across processes.
//!
//! # Not yet
//!
//! Pausing a run on the authorization a connect needs (the toolset is built before any run);
//! DPoP with an algorithm other than `ES256`, or with a key that outlives the connection.

mod authorizer;
mod client_credentials;
mod dpop;
mod enterprise;
mod error;
mod handler;
mod http_client;
mod interrupt;
mod jwt_bearer;
mod private_key_jwt;
mod store;

use std::fmt;
use std::sync::Arc;

pub(crate) use authorizer::Authorizer;
use client_credentials::ClientCredentials;
pub(crate) use dpop::DpopClient;
use enterprise::Enterprise;
use jwt_bearer::JwtBearer;
use private_key_jwt::ClientJwt;

/// The most authorizations one connect, or one call, goes through before it fails: a server
/// that keeps refusing (a scope the authorization server never grants) does not loop.
pub(crate) const MAX_AUTHORIZATIONS: usize = 3;
pub use enterprise::EnterpriseIdp;
pub use error::AuthorizationError;
pub use handler::{
    AuthorizationCallback, AuthorizationHandler, AuthorizationPrompt, CallbackError, HandlerError,
};
pub use interrupt::McpAuthorization;
pub use jwt_bearer::AssertionSource;
pub use private_key_jwt::{ClientKey, KeyError};
/// Where the tokens of a server are kept (rmcp's trait, implemented with `async-trait`): keep
/// them across restarts of the application, and a restarted agent does not ask its user to
/// authorize again.
pub use rmcp::transport::auth::{CredentialStore, InMemoryCredentialStore, StoredCredentials};
/// Where an authorization waiting for a person keeps its PKCE verifier (and the issuer it
/// expects), under its `state`, until the answer comes (rmcp's trait, implemented with
/// `async-trait`): see [`McpOAuth::state_store`].
pub use rmcp::transport::auth::{InMemoryStateStore, StateStore, StoredAuthorizationState};

/// How a streamable-HTTP server is authorized with OAuth 2.1
/// ([`McpServer::oauth`](crate::McpServer::oauth)); see the [module](self) for the flow.
///
/// Its `Debug` does not show the client secret.
#[derive(Clone)]
pub struct McpOAuth {
    pub(crate) grant: Grant,
    pub(crate) client_name: String,
    pub(crate) client: Option<PreRegistered>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) application_type: Option<String>,
    pub(crate) store: Arc<dyn CredentialStore>,
    pub(crate) states: Arc<dyn StateStore>,
    pub(crate) handler: Option<Arc<dyn AuthorizationHandler>>,
}

/// How the client gets its token.
#[derive(Clone, Debug)]
pub(crate) enum Grant {
    /// A person authorizes in a browser, which comes back to `redirect_uri` with a code.
    AuthorizationCode { redirect_uri: String },
    /// No person: the client's own id and secret get the token.
    ClientCredentials(ClientCredentials),
    /// No person: the client's id and an assertion signed with its key get the token
    /// (`private_key_jwt`).
    ClientCredentialsJwt(ClientJwt),
    /// No person: a JWT someone else signed for the client (a workload's identity) gets the
    /// token (RFC 7523).
    JwtBearer(JwtBearer),
    /// A person signed in at the enterprise's IdP: their ID token, exchanged there for an
    /// ID-JAG, gets the token with the JWT-bearer grant (SEP-990).
    Enterprise(Enterprise),
}

/// A client id (and secret) issued by the authorization server beforehand.
#[derive(Clone)]
pub(crate) struct PreRegistered {
    pub(crate) id: String,
    pub(crate) secret: Option<String>,
}

impl McpOAuth {
    /// OAuth with `redirect_uri`, where the authorization server sends the browser back (the
    /// [`AuthorizationHandler`] listens there); the client registered dynamically as
    /// `hookchain`, the tokens kept in memory, no handler yet.
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self::with_grant(Grant::AuthorizationCode {
            redirect_uri: redirect_uri.into(),
        })
    }

    /// OAuth with the client-credentials grant (SEP-1046), for a client no person stands
    /// behind: on a refusal, the client finds the server's authorization server and asks its
    /// token endpoint for a token with `client_id` and `client_secret` (issued beforehand),
    /// without a browser, a redirect or a handler. The secret is sent with HTTP Basic when the
    /// authorization server's metadata names only `client_secret_basic`, else in the form
    /// (`client_secret_post`); an authorization server that takes neither, or a token
    /// endpoint that is not HTTPS (but on this machine), is refused. The token asked is for
    /// the server's URL (the `resource` of RFC 8707) and the scopes chosen as for the
    /// authorization code (see the [module](self)), without `offline_access`: this grant gets
    /// no refresh token, and a token that expires is asked for again.
    ///
    /// Of the settings below, [`scopes`](Self::scopes) and
    /// [`credential_store`](Self::credential_store) apply; the others are the authorization
    /// code's.
    ///
    /// ```no_run
    /// use hookchain_mcp::oauth::McpOAuth;
    /// use hookchain_mcp::{McpServer, McpToolset};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let secret = std::env::var("REPORTS_CLIENT_SECRET")?;
    /// let oauth = McpOAuth::client_credentials("nightly-reports", secret).scopes(["reports:read"]);
    /// let toolset =
    ///     McpToolset::connect([McpServer::http("reports", "https://mcp.example.com/mcp").oauth(oauth)])
    ///         .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self::with_grant(Grant::ClientCredentials(ClientCredentials {
            id: client_id.into(),
            secret: client_secret.into(),
        }))
    }

    /// OAuth with the client-credentials grant (SEP-1046) for a client that proves itself
    /// with its private key rather than a secret (`private_key_jwt`, RFC 7523 §2.2): the
    /// authorization server holds the client's public key (its JWKS), and each token request
    /// carries a new assertion signed with `key` — `iss` and `sub` the client id, `aud` the
    /// authorization server's issuer, valid for a minute, a random `jti` — as
    /// `client_assertion`. As [`client_credentials`](Self::client_credentials) otherwise:
    /// discovery, the token for the server's URL and the scopes chosen the same way, no
    /// refresh token (an expired token is asked for again with a new assertion), a token
    /// endpoint that is not HTTPS (but on this machine) refused. An authorization server
    /// whose metadata names its token endpoint's methods without `private_key_jwt`, or its
    /// signing algorithms without the key's, is refused before anything is sent.
    ///
    /// The key is signed with in the process (`ring`); see [`ClientKey`] for the algorithms.
    /// Of the settings below, [`scopes`](Self::scopes) and
    /// [`credential_store`](Self::credential_store) apply.
    ///
    /// ```no_run
    /// use hookchain_mcp::oauth::{ClientKey, McpOAuth};
    /// use hookchain_mcp::{McpServer, McpToolset};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let pem = std::fs::read_to_string("/etc/reports/client-key.pem")?;
    /// let key = ClientKey::from_pkcs8_pem("ES256", &pem)?.key_id("2026-01");
    /// let oauth = McpOAuth::client_credentials_jwt("nightly-reports", key);
    /// let toolset =
    ///     McpToolset::connect([McpServer::http("reports", "https://mcp.example.com/mcp").oauth(oauth)])
    ///         .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn client_credentials_jwt(client_id: impl Into<String>, key: ClientKey) -> Self {
        Self::with_grant(Grant::ClientCredentialsJwt(ClientJwt {
            id: client_id.into(),
            key,
        }))
    }

    /// OAuth with the JWT-bearer grant (RFC 7523 §2.1) for workload identity federation
    /// (SEP-1933): a workload no person stands behind — a pod, a CI job, a cloud function —
    /// holds a JWT its platform signed (its identity, issued for the authorization server),
    /// and the authorization server, which trusts that platform, gives a token for it. On a
    /// refusal, the client finds the server's authorization server, asks `assertion` for the
    /// current JWT, and presents it at the token endpoint
    /// (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, `assertion`), without a
    /// browser, a redirect or a handler. A token endpoint that is not HTTPS (but on this
    /// machine) is not sent the assertion.
    ///
    /// The source is asked again each time a token is needed (a workload's JWT lives
    /// minutes; see [`AssertionSource`]). The token asked is for the server's URL (the
    /// `resource` of RFC 8707) and the scopes chosen as for the client-credentials grant
    /// ([`client_credentials`](Self::client_credentials)). No refresh token is kept: a token
    /// that expires is asked for again with a fresh assertion. A refusal of the token
    /// endpoint (`invalid_grant`: an expired JWT, one for another audience;
    /// `unauthorized_client`; `invalid_scope`) fails the connect or the call, with the
    /// authorization server's `error`; it is not retried.
    ///
    /// Of the settings below, [`scopes`](Self::scopes),
    /// [`credential_store`](Self::credential_store) and [`client`](Self::client) apply: a
    /// client id the authorization server issued is sent as `client_id` (and its secret, if
    /// any, as the metadata says: HTTP Basic when it names only `client_secret_basic`, else
    /// in the form); without one the assertion alone names the client.
    ///
    /// ```no_run
    /// use hookchain_mcp::oauth::McpOAuth;
    /// use hookchain_mcp::{McpServer, McpToolset};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// // The platform keeps the workload's token in this file, rewritten before it expires.
    /// let oauth = McpOAuth::jwt_bearer(|| async {
    ///     std::fs::read_to_string("/var/run/secrets/tokens/mcp-token")
    ///         .map(|token| token.trim().to_owned())
    /// })
    /// .client("reports-workload", None)
    /// .scopes(["reports:read"]);
    /// let toolset =
    ///     McpToolset::connect([McpServer::http("reports", "https://mcp.example.com/mcp").oauth(oauth)])
    ///         .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn jwt_bearer(assertion: impl AssertionSource + 'static) -> Self {
        Self::with_grant(Grant::JwtBearer(JwtBearer {
            assertion: Arc::new(assertion),
        }))
    }

    /// OAuth with enterprise-managed authorization (SEP-990, the Identity Assertion JWT
    /// Authorization Grant): the person signed in at the enterprise's identity provider, and
    /// `id_token` gives the ID token the application got then (see [`AssertionSource`]). On
    /// a refusal, the client finds the server's authorization server, exchanges the ID token
    /// at the IdP's token endpoint for an ID-JAG (RFC 8693 token exchange:
    /// `requested_token_type` `…:id-jag`, `subject_token_type` `…:id_token`, the
    /// authorization server's issuer as the `audience`, the server's URL as the `resource`,
    /// the scopes; the client `idp` names, its secret in the form), then presents the ID-JAG
    /// at the authorization server with the JWT-bearer grant, as
    /// [`jwt_bearer`](Self::jwt_bearer) does its assertion — authenticated as the client
    /// [`client`](Self::client) names (the authorization server knows this application by
    /// that id; the IdP puts it in the ID-JAG). Neither token endpoint is sent a credential
    /// unless it is HTTPS (or on this machine).
    ///
    /// The ID token is asked for again at each authorization (it expires: the source gives
    /// a fresh one, or fails, and the person signs in again). No refresh token is kept; a
    /// refusal, at the IdP or the authorization server, fails the connect or the call with
    /// its `error`. Of the settings below, [`client`](Self::client),
    /// [`scopes`](Self::scopes) and [`credential_store`](Self::credential_store) apply.
    ///
    /// ```no_run
    /// use hookchain_mcp::oauth::{EnterpriseIdp, McpOAuth};
    /// use hookchain_mcp::{McpServer, McpToolset};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let idp = EnterpriseIdp::new("https://login.example.com/oauth2/token", "agent-app")
    ///     .client_secret(std::env::var("IDP_CLIENT_SECRET")?);
    /// let oauth = McpOAuth::enterprise_managed(idp, || async {
    ///     // The ID token of the person's sign-in, kept by the application.
    ///     std::env::var("ID_TOKEN")
    /// })
    /// .client("agent-at-docs", Some(std::env::var("DOCS_CLIENT_SECRET")?));
    /// let toolset =
    ///     McpToolset::connect([McpServer::http("docs", "https://mcp.example.com/mcp").oauth(oauth)])
    ///         .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn enterprise_managed(
        idp: EnterpriseIdp,
        id_token: impl AssertionSource + 'static,
    ) -> Self {
        Self::with_grant(Grant::Enterprise(Enterprise {
            idp,
            id_token: Arc::new(id_token),
        }))
    }

    fn with_grant(grant: Grant) -> Self {
        Self {
            grant,
            client_name: "hookchain".to_owned(),
            client: None,
            client_metadata_url: None,
            scopes: None,
            application_type: None,
            store: Arc::new(InMemoryCredentialStore::new()),
            states: Arc::new(InMemoryStateStore::new()),
            handler: None,
        }
    }

    /// The name the client registers under (dynamic client registration's `client_name`,
    /// which the authorization server shows the person); `hookchain` by default.
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client id the authorization server issued beforehand, and its secret for a
    /// confidential client: no registration.
    #[must_use]
    pub fn client(mut self, id: impl Into<String>, secret: Option<String>) -> Self {
        self.client = Some(PreRegistered {
            id: id.into(),
            secret,
        });
        self
    }

    /// The HTTPS URL of this client's metadata document (the client id itself, SEP-991), used
    /// when the authorization server takes client-id metadata documents; dynamic
    /// registration otherwise.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The scopes asked at the first authorization, instead of those the server names.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The `application_type` of dynamic registration (OpenID Connect): `native` by default,
    /// `web` for a redirect URI on the web.
    #[must_use]
    pub fn application_type(mut self, application_type: impl Into<String>) -> Self {
        self.application_type = Some(application_type.into());
        self
    }

    /// Where the tokens are kept (and the client id they were issued to): in memory by
    /// default. One store per server. Every toolset built with this `McpOAuth` (and with
    /// clones of it) shares it, so a server's tokens are kept across its reconnections; a
    /// store that persists them keeps them across restarts of the application.
    #[must_use]
    pub fn credential_store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Where an authorization that waits for a person keeps its PKCE verifier, under its
    /// `state`, until the answer comes: in memory by default, so a run paused on an
    /// [`McpAuthorization`] is resumed by this process only. A store that every worker
    /// shares (a database, Redis) lets any of them resume it, after a restart too. Every
    /// toolset built with this `McpOAuth` (and clones of it) shares it. An answer takes its
    /// state out; a store should drop the states nobody answered after a while
    /// ([`StoredAuthorizationState::created_at`]; the default one keeps them until the
    /// process ends).
    #[must_use]
    pub fn state_store(mut self, store: impl StateStore + 'static) -> Self {
        self.states = Arc::new(store);
        self
    }

    /// Has a person authorize when a server asks for it (see [`AuthorizationHandler`]), in
    /// the process. Without it, a tool call that needs an authorization pauses the run on an
    /// [`McpAuthorization`] interrupt, and a connect that needs one fails with
    /// [`Error::AuthorizationRequired`](crate::Error::AuthorizationRequired) (see the
    /// [module](self)).
    #[must_use]
    pub fn on_authorize(mut self, handler: impl AuthorizationHandler + 'static) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }
}

impl fmt::Debug for McpOAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpOAuth")
            .field("grant", &self.grant)
            .field("client_name", &self.client_name)
            .field("client", &self.client)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("application_type", &self.application_type)
            .field("handler", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for PreRegistered {
    /// The secret is a credential: not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegistered")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}
