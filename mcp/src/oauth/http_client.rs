//! The HTTP client of the OAuth flow (discovery, registration, token requests): reqwest with
//! this crate's TLS, bounded in time and in the size of what it reads; DPoP proofs on the
//! token requests of an authorization server that takes them (see `dpop`).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use super::dpop::{self, Dpop};
use crate::error::Error;
use crate::http::client_builder;

/// How long one OAuth request may take (rmcp's own default).
const TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of one OAuth response read (metadata, a registration, a token): 1 MiB.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The most redirects followed where the flow follows them (metadata discovery).
const MAX_REDIRECTS: usize = 10;

/// rmcp's OAuth requests, sent by reqwest clients built as this crate builds them: rmcp's own
/// client would need a process-wide rustls provider, which a library has no business setting.
pub(crate) struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    dpop: Arc<Dpop>,
}

/// An answer: its status, headers, version and body (up to 1 MiB).
struct Answer {
    status: http::StatusCode,
    headers: http::HeaderMap,
    version: http::Version,
    body: Vec<u8>,
}

impl OAuthHttp {
    pub(crate) fn new(server: &str, dpop: Arc<Dpop>) -> Result<Self, Error> {
        let build = |policy| {
            client_builder(server)?
                .timeout(TIMEOUT)
                .redirect(policy)
                .build()
                .map_err(|error| Error::HttpClient {
                    server: server.to_owned(),
                    source: error.into(),
                })
        };
        Ok(Self {
            follow: build(reqwest::redirect::Policy::limited(MAX_REDIRECTS))?,
            stop: build(reqwest::redirect::Policy::none())?,
            dpop,
        })
    }

    /// Sends `request` with `client`. Authorization server metadata is noted for DPoP; a
    /// token request to an endpoint that takes proofs is sent with one (and once again with
    /// a fresh one carrying the server's nonce, when it refuses with `use_dpop_nonce`), and
    /// a token bound by its answer is noted.
    async fn send(
        &self,
        client: &reqwest::Client,
        mut request: reqwest::Request,
    ) -> Result<Answer, OAuthHttpClientError> {
        let url = request.url().to_string();
        let method = request.method().clone();
        let proofs = method == reqwest::Method::POST && self.dpop.is_token_endpoint(&url);
        let answer = if proofs {
            let again = request.try_clone();
            let nonce = self.dpop.nonce(&url);
            self.prove(&mut request, &url);
            let answer = read(client.execute(request).await?).await?;
            let noted = self.dpop.note_nonce(&url, &answer.headers);
            match again {
                Some(mut again)
                    if answer.status == http::StatusCode::BAD_REQUEST
                        && noted
                        && self.dpop.nonce(&url) != nonce
                        && dpop::asks_nonce(&answer.body) =>
                {
                    self.prove(&mut again, &url);
                    let answer = read(client.execute(again).await?).await?;
                    self.dpop.note_nonce(&url, &answer.headers);
                    answer
                }
                _ => answer,
            }
        } else {
            read(client.execute(request).await?).await?
        };
        if answer.status.is_success() {
            if proofs {
                self.dpop.note_token(&answer.body);
            } else if method == reqwest::Method::GET {
                self.dpop.note_metadata(&answer.body);
            }
        }
        Ok(answer)
    }

    /// Puts a proof of the token request `request` to `url` in its `DPoP` header.
    fn prove(&self, request: &mut reqwest::Request, url: &str) {
        if let Some(proof) = self
            .dpop
            .proof("POST", url, None)
            .and_then(|proof| dpop::header_value(&proof))
        {
            request.headers_mut().insert(dpop::DPOP, proof);
        }
    }
}

impl OAuthHttp {
    /// POSTs `form` (`application/x-www-form-urlencoded`) to `url` without following a
    /// redirect, with HTTP Basic when `basic` names a client id and secret (each
    /// form-urlencoded first, RFC 6749 §2.3.1): for the grants rmcp does not send itself.
    /// The status and the body (up to 1 MiB).
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<(http::StatusCode, Vec<u8>), OAuthHttpClientError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut request = self
            .stop
            .post(url)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .body(body);
        if let Some((id, secret)) = basic {
            use base64::Engine as _;
            let encode = |value: &str| {
                url::form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>()
            };
            let credentials = base64::engine::general_purpose::STANDARD.encode(format!(
                "{}:{}",
                encode(id),
                encode(secret)
            ));
            let mut value = http::HeaderValue::try_from(format!("Basic {credentials}"))?;
            value.set_sensitive(true);
            request = request.header(http::header::AUTHORIZATION, value);
        }
        let answer = self.send(&self.stop, request.build()?).await?;
        Ok((answer.status, answer.body))
    }
}

/// A response, its body read.
async fn read(response: reqwest::Response) -> Result<Answer, OAuthHttpClientError> {
    Ok(Answer {
        status: response.status(),
        headers: response.headers().clone(),
        version: response.version(),
        body: read_body(response).await?,
    })
}

/// A response's body, up to [`MAX_BODY_BYTES`].
async fn read_body(response: reqwest::Response) -> Result<Vec<u8>, OAuthHttpClientError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if chunk.len() > MAX_BODY_BYTES - body.len() {
            return Err(OAuthHttpClientError::from(format!(
                "an OAuth response larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let client = match request.redirect_policy {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let request = reqwest::Request::try_from(request.request);
        Box::pin(async move {
            let answer = self.send(client, request?).await?;
            let mut response = http::Response::builder()
                .status(answer.status)
                .version(answer.version);
            for (name, value) in &answer.headers {
                response = response.header(name, value);
            }
            Ok(response.body(answer.body)?)
        })
    }
}
