//! The HTTP client of a provider: configuration, the POST of a request, status checks.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use hookchain_core::{ModelError, ModelRequest};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::{classify_status, classify_transport, malformed};
use super::limits::{Limits, push_capped, size};
use super::sse::seconds;
use super::{BodyEvents, Decoder, EventStream, Framing};
use crate::UserUrls;

/// Why a provider client could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The base URL does not parse as an absolute URL.
    #[error("invalid base URL `{url}`")]
    BaseUrl {
        /// The URL given, its query and credentials redacted (they may hold a key).
        url: String,
        /// Why it does not parse.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A header name is not a valid HTTP header name.
    #[error("invalid HTTP header name `{name}`")]
    HeaderName {
        /// The name given.
        name: String,
        /// Why it is invalid.
        #[source]
        source: reqwest::header::InvalidHeaderName,
    },
    /// A header value is not a valid HTTP header value (the value is not shown: it may be a
    /// secret).
    #[error("invalid value for HTTP header `{name}`")]
    HeaderValue {
        /// The header's name.
        name: String,
        /// Why the value is invalid.
        #[source]
        source: reqwest::header::InvalidHeaderValue,
    },
    /// The HTTP client could not be built (for example, no TLS backend could be initialised).
    #[error("the HTTP client could not be built")]
    Client(#[source] reqwest::Error),
}

/// How to reach a provider's server: what a provider's builder collects.
#[derive(Clone)]
pub(crate) struct HttpConfig {
    pub(crate) base_url: String,
    /// Headers the application added, sent as given.
    pub(crate) headers: Vec<(String, String)>,
    /// Credentials: sent marked sensitive, never shown.
    pub(crate) secret_headers: Vec<(&'static str, String)>,
    /// The secrets inside those headers (the key without `Bearer `): redacted from error
    /// bodies, which may echo them.
    pub(crate) secrets: Vec<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) read_timeout: Option<Duration>,
    pub(crate) limits: Limits,
    /// Which URLs of users' messages may be sent.
    pub(crate) user_urls: UserUrls,
    /// Signs each request before it is sent (AWS SigV4), if set.
    #[cfg(feature = "bedrock-sigv4")]
    pub(crate) signer: Option<Signer>,
}

/// Signs a request before it is sent, seeing all of it (its URL, its headers, its body): AWS
/// SigV4. Asynchronous, as fetching fresh credentials may be.
#[cfg(feature = "bedrock-sigv4")]
pub(crate) trait SignRequest: Send + Sync + fmt::Debug {
    /// Adds the signature's headers to `request`.
    fn sign<'a>(
        &'a self,
        request: &'a mut reqwest::Request,
    ) -> futures::future::BoxFuture<'a, Result<(), ModelError>>;
}

/// A shared [`SignRequest`].
#[cfg(feature = "bedrock-sigv4")]
pub(crate) type Signer = std::sync::Arc<dyn SignRequest>;

/// How long an unstreamed call may take unless the application says otherwise, from sending
/// the request to the answer's last byte: as long as the official SDKs allow (Anthropic refuses
/// unstreamed calls expected to take longer), short enough that a broken server is given up.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long connecting may take unless the application says otherwise.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the server may stay silent (before the answer starts, or between two pieces of a
/// stream) unless the application says otherwise: long enough for a reasoning model thinking
/// before it answers, short enough that a dead server is noticed.
pub(crate) const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);

impl HttpConfig {
    /// Sends `key` in the header `header` — as `Bearer <key>` for `authorization` — marked
    /// sensitive, and redacts it from error bodies: every provider's `api_key`.
    pub(crate) fn set_api_key(&mut self, header: &'static str, key: String) {
        let value = if header == "authorization" {
            format!("Bearer {key}")
        } else {
            key.clone()
        };
        self.secret_headers = vec![(header, value)];
        self.secrets = vec![key];
    }

    /// A configuration for `base_url` with the default timeouts.
    pub(crate) fn new(base_url: &str) -> Self {
        Self {
            base_url: base_url.to_owned(),
            headers: Vec::new(),
            secret_headers: Vec::new(),
            secrets: Vec::new(),
            timeout: Some(DEFAULT_TIMEOUT),
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            read_timeout: Some(DEFAULT_READ_TIMEOUT),
            limits: Limits::default(),
            user_urls: UserUrls::new(),
            #[cfg(feature = "bedrock-sigv4")]
            signer: None,
        }
    }
}

