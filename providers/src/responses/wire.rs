//! The Responses API's wire format (`POST /responses`, streamed or not). Lenient on input:
//! fields a server may leave out have defaults, unknown fields, item kinds and events are
//! ignored.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /responses`.
#[derive(Debug, Serialize)]
pub(crate) struct ResponsesRequest<'a> {
    pub(crate) model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<String>,
    pub(crate) input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_output_tokens: Option<u32>,
    /// The output format: `{"format": {"type": "json_schema", …}}` for structured output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning: Option<ReasoningConfig<'a>>,
    /// Always sent: OpenAI's default is to store every response, ours is not to.
    pub(crate) store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) include: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_cache_key: Option<&'a str>,
    /// Provider extras from the settings, as they are.
    #[serde(flatten)]
    pub(crate) extra: &'a Map<String, Value>,
}

/// How much the model reasons, and whether it summarizes its reasoning.
#[derive(Debug, Serialize)]
pub(crate) struct ReasoningConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<&'static str>,
}

/// One item of the input: a message, a call the model made, a call's output, or a reasoning
/// item the model wrote (sent back as it came).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum InputItem<'a> {
    Message(InputMessage<'a>),
    FunctionCall(InputFunctionCall<'a>),
    FunctionCallOutput(InputFunctionCallOutput<'a>),
    /// A reasoning item of an earlier answer, as the answer's metadata keeps it.
    Reasoning(&'a Value),
}

/// A user's or the assistant's message.
#[derive(Debug, Serialize)]
pub(crate) struct InputMessage<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) role: &'static str,
    pub(crate) content: Vec<InputContent<'a>>,
}

/// A part of a message: the user's text and images, the assistant's text.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum InputContent<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        /// A URL, or a `data:` URL of an inline image.
        image_url: Cow<'a, str>,
    },
    OutputText {
        text: Cow<'a, str>,
        /// Required by the API on an `output_text` part sent back; ours has none (`[]`).
        annotations: [(); 0],
    },
}

/// A call the model made, sent back in the history.
#[derive(Debug, Serialize)]
pub(crate) struct InputFunctionCall<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) call_id: &'a str,
    pub(crate) name: &'a str,
    /// JSON text.
    pub(crate) arguments: String,
}

/// A call's result.
#[derive(Debug, Serialize)]
pub(crate) struct InputFunctionCallOutput<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) call_id: &'a str,
    pub(crate) output: Cow<'a, str>,
}

/// A function the model may call (`strict: false`: our schemas are not all strict-mode ones).
#[derive(Debug, Serialize)]
pub(crate) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) parameters: &'a Value,
    pub(crate) strict: bool,
}

/// A response, whole (an unstreamed answer) or as the final events of a stream carry it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Response {
    /// `completed`, `incomplete`, `failed`, … (`None` from a lenient server: completed).
    pub(crate) status: Option<String>,
    pub(crate) output: Vec<OutputItem>,
    pub(crate) incomplete_details: Option<IncompleteDetails>,
    /// `None` when the server sent none: the usage is unknown, not 0.
    pub(crate) usage: Option<WireUsage>,
    /// Why a `failed` response failed.
    pub(crate) error: Option<Value>,
}

/// Why a response is `incomplete`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    pub(crate) reason: Option<String>,
}

/// One item of the output: a `message`, a `function_call`, a `reasoning` item; other kinds
/// (the built-in tools' calls) are read as neither and skipped.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub(crate) struct OutputItem {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) id: Option<String>,
    /// `incomplete` for an item the token limit cut.
    pub(crate) status: Option<String>,
    /// A message's parts.
    pub(crate) content: Vec<OutputContent>,
    /// A function call's id (what its output names), name and arguments (JSON text).
    pub(crate) call_id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) arguments: Option<Value>,
    /// A reasoning item's summary and its encrypted reasoning.
    pub(crate) summary: Vec<SummaryPart>,
    pub(crate) encrypted_content: Option<String>,
}

/// A part of a message: `output_text` (`text`) or `refusal` (`refusal`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub(crate) struct OutputContent {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) text: Option<String>,
    pub(crate) refusal: Option<String>,
}

/// A part of a reasoning item's summary (`summary_text`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct SummaryPart {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) text: String,
}

/// Token counts: `input_tokens` includes the cached ones, `output_tokens` the reasoning.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct WireUsage {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) input_tokens_details: Option<InputTokensDetails>,
    pub(crate) output_tokens_details: Option<OutputTokensDetails>,
}

/// The cached part of the input.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct InputTokensDetails {
    pub(crate) cached_tokens: u64,
}

/// The reasoning part of the output (counted in `output_tokens` already).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct OutputTokensDetails {
    pub(crate) reasoning_tokens: u64,
}

/// One event of a stream: its `type` says which of the fields it carries.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StreamEvent {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) output_index: Option<u64>,
    /// The id of the item a delta or a part belongs to (the item of `added` and `done` events
    /// carries its own): where a server sends no `output_index` (llama.cpp), it says the item.
    pub(crate) item_id: Option<String>,
    pub(crate) summary_index: Option<u64>,
    pub(crate) delta: Option<String>,
    pub(crate) item: Option<OutputItem>,
    pub(crate) response: Option<Response>,
}
