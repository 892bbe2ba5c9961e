//! What the agent sends to the model.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ResponseFormat;
use super::ToolSpec;
use super::copy_blocks::{Padding, padding_to_blocks};
use crate::message::Message;
use crate::shared::Shared;

/// One request to a [`Model`](super::Model).
///
/// ```
/// use hookchain::model::ModelSettings;
/// use hookchain::{Message, ModelRequest};
///
/// let request = ModelRequest::new(vec![Message::user("Hello!")])
///     .with_system_prompt("Answer in French.")
///     .with_settings(ModelSettings::new().temperature(0.2));
/// assert_eq!(request.messages.len(), 1);
/// ```
///
/// The agent builds a fresh request for every model call from the conversation history. Edits a
/// middleware makes to the request (in `before_model` or `wrap_model_call`) affect that call only;
/// to change the history, edit it through the [`Context`](crate::Context).
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The model to call, by the name a [`ModelRouter`](super::ModelRouter) knows it by;
    /// `None` for the agent's model. A wrap hook that sets it and calls `next` sends the request
    /// to another model through the inner middleware (a fallback, a router).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation so far, oldest first; shared with the run's history (see [`Shared`]):
    /// editing it copies it for this request only.
    pub messages: Shared<Vec<Message>>,
    /// Instructions sent ahead of the messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The tools the model may call; shared with the agent's tools (see [`Shared`]).
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tools: Shared<Vec<ToolSpec>>,
    /// Whether and which tools the model must call.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// The JSON schema the answer must follow (structured output), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Sampling and length settings.
    #[serde(default)]
    pub settings: ModelSettings,
    /// What of the prompt the provider should cache, if anything (see
    /// [`PromptCaching`](crate::builtin::PromptCaching)). Boxed: a request is moved through
    /// every layer of a model call, and most requests have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<Box<super::PromptCache>>,
    /// Rounds the request up to whole 64-byte blocks: each layer of a model call copies it
    /// (see [`copy_blocks`](super::copy_blocks)).
    #[serde(skip)]
    pub(crate) padding: Padding<REQUEST_PADDING>,
}

/// The request's fields but its padding, by type: their size decides the padding. (It varies
/// with the dependencies' features: `serde_json`'s `preserve_order` makes `settings.extra` an
/// `IndexMap`.)
type RequestFields = (
    Option<String>,
    Shared<Vec<Message>>,
    Option<String>,
    Shared<Vec<ToolSpec>>,
    ToolChoice,
    Option<ResponseFormat>,
    ModelSettings,
    Option<Box<super::PromptCache>>,
);

/// Bytes of padding that make the request whole 64-byte blocks.
const REQUEST_PADDING: usize = padding_to_blocks(std::mem::size_of::<RequestFields>());

// A field added to the request without its type in `RequestFields` shows here.
const _: () = assert!(
    padding_to_blocks(std::mem::size_of::<ModelRequest>()) == 0,
    "ModelRequest is not whole 64-byte blocks: list each of its fields' types in RequestFields"
);

impl fmt::Debug for ModelRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRequest")
            .field("model", &self.model)
            .field("messages", &self.messages)
            .field("system_prompt", &self.system_prompt)
            .field("tools", &self.tools)
            .field("tool_choice", &self.tool_choice)
            .field("response_format", &self.response_format)
            .field("settings", &self.settings)
            .field("prompt_cache", &self.prompt_cache)
            .finish()
    }
}

impl ModelRequest {
    /// A request with `messages` and nothing else set (no system prompt, no tools, the
    /// provider's default settings).
    pub fn new(messages: impl Into<Shared<Vec<Message>>>) -> Self {
        ModelRequest {
            messages: messages.into(),
            ..ModelRequest::default()
        }
    }

    /// The request sent to the model a [`ModelRouter`](super::ModelRouter) knows as `model`.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The request with `system_prompt` as its instructions.
    #[must_use]
    pub fn with_system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }

    /// The request offering `tools` to the model.
    #[must_use]
    pub fn with_tools(mut self, tools: impl Into<Shared<Vec<ToolSpec>>>) -> Self {
        self.tools = tools.into();
        self
    }

    /// The request with `tool_choice`.
    #[must_use]
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// The request asking for an answer that follows `format` (structured output).
    #[must_use]
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// The request asking the provider to cache its prompt as `cache` says.
    #[must_use]
    pub fn with_prompt_cache(mut self, cache: super::PromptCache) -> Self {
        self.prompt_cache = Some(Box::new(cache));
        self
    }

    /// The request with `settings`.
    #[must_use]
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }
}

fn is_empty(tools: &Shared<Vec<ToolSpec>>) -> bool {
    tools.is_empty()
}

/// Whether and which tools the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call the named tool.
    Tool(String),
}

/// Sampling and length settings of a model call. `None` leaves the provider's default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelSettings {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Upper bound on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Sequences that stop generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// Provider extras: fields added as they are to the provider's request body (`seed`,
    /// `reasoning_effort`, `top_k`, …), for what the settings above do not cover.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ModelSettings {
    /// Settings that leave every choice to the provider.
    #[must_use]
    pub fn new() -> Self {
        Self {
            temperature: None,
            max_tokens: None,
            top_p: None,
            stop: Vec::new(),
            extra: serde_json::Map::new(),
        }
    }

    /// Sets the sampling temperature.
    #[must_use]
    pub const fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the upper bound on generated tokens.
    #[must_use]
    pub const fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Adds a provider extra: `key: value` in the provider's request body.
    #[must_use]
    pub fn extra(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }
}
