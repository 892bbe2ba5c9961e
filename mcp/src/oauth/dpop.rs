//! DPoP-bound access tokens (RFC 9449; MCP's SEP-1932): a token the authorization server
//! binds to a key of the client, which then proves it holds the key on every request that
//! presents the token, so that a stolen token is of no use without the key.
//!
//! Each connection has its own key (ECDSA P-256, `ES256`, generated with `ring` when the
//! connection is made and never stored): a token bound to it is kept in the credential store
//! like any other; after a restart (a new key) it is sent as a bearer token, refused, and
//! refreshed or authorized again, bound to the new key. DPoP is used when the authorization
//! server's metadata lists `ES256` in `dpop_signing_alg_values_supported`, whatever the grant:
//!
//! - token requests (the authorization code, its refresh, the client-credentials, JWT-bearer
//!   and enterprise grants) carry a proof in the `DPoP` header, added by this crate's OAuth
//!   HTTP client ([`OAuthHttp`](super::http_client::OAuthHttp)), which sends rmcp's token
//!   requests as well as its own;
//! - a token the server answers with `token_type` `DPoP` is presented as
//!   `Authorization: DPoP <token>` with a proof of the request (its method, its URL without
//!   query and fragment, and `ath`, the token's hash) by [`DpopClient`], the HTTP client of
//!   the connection's transport; any other token is sent as a bearer token;
//! - a server's nonce (`DPoP-Nonce`) is kept per origin and put in the following proofs; a
//!   request refused with `use_dpop_nonce` is sent again, once, with a fresh proof carrying it.
//!
//! rmcp's transport turns a `401` into its `WWW-Authenticate` challenge alone, without the
//! `DPoP-Nonce` header: when a resource server refuses a proof with `use_dpop_nonce`,
//! [`DpopClient`] asks it again itself (a `ping`, never the request itself, with a fresh proof
//! and the nonce it had, so refused again), reads the nonce of that answer, and only then lets rmcp send the
//! request with it. Sending every request itself would mean rewriting rmcp's transport client
//! (its SSE and JSON handling); a server that requires a nonce costs this round trip on the
//! first request of a connection, and when it changes its nonce.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use http::{HeaderMap, HeaderName, HeaderValue};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair as _};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// The `DPoP` request header (a proof) and the `DPoP-Nonce` response header.
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// What a refused request is asked again with, for the server's nonce: a `ping`, which does
/// nothing if the server takes it.
fn nonce_probe() -> serde_json::Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": "hookchain-dpop-nonce", "method": "ping" })
}

/// The most tokens, token endpoints and nonces remembered by one connection.
const KEPT: usize = 64;

/// One connection's DPoP key, and what it learned: the token endpoints that take proofs, the
/// tokens bound to the key (by their SHA-256), the servers' nonces (by origin).
pub(crate) struct Dpop {
    key: EcdsaKeyPair,
    jwk: serde_json::Value,
    rng: SystemRandom,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    token_endpoints: HashSet<String>,
    bound: HashSet<[u8; 32]>,
    nonces: HashMap<String, String>,
}

/// Why no key could be made (the system's random source failed).
#[derive(Debug, thiserror::Error)]
#[error("no DPoP key could be generated")]
pub(crate) struct KeyFailed;

impl std::fmt::Debug for Dpop {
    /// The key is a credential: only its public half is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("jwk", &self.jwk)
            .finish_non_exhaustive()
    }
}

