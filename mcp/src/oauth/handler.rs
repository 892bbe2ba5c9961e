//! The step of an OAuth authorization where a person acts: the application opens the
//! authorization URL and hands back where the authorization server sent the browser.

use std::fmt;

use futures::future::BoxFuture;

/// What a person must authorize, as an [`AuthorizationHandler`] sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthorizationPrompt {
    /// The MCP server that asked for authorization (its name in the toolset).
    pub server: String,
    /// The authorization server's URL to open in a browser: the authorization endpoint with
    /// the client id, the redirect URI, the PKCE challenge, the `state`, the scopes and the
    /// `resource`. It holds no secret (the PKCE verifier stays in the process).
    pub url: String,
}

/// Asks a person to authorize this client at an authorization server, and gives back the
/// answer ([`McpOAuth::on_authorize`](crate::oauth::McpOAuth::on_authorize)).
///
/// Called when a server refuses a request for want of a token (`401`) or of a scope (`403`
/// `insufficient_scope`), with the URL to open. A command-line application opens it in a
/// browser and listens on the redirect URI for the authorization server's redirect; a web
/// application sends its user there and waits for its callback route. The answer is that
/// redirect: [`AuthorizationCallback::from_redirect_url`] reads it (its `code`, its `state`,
/// its `iss`), or [`AuthorizationCallback::new`] takes the parts.
///
/// The wait is the handler's to bound: no connect or call timeout runs while it waits.
///
/// Any `Fn(AuthorizationPrompt) -> impl Future<Output = Result<AuthorizationCallback, E>>`
/// is a handler:
///
/// ```
/// use hookchain_mcp::oauth::{AuthorizationCallback, AuthorizationPrompt, McpOAuth};
///
/// let oauth = McpOAuth::new("http://localhost:8976/callback").on_authorize(
///     |prompt: AuthorizationPrompt| async move {
///         println!("Open {} to let the agent use {}", prompt.url, prompt.server);
///         // A real application waits for the browser at the redirect URI here.
///         let redirected = "http://localhost:8976/callback?code=abc&state=xyz";
///         AuthorizationCallback::from_redirect_url(redirected)
///     },
/// );
/// # drop(oauth);
/// ```
pub trait AuthorizationHandler: Send + Sync {
    /// Has a person authorize at `prompt.url`, and returns where the authorization server
    /// sent the browser back.
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'_, Result<AuthorizationCallback, HandlerError>>;
}

/// Why an [`AuthorizationHandler`] gave no answer (the person declined, the wait timed out).
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

impl<F, Fut, E> AuthorizationHandler for F
where
    F: Fn(AuthorizationPrompt) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AuthorizationCallback, E>> + Send + 'static,
    E: Into<HandlerError>,
{
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'_, Result<AuthorizationCallback, HandlerError>> {
        let answer = self(prompt);
        Box::pin(async move { answer.await.map_err(Into::into) })
    }
}

/// The authorization server's answer: the `code` to exchange for a token, the `state` that
/// ties it to the authorization this client started, and the issuer (`iss`, RFC 9207) when
/// the server sent one. Its `Debug` does not show the code.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationCallback {
    pub(crate) code: String,
    pub(crate) state: String,
    pub(crate) issuer: Option<String>,
}

impl AuthorizationCallback {
    /// The parts of an answer, for a handler that received them apart.
    pub fn new(code: impl Into<String>, state: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            state: state.into(),
            issuer: None,
        }
    }

    /// The `iss` the authorization server sent with the code (RFC 9207). Give it when there
    /// was one: a server that says it sends one is refused when it is missing.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Reads the redirect URI the authorization server sent the browser to: its `code`,
    /// `state` and `iss`. A redirect that carries an `error` (the person declined) is
    /// [`CallbackError::Refused`].
    ///
    /// ```
    /// use hookchain_mcp::oauth::{AuthorizationCallback, CallbackError};
    ///
    /// let answer = AuthorizationCallback::from_redirect_url(
    ///     "http://localhost:8976/callback?code=abc&state=xyz&iss=https%3A%2F%2Fauth.example.com",
    /// )?;
    /// assert_eq!(
    ///     answer,
    ///     AuthorizationCallback::new("abc", "xyz").with_issuer("https://auth.example.com")
    /// );
    ///
    /// let declined = AuthorizationCallback::from_redirect_url(
    ///     "http://localhost:8976/callback?error=access_denied&state=xyz",
    /// );
    /// assert!(matches!(declined, Err(CallbackError::Refused { .. })));
    /// # Ok::<(), CallbackError>(())
    /// ```
    pub fn from_redirect_url(url: &str) -> Result<Self, CallbackError> {
        let url = url::Url::parse(url).map_err(|_| CallbackError::NotAUrl)?;
        let (mut code, mut state, mut issuer, mut error, mut description) =
            (None, None, None, None, None);
        for (key, value) in url.query_pairs() {
            let slot = match key.as_ref() {
                "code" => &mut code,
                "state" => &mut state,
                "iss" => &mut issuer,
                "error" => &mut error,
                "error_description" => &mut description,
                _ => continue,
            };
            *slot = Some(value.into_owned());
        }
        if let Some(error) = error {
            return Err(CallbackError::Refused { error, description });
        }
        Ok(Self {
            code: code.ok_or(CallbackError::Missing("code"))?,
            state: state.ok_or(CallbackError::Missing("state"))?,
            issuer,
        })
    }
}

impl fmt::Debug for AuthorizationCallback {
    /// The code is a credential until it is exchanged: not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationCallback")
            .field("code", &"<redacted>")
            .field("state", &self.state)
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Why a redirect is not an authorization server's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallbackError {
    /// It is not a URL.
    #[error("the redirect is not a URL")]
    NotAUrl,
    /// It lacks a parameter an answer has (`code` or `state`).
    #[error("the redirect has no `{0}`")]
    Missing(&'static str),
    /// The authorization server sent an error instead of a code (`access_denied` when the
    /// person declined).
    #[error("the authorization server refused: {error}{}", description.as_ref().map(|text| format!(" ({text})")).unwrap_or_default())]
    Refused {
        /// The OAuth error code.
        error: String,
        /// The server's description of it, if any.
        description: Option<String>,
    },
    /// The value a paused run was resumed with is not
    /// [`McpAuthorization::answer`](super::McpAuthorization::answer)'s.
    #[error(
        "the answer to an MCP authorization must be `McpAuthorization::answer`'s value \
         ({{\"mcpAuthorizationAnswer\": {{\"server\": …, \"code\": …, \"state\": …}}}})"
    )]
    NotAnAnswer,
    /// The answer is for another server's authorization.
    #[error("the answer is for the MCP server `{got}`, not `{expected}`")]
    OtherServer {
        /// The server whose authorization the run waits for.
        expected: String,
        /// The server the answer names.
        got: String,
    },
    /// The answer's `state` is not the one of the authorization the run waits for (a
    /// redirect of another authorization, or forged).
    #[error("the answer's `state` is not the authorization's")]
    OtherState,
    /// No authorization waits for the answer's `state` in the state store: it was used
    /// already, or the store that started it is not this one.
    #[error(
        "no authorization waits for this answer (used already, or started with another state store)"
    )]
    Unknown,
}
