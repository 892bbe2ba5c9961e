//! AWS Signature Version 4 for Bedrock's requests (feature `bedrock-sigv4`), by AWS's own
//! signer (`aws-sigv4`), with credentials from any `aws-credential-types` provider.

use std::fmt;
use std::time::SystemTime;

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use futures::future::BoxFuture;
use hookchain_core::ModelError;
use reqwest::header::{HeaderName, HeaderValue};

use super::convert::PROVIDER;
use crate::http::SignRequest;

/// The service name Bedrock's runtime is signed for.
const SERVICE: &str = "bedrock";

/// Signs requests for one region with the credentials of a provider.
pub(crate) struct SigV4 {
    credentials: SharedCredentialsProvider,
    region: String,
}

impl SigV4 {
    pub(crate) fn new(credentials: SharedCredentialsProvider, region: String) -> Self {
        Self {
            credentials,
            region,
        }
    }
}

// The provider is not shown: it may hold the keys.
impl fmt::Debug for SigV4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigV4")
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

/// A signing failure: the request cannot be sent as it is (not retryable).
fn unsigned(what: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ModelError {
    ModelError::authentication(format!("{PROVIDER} request failed: {what}")).with_source(source)
}

impl SignRequest for SigV4 {
    fn sign<'a>(
        &'a self,
        request: &'a mut reqwest::Request,
    ) -> BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(async move {
            let credentials = self
                .credentials
                .provide_credentials()
                .await
                .map_err(|error| unsigned("no AWS credentials to sign the request", error))?;
            let identity = credentials.into();
            let params = v4::SigningParams::builder()
                .identity(&identity)
                .region(&self.region)
                .name(SERVICE)
                .time(SystemTime::now())
                .settings(SigningSettings::default())
                .build()
                .map_err(|error| unsigned("the request could not be signed", error))?
                .into();
            let headers: Vec<(&str, &str)> = request
                .headers()
                .iter()
                .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
                .collect();
            let body = request
                .body()
                .and_then(reqwest::Body::as_bytes)
                .unwrap_or_default();
            let signable = SignableRequest::new(
                request.method().as_str(),
                request.url().as_str(),
                headers.into_iter(),
                SignableBody::Bytes(body),
            )
            .map_err(|error| unsigned("the request could not be signed", error))?;
            let (instructions, _signature) = sign(signable, &params)
                .map_err(|error| unsigned("the request could not be signed", error))?
                .into_parts();
            let (headers, _query) = instructions.into_parts();
            for header in headers {
                let name = HeaderName::from_bytes(header.name().as_bytes())
                    .map_err(|error| unsigned("a signature header is invalid", error))?;
                let mut value = HeaderValue::from_str(header.value())
                    .map_err(|error| unsigned("a signature header is invalid", error))?;
                value.set_sensitive(header.sensitive());
                request.headers_mut().insert(name, value);
            }
            Ok(())
        })
    }
}