impl Dpop {
    /// A new key.
    pub(crate) fn new() -> Result<Self, KeyFailed> {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).map_err(|_| KeyFailed)?;
        let key = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).map_err(|_| KeyFailed)?;
        // The uncompressed point: 0x04, x, y (32 bytes each).
        let point = key.public_key().as_ref();
        let jwk = serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": encode(&point[1..33]),
            "y": encode(&point[33..65]),
        });
        Ok(Self {
            key,
            jwk,
            rng,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The public key, as the proofs' `jwk` header.
    #[cfg(test)]
    pub(crate) fn jwk(&self) -> &serde_json::Value {
        &self.jwk
    }

    /// Notes authorization server metadata (any JSON the OAuth client fetched): its token
    /// endpoint takes proofs when `dpop_signing_alg_values_supported` lists `ES256`.
    pub(crate) fn note_metadata(&self, body: &[u8]) {
        let Ok(metadata) = serde_json::from_slice::<serde_json::Value>(body) else {
            return;
        };
        let Some(endpoint) = metadata["token_endpoint"].as_str() else {
            return;
        };
        let es256 = metadata["dpop_signing_alg_values_supported"]
            .as_array()
            .is_some_and(|algs| algs.iter().any(|alg| alg == "ES256"));
        let mut state = self.state();
        if es256 {
            if state.token_endpoints.len() < KEPT {
                state.token_endpoints.insert(without_query(endpoint));
            }
        } else {
            state.token_endpoints.remove(&without_query(endpoint));
        }
    }

    /// Whether a POST to `url` is a token request to send with a proof.
    pub(crate) fn is_token_endpoint(&self, url: &str) -> bool {
        self.state().token_endpoints.contains(&without_query(url))
    }

    /// Notes a token endpoint's answer: an access token of `token_type` `DPoP` is bound to
    /// this key.
    pub(crate) fn note_token(&self, body: &[u8]) {
        let Ok(answer) = serde_json::from_slice::<serde_json::Value>(body) else {
            return;
        };
        let (Some(token), Some(kind)) = (
            answer["access_token"].as_str(),
            answer["token_type"].as_str(),
        ) else {
            return;
        };
        if kind.eq_ignore_ascii_case("DPoP") {
            let mut state = self.state();
            if state.bound.len() == KEPT {
                state.bound.clear();
            }
            state.bound.insert(sha256(token));
        }
    }

    /// Whether `token` is bound to this key (presented as `DPoP`, with proofs).
    pub(crate) fn is_bound(&self, token: &str) -> bool {
        self.state().bound.contains(&sha256(token))
    }

    /// Keeps the nonce of a response from `url`, if it gave one; whether it did.
    pub(crate) fn note_nonce(&self, url: &str, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let mut state = self.state();
        if state.nonces.len() == KEPT {
            state.nonces.clear();
        }
        state.nonces.insert(origin(url), nonce.to_owned());
        true
    }

    /// The nonce last given by the server of `url`.
    pub(crate) fn nonce(&self, url: &str) -> Option<String> {
        self.state().nonces.get(&origin(url)).cloned()
    }

    /// A proof for a `method` request to `url`, with `ath` when it presents `token`, and the
    /// server's nonce when it gave one.
    pub(crate) fn proof(&self, method: &str, url: &str, token: Option<&str>) -> Option<String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        self.proof_at(method, url, token, self.nonce(url).as_deref(), now)
    }

    fn proof_at(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
        now: u64,
    ) -> Option<String> {
        let mut jti = [0u8; 16];
        self.rng.fill(&mut jti).ok()?;
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let mut claims = serde_json::json!({
            "jti": encode(&jti),
            "htm": method,
            "htu": without_query(url),
            "iat": now,
        });
        if let Some(token) = token {
            claims["ath"] = encode(&sha256(token)).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signed = format!(
            "{}.{}",
            encode(header.to_string().as_bytes()),
            encode(claims.to_string().as_bytes())
        );
        let signature = self.key.sign(&self.rng, signed.as_bytes()).ok()?;
        Some(format!("{signed}.{}", encode(signature.as_ref())))
    }
}

/// Whether an answer refuses a proof for want of a nonce: `use_dpop_nonce` in a JSON error
/// (a token endpoint) or in a `WWW-Authenticate` challenge (a resource server).
pub(crate) fn asks_nonce(text: &[u8]) -> bool {
    text.windows(b"use_dpop_nonce".len())
        .any(|window| window == b"use_dpop_nonce")
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn sha256(text: &str) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut hash = [0; 32];
    hash.copy_from_slice(digest.as_ref());
    hash
}

/// `url` without its query and fragment (a proof's `htu`, RFC 9449 §4.2).
fn without_query(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut url) => {
            url.set_query(None);
            url.set_fragment(None);
            url.into()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

/// The origin of `url`, which a nonce is for.
fn origin(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |url| url.origin().ascii_serialization())
}

/// A `DPoP` header value.
pub(crate) fn header_value(proof: &str) -> Option<HeaderValue> {
    HeaderValue::try_from(proof).ok()
}

/// The transport's HTTP client (inside rmcp's `AuthClient`): reqwest, with a bound token
/// presented as `DPoP` and a proof of each request; see the [module](self) docs.
#[derive(Clone, Debug)]
pub(crate) struct DpopClient {
    pub(crate) inner: reqwest::Client,
    pub(crate) dpop: Arc<Dpop>,
}

impl DpopClient {
    /// Puts a bound `token` in `headers` (`Authorization: DPoP`, with a proof of a `method`
    /// request to `uri`); any other token is given back, for reqwest to send as a bearer
    /// token.
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        headers: &mut HashMap<HeaderName, HeaderValue>,
    ) -> Option<String> {
        let token = token?;
        if !self.dpop.is_bound(&token) {
            return Some(token);
        }
        let proof = self
            .dpop
            .proof(method, uri, Some(&token))
            .and_then(|proof| header_value(&proof));
        let scheme = HeaderValue::try_from(format!("DPoP {token}"));
        let (Some(proof), Ok(mut scheme)) = (proof, scheme) else {
            return Some(token);
        };
        scheme.set_sensitive(true);
        headers.insert(http::header::AUTHORIZATION, scheme);
        headers.insert(DPOP, proof);
        None
    }

    /// Whether a refusal of a request that presented `token` asks for a nonce the server
    /// has not given yet: asks again (a `ping`, with a fresh proof, refused again)
    /// for the `DPoP-Nonce` header rmcp's client does not give back, and keeps it.
    async fn learn_nonce(
        &self,
        refused: &StreamableHttpError<reqwest::Error>,
        token: Option<&str>,
        again: reqwest::RequestBuilder,
        method: &str,
        uri: &str,
    ) -> bool {
        let StreamableHttpError::AuthRequired(challenge) = refused else {
            return false;
        };
        let Some(token) = token.filter(|token| self.dpop.is_bound(token)) else {
            return false;
        };
        if !asks_nonce(challenge.www_authenticate_header.as_bytes()) {
            return false;
        }
        let before = self.dpop.nonce(uri);
        let mut headers = HashMap::new();
        if self
            .present(method, uri, Some(token.to_owned()), &mut headers)
            .is_some()
        {
            return false;
        }
        let mut again = again.header(http::header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in headers {
            again = again.header(name, value);
        }
        let Ok(answer) = again.send().await else {
            return false;
        };
        self.dpop.note_nonce(uri, answer.headers()) && self.dpop.nonce(uri) != before
    }

    /// The request a refused one is asked again with, for the nonce: `custom_headers` and
    /// the session's.
    fn again(
        &self,
        method: reqwest::Method,
        uri: &str,
        session_id: Option<&str>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut again = self.inner.request(method, uri);
        // The headers that name the request's method, name and arguments (SEP-2243) are the
        // refused request's, not the probe's.
        let describes_the_request = |name: &HeaderName| {
            let name = name.as_str();
            name == "mcp-method" || name == "mcp-name" || name.starts_with("mcp-param-")
        };
        for (name, value) in custom_headers {
            if !describes_the_request(name) {
                again = again.header(name, value);
            }
        }
        if let Some(session_id) = session_id {
            again = again.header("mcp-session-id", session_id);
        }
        again
    }
}

type SseStream = futures::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>;

impl StreamableHttpClient for DpopClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let mut headers = custom_headers.clone();
        let bearer = self.present("POST", &uri, auth_token.clone(), &mut headers);
        let result = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers,
                limits,
            )
            .await;
        let Err(refused) = result else {
            return result;
        };
        // Asked again with a `ping`, never the message itself: a server that took the nonce
        // it refused a moment ago would run the message twice (a tool call, twice).
        let again = self
            .again(
                reqwest::Method::POST,
                &uri,
                session_id.as_deref(),
                &custom_headers,
            )
            .header("mcp-method", "ping")
            .json(&nonce_probe());
        if !self
            .learn_nonce(&refused, auth_token.as_deref(), again, "POST", &uri)
            .await
        {
            return Err(refused);
        }
        let mut headers = custom_headers;
        let bearer = self.present("POST", &uri, auth_token, &mut headers);
        self.inner
            .post_message_with_response_limits(uri, message, session_id, bearer, headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        mut custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        // Not asked again for a nonce: the session is ended either way.
        let bearer = self.present("DELETE", &uri, auth_token, &mut custom_headers);
        self.inner
            .delete_session(uri, session_id, bearer, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<reqwest::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<reqwest::Error>> {
        let mut headers = custom_headers.clone();
        let bearer = self.present("GET", &uri, auth_token.clone(), &mut headers);
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                bearer,
                headers,
                max_sse_event_size,
            )
            .await;
        let Err(refused) = result else {
            return result;
        };
        let again = self.again(
            reqwest::Method::GET,
            &uri,
            session_id.as_deref(),
            &custom_headers,
        );
        if !self
            .learn_nonce(&refused, auth_token.as_deref(), again, "GET", &uri)
            .await
        {
            return Err(refused);
        }
        let mut headers = custom_headers;
        let bearer = self.present("GET", &uri, auth_token, &mut headers);
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                bearer,
                headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jwt: &str, index: usize) -> serde_json::Value {
        let part = jwt.split('.').nth(index).unwrap();
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn verify(dpop: &Dpop, jwt: &str) {
        let jwk = dpop.jwk();
        let coordinate = |name: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(jwk[name].as_str().unwrap())
                .unwrap()
        };
        let mut point = vec![4];
        point.extend(coordinate("x"));
        point.extend(coordinate("y"));
        let (signed, signature) = jwt.rsplit_once('.').unwrap();
        let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .unwrap();
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
            .verify(signed.as_bytes(), &signature)
            .expect("the proof's signature verifies with its jwk");
    }

    #[test]
    fn a_proof_is_signed_and_names_the_request() {
        let dpop = Dpop::new().unwrap();
        let proof = dpop
            .proof_at(
                "POST",
                "https://mcp.example/mcp?x=1#f",
                Some("token"),
                Some("n1"),
                1000,
            )
            .unwrap();
        verify(&dpop, &proof);
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(header["jwk"].get("d").is_none());
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["iat"], 1000);
        assert_eq!(claims["nonce"], "n1");
        // RFC 9449 §7.1's example: ath of the token "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU".
        assert_eq!(
            encode(&sha256("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
        assert_eq!(claims["ath"], encode(&sha256("token")));
        let again = dpop
            .proof_at("POST", "https://mcp.example/mcp", None, None, 1000)
            .unwrap();
        let claims_again = part(&again, 1);
        assert_ne!(claims["jti"], claims_again["jti"], "a fresh jti each time");
        assert!(claims_again.get("ath").is_none());
        assert!(claims_again.get("nonce").is_none());
    }

    #[test]
    fn metadata_tokens_and_nonces_are_noted() {
        let dpop = Dpop::new().unwrap();
        dpop.note_metadata(
            br#"{"token_endpoint":"https://as.example/token","dpop_signing_alg_values_supported":["RS256"]}"#,
        );
        assert!(!dpop.is_token_endpoint("https://as.example/token"));
        dpop.note_metadata(
            br#"{"token_endpoint":"https://as.example/token","dpop_signing_alg_values_supported":["ES256"]}"#,
        );
        assert!(dpop.is_token_endpoint("https://as.example/token"));
        assert!(!dpop.is_token_endpoint("https://as.example/other"));

        dpop.note_token(br#"{"access_token":"a","token_type":"Bearer"}"#);
        dpop.note_token(br#"{"access_token":"b","token_type":"DPoP"}"#);
        assert!(!dpop.is_bound("a"));
        assert!(dpop.is_bound("b"));

        let mut headers = HeaderMap::new();
        assert!(!dpop.note_nonce("https://as.example/token", &headers));
        headers.insert(DPOP_NONCE, HeaderValue::from_static("n"));
        assert!(dpop.note_nonce("https://as.example/token", &headers));
        assert_eq!(dpop.nonce("https://as.example/other").as_deref(), Some("n"));
        assert_eq!(dpop.nonce("https://mcp.example/mcp"), None);
        assert!(asks_nonce(br#"{"error":"use_dpop_nonce"}"#));
        assert!(!asks_nonce(br#"{"error":"invalid_grant"}"#));
    }
}
