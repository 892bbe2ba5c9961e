//! The Bedrock client: its builder, the HTTP calls, the [`Model`] implementation.

use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::convert::{self, PROVIDER, UnsupportedImage};
use super::stream::ConverseDecoder;
use super::wire::{ConverseRequest, ConverseResponse};
use crate::BuildError;
use crate::http::{self, Framing, HttpConfig, Protocol, SplitEndpoints};

/// The region used when neither the builder nor the environment (`AWS_REGION`,
/// `AWS_DEFAULT_REGION`) names one.
pub const DEFAULT_REGION: &str = "us-east-1";

/// A model served by Amazon Bedrock, through the Converse API (`Converse`, `ConverseStream`).
///
/// Built with [`BedrockModel::builder`]. Cloning is cheap (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct BedrockModel {
    /// `/model/{id}/converse`, and `/model/{id}/converse-stream`.
    endpoints: SplitEndpoints<Converse>,
    model: String,
}

/// The Converse wire format.
pub(crate) struct Converse;

/// What shapes each request besides the request itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// `additionalModelRequestFields` of every request.
    pub(crate) fields: Option<Value>,
}

/// A request's body: the request, or why it cannot be sent (which fails its serialization,
/// and so the call, with an `InvalidRequest` error before anything is sent).
pub(crate) enum Body<'a> {
    Request(ConverseRequest<'a>),
    Refused(UnsupportedImage),
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Request(request) => request.serialize(serializer),
            Body::Refused(why) => Err(serde::ser::Error::custom(why)),
        }
    }
}

impl Protocol for Converse {
    type Settings = Settings;
    type Answer = ConverseResponse;
    type Decoder = ConverseDecoder;
    const FRAMING: Framing = Framing::AwsEventStream;

    // The same body streamed or not: the URL says which.
    fn body<'a>(
        settings: &'a Settings,
        request: &'a ModelRequest,
        _stream: bool,
    ) -> impl Serialize + 'a {
        match convert::converse_request(request, settings.fields.as_ref()) {
            Ok(request) => Body::Request(request),
            Err(why) => Body::Refused(why),
        }
    }

    fn answer(wire: ConverseResponse) -> Result<ModelResponse, ModelError> {
        ConverseDecoder::new().answer(wire)
    }

    fn decoder() -> ConverseDecoder {
        ConverseDecoder::new()
    }
}

/// Configures a [`BedrockModel`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct BedrockBuilder {
    config: HttpConfig,
    model: String,
    region: Option<String>,
    /// Set by `base_url`: then the region does not choose the endpoint.
    base_url_set: bool,
    settings: Settings,
    streaming: bool,
    /// Where SigV4 signing takes its credentials, if it signs.
    #[cfg(feature = "bedrock-sigv4")]
    credentials: Option<aws_credential_types::provider::SharedCredentialsProvider>,
}

impl BedrockModel {
    /// A builder for the model with the id (or inference profile id, or ARN) `model`
    /// (`"anthropic.claude-sonnet-4-20250514-v1:0"`, `"us.amazon.nova-pro-v1:0"`, …), in the
    /// region of [`region`](BedrockBuilder::region); give it an
    /// [`api_key`](BedrockBuilder::api_key) (a Bedrock API key), or sign with IAM credentials
    /// ([`sigv4`](BedrockBuilder::sigv4), feature `bedrock-sigv4`).
    pub fn builder(model: impl Into<String>) -> BedrockBuilder {
        BedrockBuilder {
            config: HttpConfig::new(""),
            model: model.into(),
            region: None,
            base_url_set: false,
            settings: Settings::default(),
            streaming: false,
            #[cfg(feature = "bedrock-sigv4")]
            credentials: None,
        }
    }

    /// The model id in every request's URL.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl Model for BedrockModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.endpoints.call(request)
    }

    /// Calls the model with streaming (`ConverseStream`, AWS's binary event stream) and yields
    /// its events as they arrive: text and reasoning deltas, tool calls and their arguments as
    /// they come, the reasoning's signatures (as metadata), the finish, then the usage.
    ///
    /// The stream ends with the body; one that ends before the message's stop ends with a
    /// `MalformedResponse` error, and an exception in the stream is its last item.
    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        self.endpoints.stream(&request)
    }

    /// `"aws.bedrock"`, as OpenTelemetry's GenAI conventions name Bedrock.
    fn provider_name(&self) -> &str {
        PROVIDER
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.model())
    }
}