// Never print the credentials.
impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are not shown at all: an application may pass a key as a plain header
        // (Azure's `api-key`).
        let names = |headers: Vec<&str>| headers.join(", ");
        f.debug_struct("HttpConfig")
            .field("base_url", &redact_url(&self.base_url))
            .field(
                "headers",
                &names(self.headers.iter().map(|(n, _)| n.as_str()).collect()),
            )
            .field(
                "secret_headers",
                &names(self.secret_headers.iter().map(|(n, _)| *n).collect()),
            )
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("limits", &self.limits)
            .field("user_urls", &self.user_urls)
            .finish()
    }
}

impl HttpConfig {
    /// A client that POSTs to `base_url` + `/` + `path` (a query of the base URL kept after
    /// the path, then the query of `path` if it has one: `…:streamGenerateContent?alt=sse`);
    /// `provider` names it in errors.
    pub(crate) fn build(
        &self,
        provider: &'static str,
        path: &str,
    ) -> Result<HttpClient, BuildError> {
        let invalid = |source: Box<dyn std::error::Error + Send + Sync>| BuildError::BaseUrl {
            url: redact_url(&self.base_url),
            source,
        };
        let mut endpoint =
            reqwest::Url::parse(self.base_url.trim()).map_err(|error| invalid(Box::new(error)))?;
        if endpoint.cannot_be_a_base() {
            return Err(invalid("a base URL needs a host and a path".into()));
        }
        let base_path = endpoint.path().trim_end_matches('/').to_owned();
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        endpoint.set_path(&format!("{base_path}/{path}"));
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            endpoint.query_pairs_mut().append_pair(name, value);
        }
        endpoint.set_fragment(None);
        let mut headers = HeaderMap::new();
        let mut secrets = self.secrets.clone();
        secrets.extend(url_secrets(&endpoint));
        for (name, value) in &self.headers {
            let mut header = header_value(name, value)?;
            if looks_secret(name) {
                header.set_sensitive(true);
                secrets.push(value.clone());
            }
            headers.insert(header_name(name)?, header);
        }
        for (name, value) in &self.secret_headers {
            let mut value = header_value(name, value)?;
            value.set_sensitive(true);
            headers.insert(header_name(name)?, value);
        }
        // The total and idle timeouts are ours (`HttpClient`), so that each says which it is.
        let mut builder = reqwest::Client::builder().default_headers(headers);
        if let Some(timeout) = self.connect_timeout {
            builder = builder.connect_timeout(timeout);
        }
        Ok(HttpClient {
            client: builder.build().map_err(BuildError::Client)?,
            shown: redact_url(endpoint.as_str()).into(),
            endpoint,
            provider,
            secrets,
            timeout: self.timeout,
            read_timeout: self.read_timeout,
            limits: self.limits,
            user_urls: std::sync::Arc::new(self.user_urls.clone()),
            #[cfg(feature = "bedrock-sigv4")]
            signer: self.signer.clone(),
        })
    }
}

/// `url` as it may be shown (in errors, `Debug`, traces): its query and credentials, which
/// may hold a key (a gateway's `?key=…`, `user:password@`), replaced by `[redacted]`, its
/// fragment left out. Written for any text, so that a URL that does not parse is shown so too.
pub(crate) fn redact_url(url: &str) -> String {
    let (before, after) = match url.find(['?', '#']) {
        Some(at) => url.split_at(at),
        None => (url, ""),
    };
    let mut shown = String::with_capacity(url.len());
    match before.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            shown.push_str(scheme);
            shown.push_str("://");
            if let Some(at) = authority.rfind('@') {
                shown.push_str("[redacted]@");
                shown.push_str(&authority[at + 1..]);
            } else {
                shown.push_str(authority);
            }
            shown.push_str(path);
        }
        None => shown.push_str(before),
    }
    if after.starts_with('?') {
        shown.push_str("?[redacted]");
    }
    shown
}

