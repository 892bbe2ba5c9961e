//! The HTTP client of the OAuth flow (discovery, registration, token requests): reqwest with
//! this crate's TLS, bounded in time and in the size of what it reads.

use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

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
}

impl OAuthHttp {
    pub(crate) fn new(server: &str) -> Result<Self, Error> {
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
        })
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
        let response = request.send().await?;
        let status = response.status();
        Ok((status, read_body(response).await?))
    }
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
            let response = client.execute(request?).await?;
            let mut answer = http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            Ok(answer.body(read_body(response).await?)?)
        })
    }
}