impl BedrockBuilder {
    /// The AWS region whose Bedrock runtime endpoint is called
    /// (`https://bedrock-runtime.{region}.amazonaws.com`). Default: `AWS_REGION`, else
    /// `AWS_DEFAULT_REGION`, else [`DEFAULT_REGION`]. With SigV4 the region is also signed.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// The endpoint's base URL, instead of the region's (a VPC endpoint, a proxy, a gateway).
    /// A query is kept after the path, and never shown in errors or traces.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.config.base_url = base_url.into();
        self.base_url_set = true;
        self
    }

    /// A Bedrock API key, sent as `Authorization: Bearer …` (what `AWS_BEARER_TOKEN_BEDROCK`
    /// holds for the AWS SDKs). It never appears in errors or `Debug` output.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.config.set_api_key("authorization", api_key.into());
        #[cfg(feature = "bedrock-sigv4")]
        {
            self.credentials = None;
        }
        self
    }

    /// Signs every request with AWS Signature Version 4, with the credentials `provider`
    /// gives at each call (static [`Credentials`](aws_credential_types::Credentials), or any
    /// provider of the AWS SDK's — `aws_config`'s default chain, a role to assume — that
    /// refreshes them). Replaces an [`api_key`](Self::api_key). The signature names the
    /// [`region`](Self::region): with a [`base_url`](Self::base_url), set the endpoint's.
    ///
    /// ```no_run
    /// use hookchain::providers::bedrock::{BedrockModel, Credentials};
    ///
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let credentials = Credentials::new(
    ///     std::env::var("AWS_ACCESS_KEY_ID")?,
    ///     std::env::var("AWS_SECRET_ACCESS_KEY")?,
    ///     std::env::var("AWS_SESSION_TOKEN").ok(),
    ///     None,
    ///     "environment",
    /// );
    /// let model = BedrockModel::builder("us.amazon.nova-pro-v1:0")
    ///     .region("us-east-1")
    ///     .sigv4(credentials)
    ///     .build()?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "bedrock-sigv4")]
    #[cfg_attr(docsrs, doc(cfg(feature = "bedrock-sigv4")))]
    pub fn sigv4(
        mut self,
        provider: impl aws_credential_types::provider::ProvideCredentials + 'static,
    ) -> Self {
        self.config.secret_headers.clear();
        self.config.secrets.clear();
        self.credentials =
            Some(aws_credential_types::provider::SharedCredentialsProvider::new(provider));
        self
    }

    http::http_setters!(header: " (for example `X-Amzn-Bedrock-GuardrailIdentifier`).");

    crate::user_urls::user_urls_setter!();

    /// The model's own request fields, sent as `additionalModelRequestFields` with every
    /// request (a request's extras of that name add to them): Claude's extended thinking,
    /// `{"thinking": {"type": "enabled", "budget_tokens": 2048}}`, or another model's
    /// parameters.
    pub fn additional_request_fields(mut self, fields: Value) -> Self {
        self.settings.fields = Some(fields);
        self
    }

    /// Whether [`Model::invoke`] streams the answer and assembles it (default: no).
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model.
    pub fn build(mut self) -> Result<BedrockModel, BuildError> {
        let region = self
            .region
            .take()
            .or_else(|| env_region("AWS_REGION"))
            .or_else(|| env_region("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| DEFAULT_REGION.to_owned());
        if !self.base_url_set {
            self.config.base_url = format!("https://bedrock-runtime.{region}.amazonaws.com");
        }
        #[cfg(feature = "bedrock-sigv4")]
        if let Some(credentials) = self.credentials.take() {
            self.config.signer = Some(std::sync::Arc::new(super::sigv4::SigV4::new(
                credentials,
                region,
            )));
        }
        // The id goes in one path segment: `:` and `/` (an ARN's) encoded.
        let path = format!("model/{}", encode_segment(&self.model));
        let endpoints = SplitEndpoints::build(
            &self.config,
            PROVIDER,
            (
                &format!("{path}/converse"),
                &format!("{path}/converse-stream"),
            ),
            self.settings,
            self.streaming,
        )?;
        Ok(BedrockModel {
            endpoints,
            model: self.model,
        })
    }
}

fn env_region(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|region| region.trim().to_owned())
        .filter(|region| !region.is_empty())
}

/// `text` as one segment of a URL path: unreserved characters as they are, every other byte
/// percent-encoded (`anthropic.claude-v2:1` → `anthropic.claude-v2%3A1`), as AWS's SDKs send it.
fn encode_segment(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_id_is_one_encoded_path_segment() {
        assert_eq!(
            encode_segment("anthropic.claude-3-5-sonnet-20240620-v1:0"),
            "anthropic.claude-3-5-sonnet-20240620-v1%3A0"
        );
        assert_eq!(
            encode_segment("arn:aws:bedrock:us-east-1:1:inference-profile/us.x"),
            "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x"
        );
    }
}