/// The secrets a URL carries, to redact from error bodies that may echo them: its password,
/// and the values of its query that look like keys (a key-like name, or long).
fn url_secrets(url: &reqwest::Url) -> Vec<String> {
    let mut secrets: Vec<String> = url.password().map(str::to_owned).into_iter().collect();
    for (name, value) in url.query_pairs() {
        if looks_secret(&name) || value.len() >= 16 {
            secrets.push(value.into_owned());
        }
    }
    // As sent (percent-encoded), too.
    for pair in url.query().unwrap_or("").split('&') {
        if let Some((name, value)) = pair.split_once('=')
            && (looks_secret(name) || value.len() >= 16)
            && !secrets.iter().any(|secret| secret == value)
        {
            secrets.push(value.to_owned());
        }
    }
    secrets.retain(|secret| !secret.is_empty());
    secrets
}

/// Whether a header the application added probably carries a credential.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["auth", "key", "token", "secret"]
        .iter()
        .any(|part| name.contains(part))
}

fn header_name(name: &str) -> Result<HeaderName, BuildError> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|source| BuildError::HeaderName {
        name: name.to_owned(),
        source,
    })
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, BuildError> {
    HeaderValue::from_str(value).map_err(|source| BuildError::HeaderValue {
        name: name.to_owned(),
        source,
    })
}

