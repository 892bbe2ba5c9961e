//! The person's step of an authorization as a durable interrupt of the run: its payload
//! ([`McpAuthorization`]) and the answer it is resumed with.

use hookchain_core::interrupt::Interrupt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::handler::{AuthorizationCallback, CallbackError};

/// A tool call's server wants a person to authorize this client: the payload of the interrupt
/// the call raised (`{"mcpAuthorization": {"server": …, "tool": …, "url": …, "challenge": …}}`;
/// see the [module's docs](super#the-persons-step-as-an-interrupt)).
///
/// Show [`url`](Self::url) to the person; when the browser comes back to the redirect URI,
/// resume the run with [`answer_redirect`](Self::answer_redirect) (or
/// [`answer`](Self::answer) with the parts). [`state`](Self::state) is the `state` of the URL,
/// for a web application's callback route to find the paused run the redirect belongs to.
///
/// It holds no secret: the PKCE verifier is in the
/// [state store](super::McpOAuth::state_store), not here.
///
/// ```
/// use hookchain_mcp::oauth::McpAuthorization;
/// use serde_json::json;
///
/// // An interrupt's payload, as a paused run's checkpoint has it.
/// let payload = json!({"mcpAuthorization": {
///     "server": "docs",
///     "tool": "search",
///     "url": "https://auth.example.com/authorize?client_id=c1&state=s1",
///     "challenge": "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\""
/// }});
/// let asked = McpAuthorization::from_payload(&payload).expect("an MCP authorization");
/// println!("Open {} to let the agent use {}", asked.url, asked.server);
/// assert_eq!(asked.state().as_deref(), Some("s1"));
/// // Where the browser came back to; resume the run with `answer`
/// // (`agent.resume(checkpoint, [(interrupt.id, answer)])`).
/// let answer = asked.answer_redirect("http://localhost:8976/callback?code=abc&state=s1")?;
/// assert_eq!(answer["mcpAuthorizationAnswer"]["state"], "s1");
/// # Ok::<(), hookchain_mcp::oauth::CallbackError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpAuthorization {
    /// The MCP server that asked for authorization (its name in the toolset).
    pub server: String,
    /// The tool whose call needs it (the name the model calls it by).
    pub tool: String,
    /// The authorization server's URL to open in a browser (the client id, the redirect URI,
    /// the PKCE challenge, the `state`, the scopes, the `resource`).
    pub url: String,
    /// The server's `WWW-Authenticate` challenge, for the discovery the resumed call does
    /// again (in whichever process resumes it). Not secret: the server sends it to anyone.
    #[serde(default)]
    pub challenge: String,
}

/// The payload as it is in the interrupt: under one key, so it is told from other interrupts'.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    #[serde(rename = "mcpAuthorization")]
    authorization: McpAuthorization,
}

/// The value the paused run resumes with.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    #[serde(rename = "mcpAuthorizationAnswer")]
    answer: ReplyBody,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyBody {
    server: String,
    code: String,
    state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iss: Option<String>,
}

impl McpAuthorization {
    pub(crate) fn new(server: &str, tool: &str, url: String, challenge: String) -> Self {
        Self {
            server: server.to_owned(),
            tool: tool.to_owned(),
            url,
            challenge,
        }
    }

    /// The interrupt's payload.
    pub(crate) fn to_payload(&self) -> Value {
        // Plain strings: serializing cannot fail.
        serde_json::to_value(Payload {
            authorization: self.clone(),
        })
        .unwrap_or(Value::Null)
    }

    /// The authorization in an interrupt's payload, if it is one.
    #[must_use]
    pub fn from_payload(payload: &Value) -> Option<Self> {
        Payload::deserialize(payload)
            .ok()
            .map(|payload| payload.authorization)
    }

    /// The authorization of `interrupt`, if it is one.
    #[must_use]
    pub fn from_interrupt(interrupt: &Interrupt) -> Option<Self> {
        Self::from_payload(&interrupt.payload)
    }

