//! The OpenAI-compatible client: its builder, the HTTP calls, the [`Model`] implementation.

use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};

use serde::Serialize;

use super::convert::{self, Options, PROVIDER};
use super::stream::ChunkDecoder;
use super::wire::ChatResponse;
use crate::BuildError;
use crate::http::{self, HttpConfig, Protocol, ProviderClient};

/// OpenAI's API; other servers are chosen by their base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A model served over the OpenAI-compatible Chat Completions API.
///
/// Built with [`OpenAiModel::builder`]. Cloning is cheap (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    client: ProviderClient<ChatCompletions>,
}

/// The Chat Completions wire format.
pub(crate) struct ChatCompletions;

/// What shapes each Chat Completions request besides the request itself.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    model: String,
    parallel_tool_calls: Option<bool>,
}

impl Protocol for ChatCompletions {
    type Settings = Settings;
    type Answer = ChatResponse;
    type Decoder = ChunkDecoder;

    fn body<'a>(
        settings: &'a Settings,
        request: &'a ModelRequest,
        stream: bool,
    ) -> impl Serialize + 'a {
        let options = Options {
            model: &settings.model,
            parallel_tool_calls: settings.parallel_tool_calls,
            stream,
        };
        convert::chat_request(request, options)
    }

    fn answer(wire: ChatResponse) -> Result<ModelResponse, ModelError> {
        convert::answer(wire)
    }

    fn decoder() -> ChunkDecoder {
        ChunkDecoder::new()
    }
}

/// Configures an [`OpenAiModel`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct OpenAiBuilder {
    config: HttpConfig,
    settings: Settings,
    streaming: bool,
}

impl OpenAiModel {
    /// A builder for the model named `model` (`"gpt-4o-mini"`, `"llama3.2"`, …), at
    /// [`DEFAULT_BASE_URL`] without an API key until told otherwise.
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            config: HttpConfig::new(DEFAULT_BASE_URL),
            settings: Settings {
                model: model.into(),
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

impl Model for OpenAiModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.client.call(request)
    }

    /// Calls the model with streaming and yields its events as they arrive: text and
    /// reasoning deltas, tool-call starts, argument fragments and ends (with the assembled
    /// call), usage, finish.
    ///
    /// The stream ends after the finish; a failure is its last item. A stream cut short (the
    /// body ends before the finish, or inside a tool call) ends with a `MalformedResponse`
    /// error.
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hookchain::model::ModelEvent;
    /// use hookchain::providers::openai::OpenAiModel;
    /// use hookchain::{Message, Model, ModelRequest};
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = OpenAiModel::builder("llama3.2")
    ///     .base_url("http://localhost:11434/v1")
    ///     .build()?;
    /// let request = ModelRequest::new(vec![Message::user("Tell me a joke.")]);
    /// let mut events = std::pin::pin!(model.stream(request));
    /// while let Some(event) = events.next().await {
    ///     if let ModelEvent::TextDelta { text, .. } = event? {
    ///         print!("{text}");
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
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

impl OpenAiBuilder {
    /// The server's base URL, up to and including `/v1`: `http://localhost:11434/v1` for
    /// Ollama, `http://localhost:8000/v1` for vLLM, `http://localhost:8080/v1` for llama.cpp,
    /// `https://api.groq.com/openai/v1` for Groq. A query is kept after the path (a
    /// gateway's key, Azure's `?api-version=…`), and never shown in errors or traces.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.config.base_url = base_url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer <key>` (local servers need none). It never
    /// appears in errors or `Debug` output.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.config.set_api_key("authorization", api_key.into());
        self
    }

    http::http_setters!(header: " (for example Azure's `api-key`, or OpenRouter's `HTTP-Referer`).");

    crate::user_urls::user_urls_setter!();

    /// Whether the model may call several tools in one answer (`parallel_tool_calls`); unset,
    /// the server decides. Sent only with tools.
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.settings.parallel_tool_calls = Some(parallel);
        self
    }

    /// Whether [`Model::invoke`] streams the answer and assembles it (default: no). The answer
    /// is the same; streaming keeps slow answers from hitting proxies' idle timeouts.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model.
    pub fn build(self) -> Result<OpenAiModel, BuildError> {
        Ok(OpenAiModel {
            client: ProviderClient {
                http: self.config.build(PROVIDER, "chat/completions")?,
                settings: self.settings,
                streaming: self.streaming,
            },
        })
    }
}
