//! The Anthropic client: its builder, the HTTP calls, the [`Model`] implementation.

use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};

use serde::Serialize;

use super::convert::{self, Options, PROVIDER};
use super::stream::EventDecoder;
use super::wire::MessagesResponse;
use crate::BuildError;
use crate::http::{self, HttpConfig, Protocol, ProviderClient};

/// Anthropic's API.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com/v1";

/// The API version sent as `anthropic-version`.
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// The `max_tokens` sent when the request's settings give none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model served over Anthropic's Messages API.
///
/// Built with [`AnthropicModel::builder`]. Cloning is cheap (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    client: ProviderClient<Messages>,
}

/// The Messages wire format.
pub(crate) struct Messages;

/// What shapes each Messages request besides the request itself.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    model: String,
    max_tokens: u32,
    thinking_budget: Option<u32>,
    parallel_tool_calls: Option<bool>,
}

impl Protocol for Messages {
    type Settings = Settings;
    type Answer = MessagesResponse;
    type Decoder = EventDecoder;

    fn body<'a>(
        settings: &'a Settings,
        request: &'a ModelRequest,
        stream: bool,
    ) -> impl Serialize + 'a {
        let options = Options {
            model: &settings.model,
            max_tokens: settings.max_tokens,
            thinking_budget: settings.thinking_budget,
            parallel_tool_calls: settings.parallel_tool_calls,
            stream,
        };
        convert::messages_request(request, options)
    }

    fn answer(wire: MessagesResponse) -> Result<ModelResponse, ModelError> {
        convert::answer(wire)
    }

    fn decoder() -> EventDecoder {
        EventDecoder::new()
    }
}

/// Configures an [`AnthropicModel`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AnthropicBuilder {
    config: HttpConfig,
    version: String,
    settings: Settings,
    streaming: bool,
}

impl AnthropicModel {
    /// A builder for the model named `model` (`"claude-sonnet-4-5"`, …) at
    /// [`DEFAULT_BASE_URL`]; give it an [`api_key`](AnthropicBuilder::api_key).
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            config: HttpConfig::new(DEFAULT_BASE_URL),
            version: DEFAULT_VERSION.to_owned(),
            settings: Settings {
                model: model.into(),
                max_tokens: DEFAULT_MAX_TOKENS,
                thinking_budget: None,
                parallel_tool_calls: None,
            },
            streaming: false,
        }
    }

    /// The model name sent with every request.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.client.settings.model
    }
}

impl Model for AnthropicModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.client.call(request)
    }

    /// Calls the model with streaming and yields its events as they arrive: text and thinking
    /// deltas, tool-call starts, input fragments and ends (with the assembled call), usage,
    /// finish.
    ///
    /// The stream ends after `message_stop`; a failure (including an `error` event, such as
    /// `overloaded_error`) is its last item. A stream cut short ends with a
    /// `MalformedResponse` error.
    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        self.client.stream(&request)
    }

    /// `"anthropic"`, as OpenTelemetry's GenAI conventions name it.
    fn provider_name(&self) -> &str {
        PROVIDER
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.model())
    }
}

impl AnthropicBuilder {
    /// The API's base URL, up to and including `/v1` (for a proxy or a compatible gateway).
    /// A query is kept after the path (a gateway's key), and never shown in errors or traces.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.config.base_url = base_url.into();
        self
    }

    /// The API key, sent as `x-api-key`. It never appears in errors or `Debug` output.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.config.set_api_key("x-api-key", api_key.into());
        self
    }

    /// The `anthropic-version` header (default [`DEFAULT_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    http::http_setters!(header: " (for example `anthropic-beta`).");

    crate::user_urls::user_urls_setter!();

    /// The `max_tokens` sent when a request's settings give none (default
    /// [`DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.settings.max_tokens = max_tokens;
        self
    }

    /// Enables extended thinking with a budget of `budget_tokens` (less than `max_tokens`).
    /// Thinking arrives as reasoning events of [`AnthropicModel::stream`], and is kept in the
    /// answer's content as [`Reasoning`](hookchain_core::message::ContentPart::Reasoning) parts
    /// with their signatures, which go back with the history (Anthropic requires them when
    /// thinking is combined with tool use).
    pub fn thinking(mut self, budget_tokens: u32) -> Self {
        self.settings.thinking_budget = Some(budget_tokens);
        self
    }

    /// Whether the model may call several tools in one answer; `false` sends
    /// `disable_parallel_tool_use`. Sent only with tools.
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.settings.parallel_tool_calls = Some(parallel);
        self
    }

    /// Whether [`Model::invoke`] streams the answer and assembles it (default: no).
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model.
    pub fn build(mut self) -> Result<AnthropicModel, BuildError> {
        self.config
            .headers
            .push(("anthropic-version".to_owned(), self.version));
        Ok(AnthropicModel {
            client: ProviderClient {
                http: self.config.build(PROVIDER, "messages")?,
                settings: self.settings,
                streaming: self.streaming,
            },
        })
    }
}