    /// The `state` of the [`url`](Self::url): what the authorization server sends back with
    /// the code, so it tells which paused run a redirect answers.
    #[must_use]
    pub fn state(&self) -> Option<String> {
        query_value(&self.url, "state")
    }

    /// The value to resume the paused run with, from the authorization server's answer.
    /// The code is exchanged when the run resumes (a code is short-lived: resume soon).
    #[must_use]
    pub fn answer(&self, callback: AuthorizationCallback) -> Value {
        serde_json::to_value(Reply {
            answer: ReplyBody {
                server: self.server.clone(),
                code: callback.code,
                state: callback.state,
                iss: callback.issuer,
            },
        })
        .unwrap_or(Value::Null)
    }

    /// The value to resume the paused run with, from the redirect URI the authorization server
    /// sent the browser to ([`AuthorizationCallback::from_redirect_url`]).
    ///
    /// # Errors
    ///
    /// The redirect is not an answer (no code or state), or carries the authorization
    /// server's refusal (the person declined): [`CallbackError`].
    pub fn answer_redirect(&self, redirect_url: &str) -> Result<Value, CallbackError> {
        AuthorizationCallback::from_redirect_url(redirect_url).map(|callback| self.answer(callback))
    }

    /// The callback in `value`, an answer to this authorization: refused when it is not
    /// [`answer`](Self::answer)'s value, is for another server, or carries another `state`
    /// than this authorization's URL.
    pub(crate) fn read_answer(
        &self,
        value: &Value,
    ) -> Result<AuthorizationCallback, CallbackError> {
        let reply = Reply::deserialize(value)
            .map_err(|_| CallbackError::NotAnAnswer)?
            .answer;
        if reply.server != self.server {
            return Err(CallbackError::OtherServer {
                expected: self.server.clone(),
                got: reply.server,
            });
        }
        if self.state().as_deref() != Some(reply.state.as_str()) {
            return Err(CallbackError::OtherState);
        }
        Ok(AuthorizationCallback {
            code: reply.code,
            state: reply.state,
            issuer: reply.iss,
        })
    }
}

/// The value of `key` in the query of `url`.
pub(crate) fn query_value(url: &str, key: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    url.query_pairs()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asked() -> McpAuthorization {
        McpAuthorization::new(
            "docs",
            "search",
            "https://auth.example.com/authorize?client_id=c&state=s1".to_owned(),
            "Bearer".to_owned(),
        )
    }

    #[test]
    fn the_payload_reads_back_and_other_payloads_are_not_authorizations() {
        let payload = asked().to_payload();
        assert_eq!(payload["mcpAuthorization"]["server"], "docs");
        assert_eq!(McpAuthorization::from_payload(&payload), Some(asked()));
        assert_eq!(asked().state().as_deref(), Some("s1"));
        assert_eq!(
            McpAuthorization::from_payload(&json!({"kind": "mcp_elicitation"})),
            None
        );
    }

    #[test]
    fn an_answer_reads_back_and_a_wrong_one_is_refused() {
        let asked = asked();
        let value = asked
            .answer_redirect("http://localhost/cb?code=c1&state=s1&iss=https%3A%2F%2Fa")
            .unwrap();
        assert_eq!(
            asked.read_answer(&value).unwrap(),
            AuthorizationCallback::new("c1", "s1").with_issuer("https://a")
        );
        let other_state = asked.answer(AuthorizationCallback::new("c1", "s2"));
        assert_eq!(
            asked.read_answer(&other_state),
            Err(CallbackError::OtherState)
        );
        let mut elsewhere = asked.clone();
        elsewhere.server = "mail".to_owned();
        let for_mail = elsewhere.answer(AuthorizationCallback::new("c1", "s1"));
        assert!(matches!(
            asked.read_answer(&for_mail),
            Err(CallbackError::OtherServer { .. })
        ));
        assert_eq!(
            asked.read_answer(&json!("c1")),
            Err(CallbackError::NotAnAnswer)
        );
    }
}