/// A provider's HTTP client, bound to one endpoint.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    /// The endpoint as it may be shown (see [`redact_url`]).
    shown: std::sync::Arc<str>,
    provider: &'static str,
    secrets: Vec<String>,
    /// The longest an unstreamed call may take.
    timeout: Option<Duration>,
    /// The longest the server may stay silent.
    read_timeout: Option<Duration>,
    limits: Limits,
    /// Which URLs of users' messages may be sent; shared, as the client is cloned per stream.
    user_urls: std::sync::Arc<UserUrls>,
    #[cfg(feature = "bedrock-sigv4")]
    signer: Option<Signer>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("endpoint", &self.shown)
            .field("provider", &self.provider)
            .field("timeout", &self.timeout)
            .field("read_timeout", &self.read_timeout)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// Serializes a request body (straight to JSON text: through a `serde_json::Value`, an
    /// `f32` such as a temperature of 0.2 would widen to 0.20000000298023224).
    pub(crate) fn encode(&self, body: &impl Serialize) -> Result<Vec<u8>, ModelError> {
        serde_json::to_vec(body).map_err(|error| {
            ModelError::invalid_request(format!(
                "{} request failed: the request could not be serialized",
                self.provider
            ))
            .with_source(error)
        })
    }

    /// POSTs `json`; a non-success status is classified into a [`ModelError`] (of its body,
    /// the first `limits.error_body` bytes are read, the rest is not).
    pub(crate) async fn post(&self, json: Vec<u8>) -> Result<reqwest::Response, ModelError> {
        tracing::debug!(provider = self.provider, endpoint = %self.shown, "model request");
        let request = self
            .client
            .post(self.endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json);
        let send = async {
            #[cfg(feature = "bedrock-sigv4")]
            let request = self.signed(request).await?;
            request
                .send()
                .await
                .map_err(|error| classify_transport(self.provider, error))
        };
        let mut response = self.idle(send).await??;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        // The body explains the failure; if it cannot be read, the status alone still does. It
        // is read for one idle period at most: what came by then explains it as well.
        let limit = self.limits.error_body;
        let mut body = Vec::new();
        let read = async {
            while body.len() < limit {
                let Ok(Some(piece)) = self.next_piece(&mut response).await else {
                    break;
                };
                let room = limit - body.len();
                push_capped(&mut body, &piece[..piece.len().min(room)], limit);
            }
        };
        let _ = self.idle(read).await;
        // Dropped unread, the rest of the body closes the connection.
        drop(response);
        let body = String::from_utf8_lossy(&body);
        let mut error = classify_status(self.provider, status, &headers, &body, &self.secrets);
        let id = request_id(&headers);
        tracing::debug!(
            provider = self.provider, %status, kind = ?error.kind(), request_id = id.as_deref(),
            "model request failed"
        );
        if let Some(id) = id {
            error = error.with_request_id(id);
        }
        Err(error)
    }

    /// `request`, signed if this client signs its requests.
    #[cfg(feature = "bedrock-sigv4")]
    async fn signed(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, ModelError> {
        let Some(signer) = &self.signer else {
            return Ok(request);
        };
        let mut built = request
            .build()
            .map_err(|error| classify_transport(self.provider, error))?;
        signer.sign(&mut built).await?;
        Ok(reqwest::RequestBuilder::from_parts(
            self.client.clone(),
            built,
        ))
    }

    /// Waits for `future` at most the idle timeout.
    async fn idle<T>(&self, future: impl Future<Output = T>) -> Result<T, ModelError> {
        match self.read_timeout {
            Some(idle) => tokio::time::timeout(idle, future)
                .await
                .map_err(|_| silent(self.provider, idle)),
            None => Ok(future.await),
        }
    }

    /// The next piece of `response`'s body (`None` at its end), within the idle timeout.
    pub(crate) async fn next_piece(
        &self,
        response: &mut reqwest::Response,
    ) -> Result<Option<bytes::Bytes>, ModelError> {
        self.idle(response.chunk())
            .await?
            .map_err(|error| classify_transport(self.provider, error))
    }

    /// Opens a streamed call: POSTs the encoded `body` and yields the events of its answer,
    /// cut as `framing` says, as `decoder` decodes them. Owns what it needs, so the stream
    /// outlives the model's borrow.
    pub(crate) fn open_stream<D: Decoder + Send + 'static>(
        &self,
        body: Vec<u8>,
        decoder: D,
        framing: Framing,
    ) -> impl Future<Output = Result<EventStream<D>, ModelError>> + Send + use<D> {
        let http = self.clone();
        async move {
            let response = http.post(body).await?;
            Ok(EventStream::new(
                BodyEvents::new(response, http, framing),
                decoder,
            ))
        }
    }

    /// POSTs `body`, decodes the whole JSON answer as `T` and converts it, within the total
    /// timeout and the answer's size limit. A failure after the answer started carries the
    /// request's id.
    pub(crate) async fn post_json<T: DeserializeOwned, R>(
        &self,
        body: &impl Serialize,
        convert: impl FnOnce(T) -> Result<R, ModelError>,
    ) -> Result<R, ModelError> {
        let json = self.encode(body)?;
        let call = async {
            let response = self.post(json).await?;
            let id = request_id(response.headers());
            let answer = self.read_answer(response).await.and_then(|bytes| {
                let wire = serde_json::from_slice(&bytes).map_err(|error| {
                    malformed(self.provider, "the answer is not the expected JSON")
                        .with_source(error)
                })?;
                convert(wire)
            });
            answer.map_err(|error| with_request_id(error, id))
        };
        match self.timeout {
            Some(timeout) => tokio::time::timeout(timeout, call).await.map_err(|_| {
                ModelError::timeout(format!(
                    "{} request failed: timed out (no whole answer within {})",
                    self.provider,
                    seconds(timeout)
                ))
            })?,
            None => call.await,
        }
    }

    /// The whole body of an answer, unless it is larger than the limit: then the rest is not
    /// read (nor is any of it, when the server says its length up front).
    async fn read_answer(&self, mut response: reqwest::Response) -> Result<Vec<u8>, ModelError> {
        let limit = self.limits.answer;
        let too_large = || {
            malformed(
                self.provider,
                &format!("the answer is larger than the limit of {}", size(limit)),
            )
        };
        let announced = response.content_length().unwrap_or(0);
        if announced > limit as u64 {
            return Err(too_large());
        }
        // No overflow: `announced` is at most `limit`.
        let mut body = Vec::with_capacity(announced as usize);
        while let Some(piece) = self.next_piece(&mut response).await? {
            if !push_capped(&mut body, &piece, limit) {
                return Err(too_large());
            }
        }
        Ok(body)
    }

    /// The provider's name in errors.
    pub(crate) fn provider(&self) -> &'static str {
        self.provider
    }

    /// The bounds on what this client reads.
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Fails, before anything is sent, if a user message of `request` holds a URL the
    /// application did not allow (see [`UserUrls`]).
    pub(crate) fn check_user_urls(&self, request: &ModelRequest) -> Result<(), ModelError> {
        self.user_urls.check(self.provider, request)
    }
}

