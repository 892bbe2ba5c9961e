//! The Gemini client: its builder, the HTTP calls, the [`Model`] implementation.

use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};
use serde::Serialize;

use super::convert::{self, PROVIDER};
use super::stream::{self, ChunkDecoder};
use super::wire::{GenerateResponse, ThinkingConfig};
use crate::BuildError;
use crate::http::{self, HttpConfig, Protocol, SplitEndpoints};

/// The Gemini API (Google AI), up to and including its version.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// A model served over the Gemini API (`generateContent`).
///
/// Built with [`GeminiModel::builder`]. Cloning is cheap (the connection pool is shared).
#[derive(Debug, Clone)]
pub struct GeminiModel {
    /// `:generateContent`, and `:streamGenerateContent?alt=sse`.
    endpoints: SplitEndpoints<GenerateContent>,
    model: String,
}

/// The `generateContent` wire format.
pub(crate) struct GenerateContent;

/// What shapes each request besides the request itself.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    thinking: Option<ThinkingConfig>,
}

impl Protocol for GenerateContent {
    type Settings = Settings;
    type Answer = GenerateResponse;
    type Decoder = ChunkDecoder;

    // The same body streamed or not: the URL says which.
    fn body<'a>(
        settings: &'a Settings,
        request: &'a ModelRequest,
        _stream: bool,
    ) -> impl Serialize + 'a {
        convert::generate_request(request, settings.thinking)
    }

    fn answer(wire: GenerateResponse) -> Result<ModelResponse, ModelError> {
        stream::answer(wire)
    }

    fn decoder() -> ChunkDecoder {
        ChunkDecoder::new()
    }
}

/// Configures a [`GeminiModel`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GeminiBuilder {
    config: HttpConfig,
    model: String,
    settings: Settings,
    streaming: bool,
}

impl GeminiModel {
    /// A builder for the model named `model` (`"gemini-2.5-flash"`, …; a `models/` prefix is
    /// allowed) at [`DEFAULT_BASE_URL`]; give it an [`api_key`](GeminiBuilder::api_key).
    pub fn builder(model: impl Into<String>) -> GeminiBuilder {
        let model: String = model.into();
        GeminiBuilder {
            config: HttpConfig::new(DEFAULT_BASE_URL),
            model: model.strip_prefix("models/").unwrap_or(&model).to_owned(),
            settings: Settings { thinking: None },
            streaming: false,
        }
    }

    /// The model name in every request's URL.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl Model for GeminiModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        self.endpoints.call(request)
    }

    /// Calls the model with streaming (`:streamGenerateContent?alt=sse`) and yields its events
    /// as they arrive: text and thought deltas, each function call whole (start, arguments, and
    /// its end once the answer finishes), usage, finish.
    ///
    /// The stream ends with the body; one that ends before a finish reason ends with a
    /// `MalformedResponse` error, and an error chunk is its last item.
    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        self.endpoints.stream(&request)
    }

    /// `"gcp.gemini"`, as OpenTelemetry's GenAI conventions name the Gemini API.
    fn provider_name(&self) -> &str {
        PROVIDER
    }

    fn model_name(&self) -> Option<&str> {
        Some(self.model())
    }
}

impl GeminiBuilder {
    /// The API's base URL, up to and including `/v1beta` (for a proxy or a gateway). A query
    /// is kept after the path (a gateway's key), and never shown in errors or traces.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.config.base_url = base_url.into();
        self
    }

    /// The API key, sent as `x-goog-api-key`. It never appears in errors or `Debug` output.
    pub fn api_key(mut self, api_key: impl Into<String>) -> Self {
        self.config.set_api_key("x-goog-api-key", api_key.into());
        self
    }

    http::http_setters!(header: " (for example `x-goog-user-project`).");

    crate::user_urls::user_urls_setter!();

    /// Asks for the model's thoughts (`thinkingConfig.includeThoughts`): they arrive as
    /// reasoning events of [`GeminiModel::stream`], and are kept in the answer's content as
    /// [`Reasoning`](hookchain_core::message::ContentPart::Reasoning) parts, never as its text.
    /// They are not sent back: Gemini takes its thinking back through the thought signatures
    /// (see the [module](super)).
    pub fn include_thoughts(mut self, include: bool) -> Self {
        let thinking = self.thinking();
        thinking.include_thoughts = include;
        self
    }

    /// How many tokens the model may think (`thinkingConfig.thinkingBudget`): `0` turns
    /// thinking off where the model allows it, `-1` lets the model decide.
    pub fn thinking_budget(mut self, tokens: i32) -> Self {
        self.thinking().thinking_budget = Some(tokens);
        self
    }

    fn thinking(&mut self) -> &mut ThinkingConfig {
        self.settings.thinking.get_or_insert(ThinkingConfig {
            include_thoughts: false,
            thinking_budget: None,
        })
    }

    /// Whether [`Model::invoke`] streams the answer and assembles it (default: no).
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The model.
    pub fn build(self) -> Result<GeminiModel, BuildError> {
        let path = format!("models/{}", self.model);
        let endpoints = SplitEndpoints::build(
            &self.config,
            PROVIDER,
            (
                &format!("{path}:generateContent"),
                &format!("{path}:streamGenerateContent?alt=sse"),
            ),
            self.settings,
            self.streaming,
        )?;
        Ok(GeminiModel {
            endpoints,
            model: self.model,
        })
    }
}
