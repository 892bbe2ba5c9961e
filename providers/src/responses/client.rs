//! The Responses client: its builder, the HTTP calls, the [`Model`] implementation.

use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};
use serde::Serialize;

use super::convert::{self, Options, PROVIDER};
use super::stream::{self, ResponseDecoder};
use super::wire::Response;
use crate::BuildError;
use crate::http::{self, HttpConfig, Protocol, ProviderClient};

/// OpenAI's API, up to and including its version.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A model served over OpenAI's Responses API (`POST /responses`).
///
/// Built with [`ResponsesModel::builder`]. Cloning is cheap (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct ResponsesModel {
    client: ProviderClient<Responses>,
}

/// The Responses wire format.
pub(crate) struct Responses;

/// What shapes each request besides the request itself.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    model: String,
    parallel_tool_calls: Option<bool>,
    reasoning_effort: Option<String>,
    reasoning_summary: bool,
    store: bool,
    /// Whether the model reasons; `None`: guessed from its name and the reasoning options.
    reasons: Option<bool>,
}

impl Settings {
    /// Whether the model reasons: as told, else if reasoning options were set or its name is
    /// one of OpenAI's reasoning families (`o1`, `o3`, `o4-mini`, `gpt-5`, `codex-…`).
    fn reasons(&self) -> bool {
        self.reasons.unwrap_or_else(|| {
            let name = self.model.rsplit('/').next().unwrap_or(&self.model);
            self.reasoning_effort.is_some()
                || self.reasoning_summary
                || ["o1", "o3", "o4", "gpt-5", "codex"]
                    .iter()
                    .any(|family| name.starts_with(family))
        })
    }
}

impl Protocol for Responses {
    type Settings = Settings;
    type Answer = Response;
    type Decoder = ResponseDecoder;

    fn body<'a>(
        settings: &'a Settings,
        request: &'a ModelRequest,
        stream: bool,
    ) -> impl Serialize + 'a {
        let options = Options {
            model: &settings.model,
            parallel_tool_calls: settings.parallel_tool_calls,
            reasoning_effort: settings.reasoning_effort.as_deref(),
            reasoning_summary: settings.reasoning_summary,
            store: settings.store,
            reasons: settings.reasons(),
            stream,
        };
        convert::responses_request(request, options)
    }

    fn answer(wire: Response) -> Result<ModelResponse, ModelError> {
        stream::answer(wire)
    }

    fn decoder() -> ResponseDecoder {
        ResponseDecoder::new()
    }
}

/// Configures a [`ResponsesModel`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ResponsesBuilder {
    config: HttpConfig,
    settings: Settings,
    streaming: bool,
}

impl ResponsesModel {
    /// A builder for the model named `model` (`"gpt-5-mini"`, `"o4-mini"`, `"gpt-4.1"`, …) at
    /// [`DEFAULT_BASE_URL`]; give it an [`api_key`](ResponsesBuilder::api_key).
    pub fn builder(model: impl Into<String>) -> ResponsesBuilder {
        ResponsesBuilder {
            config: HttpConfig::new(DEFAULT_BASE_URL),
            settings: Settings {
                model: model.into(),
                parallel_tool_calls: None,
                reasoning_effort: None,
                reasoning_summary: false,
                store: false,
                reasons: None,
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

impl Model for ResponsesModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.client.call(request)
    }

    /// Calls the model with streaming and yields its events as they arrive: text and reasoning
    /// summary deltas, function-call starts, argument fragments and ends, usage, finish.
    ///
    /// The stream ends with `response.completed` (or `response.incomplete`); a body that ends
    /// before it ends with a `MalformedResponse` error, and a `response.failed` or `error`
    /// event with the error it reports. The reasoning items come as one
    /// [`ModelEvent::Metadata`] before the finish, so an answer assembled from the events keeps
    /// them (see the [module](super)).
    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        self.client.stream(&request)
    }

    /// `"openai"`, as OpenTelemetry's GenAI conventions name it.
    fn provider_name(&self) -> &str {
        PROVIDER
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.model())
    }
}

impl ResponsesBuilder {
    /// The API's base URL, up to and including `/v1` (for a proxy, a gateway, or another
    /// server speaking the Responses API). A query is kept after the path (a gateway's key),
    /// and never shown in errors or traces.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.config.base_url = base_url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer <key>`. It never appears in errors or
    /// `Debug` output.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.config.set_api_key("authorization", api_key.into());
        self
    }

    http::http_setters!(header: " (for example `OpenAI-Organization` or `OpenAI-Project`).");

    crate::user_urls::user_urls_setter!();

    /// Whether the model may call several tools in one answer (`parallel_tool_calls`); unset,
    /// the API decides. Sent only with tools.
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.settings.parallel_tool_calls = Some(parallel);
        self
    }

    /// How much a reasoning model reasons (`reasoning.effort`: `"minimal"`, `"low"`,
    /// `"medium"`, `"high"`, as the model allows).
    pub fn reasoning_effort(mut self, effort: impl Into<String>) -> Self {
        self.settings.reasoning_effort = Some(effort.into());
        self
    }

    /// Asks a reasoning model for a summary of its reasoning (`reasoning.summary: "auto"`):
    /// it comes as [`Reasoning`](hookchain_core::message::ContentPart::Reasoning), never as the
    /// answer's text.
    pub fn reasoning_summary(mut self, summarize: bool) -> Self {
        self.settings.reasoning_summary = summarize;
        self
    }

    /// Whether the model reasons, for what is asked of it: unstored, a reasoning model's
    /// reasoning is asked back encrypted (`include: ["reasoning.encrypted_content"]`), which
    /// other models reject. Unset, it is guessed: yes with a reasoning option, or for a name
    /// of OpenAI's reasoning families (`o1`, `o3`, `o4-mini`, `gpt-5…`, `codex-…`).
    pub fn reasoning(mut self, reasons: bool) -> Self {
        self.settings.reasons = Some(reasons);
        self
    }

    /// Whether OpenAI stores the responses (`store`; default: no, and the reasoning travels
    /// encrypted in the history instead). Stored responses can be seen in OpenAI's dashboard
    /// and are kept for 30 days.
    pub fn store(mut self, store: bool) -> Self {
        self.settings.store = store;
        self
    }

    /// Whether [`Model::invoke`] streams the answer and assembles it (default: no). The answer
    /// is the same, reasoning items included; streaming keeps slow answers from hitting
    /// proxies' idle timeouts.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model.
    pub fn build(self) -> Result<ResponsesModel, BuildError> {
        Ok(ResponsesModel {
            client: ProviderClient {
                http: self.config.build(PROVIDER, "responses")?,
                settings: self.settings,
                streaming: self.streaming,
            },
        })
    }
}