/// The id the provider gave the request: `request-id` (Anthropic), `x-request-id` (OpenAI
/// and most servers before it) or `x-amzn-requestid` (AWS); an odd value (not text, or longer
/// than any id) is left out.
pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id", "x-amzn-requestid"]
        .iter()
        .find_map(|name| {
            let id = headers.get(*name)?.to_str().ok()?.trim();
            (!id.is_empty() && id.len() <= 200).then(|| id.to_owned())
        })
}

/// `error`, with the request's id if there is one.
pub(crate) fn with_request_id(error: ModelError, id: Option<String>) -> ModelError {
    match id {
        Some(id) => error.with_request_id(id),
        None => error,
    }
}

/// The error for a server silent longer than the idle timeout.
fn silent(provider: &str, idle: Duration) -> ModelError {
    ModelError::timeout(format!(
        "{provider} request failed: timed out (the server was silent for {})",
        seconds(idle)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_header_value_and_key_like_headers_are_secrets() {
        let mut config = HttpConfig::new("http://localhost:1/v1");
        config.secret_headers = vec![("authorization", "Bearer sk-one".into())];
        config.secrets = vec!["sk-one".into()];
        config.headers = vec![
            ("api-key".into(), "azure-two".into()),
            ("x-team".into(), "weather".into()),
        ];
        let shown = format!("{config:?}");
        assert!(
            shown.contains("api-key") && shown.contains("authorization"),
            "{shown}"
        );
        for value in ["sk-one", "azure-two", "weather"] {
            assert!(!shown.contains(value), "{shown}");
        }
        let client = config.build("openai", "chat/completions").unwrap();
        assert_eq!(client.secrets, ["sk-one", "azure-two"]);
        assert!(!format!("{client:?}").contains("sk-one"));
        assert_eq!(
            client.endpoint.as_str(),
            "http://localhost:1/v1/chat/completions"
        );
    }

    #[test]
    fn a_base_url_keeps_its_query_after_the_path_and_shows_neither_query_nor_credentials() {
        let mut config = HttpConfig::new("https://u:pw-secret@gw.example/v1//?key=k-1&v=2#frag");
        let client = config.build("openai", "chat/completions").unwrap();
        assert_eq!(
            client.endpoint.as_str(),
            "https://u:pw-secret@gw.example/v1/chat/completions?key=k-1&v=2"
        );
        assert_eq!(
            &*client.shown,
            "https://[redacted]@gw.example/v1/chat/completions?[redacted]"
        );
        assert_eq!(client.secrets, ["pw-secret", "k-1"]);
        let client = config
            .build("gcp.gemini", "models/m:streamGenerateContent?alt=sse")
            .unwrap();
        assert_eq!(
            client.endpoint.as_str(),
            "https://u:pw-secret@gw.example/v1/models/m:streamGenerateContent?key=k-1&v=2&alt=sse"
        );
        config.base_url = "http://gw.example".into();
        let client = config.build("anthropic", "messages").unwrap();
        assert_eq!(client.endpoint.as_str(), "http://gw.example/messages");
        for (url, shown) in [
            ("not a url?key=x", "not a url?[redacted]"),
            ("http://a b/v1?key=x#y", "http://a b/v1?[redacted]"),
            ("http://h/v1#y?key=x", "http://h/v1"),
        ] {
            assert_eq!(redact_url(url), shown);
        }
        config.base_url = "mailto:someone?key=x".into();
        let error = config.build("openai", "x").unwrap_err();
        assert!(!format!("{error} {error:?}").contains("key=x"), "{error:?}");
    }

    #[test]
    fn bad_urls_and_headers_are_build_errors() {
        let mut config = HttpConfig::new("not a url");
        assert!(matches!(
            config.build("openai", "x"),
            Err(BuildError::BaseUrl { .. })
        ));
        config.base_url = "http://localhost:1".into();
        config.headers = vec![("bad header".into(), "v".into())];
        assert!(matches!(
            config.build("openai", "x"),
            Err(BuildError::HeaderName { .. })
        ));
        config.headers = vec![("api-key".into(), "line\nbreak".into())];
        let error = config.build("openai", "x").unwrap_err();
        assert!(matches!(error, BuildError::HeaderValue { .. }));
        assert!(!error.to_string().contains("line"), "{error}");
    }
}
