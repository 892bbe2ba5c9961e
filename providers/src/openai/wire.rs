//! The Chat Completions wire format: what is sent, and what the many compatible servers send
//! back. Lenient on input: every field a server may leave out has a default, unknown fields are
//! ignored.

use serde::{Deserialize, Serialize};

/// `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(crate) struct ChatRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) stop: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_format: Option<serde_json::Value>,
    /// Routes requests that share a prefix to the same prompt cache (OpenAI; compatible
    /// servers ignore it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_cache_key: Option<&'a str>,
    /// Provider extras from the settings, as they are.
    #[serde(flatten)]
    pub(crate) extra: &'a serde_json::Map<String, serde_json::Value>,
}

/// Asks for a final chunk with the usage (servers that ignore it send none).
#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub(crate) include_usage: bool,
}

/// One message of the request.
#[derive(Debug, Serialize)]
pub(crate) struct RequestMessage<'a> {
    pub(crate) role: &'static str,
    /// `null` for an assistant message that only calls tools, as OpenAI documents.
    pub(crate) content: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tool_calls: Vec<RequestToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_call_id: Option<&'a str>,
}

/// The content of a request message: a string, or parts (a user message with images).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum WireContent<'a> {
    Text(std::borrow::Cow<'a, str>),
    Parts(Vec<WirePart<'a>>),
}

/// One part of a user message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WirePart<'a> {
    Text { text: std::borrow::Cow<'a, str> },
    ImageUrl { image_url: ImageUrl<'a> },
}

/// An image by URL; an inline image is a `data:` URL.
#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl<'a> {
    pub(crate) url: std::borrow::Cow<'a, str>,
}

/// A tool call of an assistant message in the history.
#[derive(Debug, Serialize)]
pub(crate) struct RequestToolCall<'a> {
    pub(crate) id: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) function: RequestFunction<'a>,
}

/// The function of a tool call: the arguments are JSON *text*.
#[derive(Debug, Serialize)]
pub(crate) struct RequestFunction<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) function: FunctionSpec<'a>,
}

/// A tool's name, description and argument schema.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionSpec<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) parameters: &'a serde_json::Value,
}

/// The answer of an unstreamed call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChatResponse {
    pub(crate) choices: Vec<Choice>,
    pub(crate) usage: Option<WireUsage>,
}

/// One choice of an unstreamed answer (we ask for one).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Choice {
    pub(crate) message: ResponseMessage,
    pub(crate) finish_reason: Option<String>,
}

/// The assistant message of an unstreamed answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ResponseMessage {
    pub(crate) content: Option<String>,
    /// DeepSeek, vLLM and llama.cpp send reasoning here; Ollama and OpenRouter in `reasoning`.
    pub(crate) reasoning_content: Option<String>,
    pub(crate) reasoning: Option<String>,
    pub(crate) tool_calls: Vec<ResponseToolCall>,
    pub(crate) refusal: Option<String>,
}

/// A complete tool call of an unstreamed answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ResponseToolCall {
    pub(crate) id: Option<String>,
    pub(crate) function: ResponseFunction,
}

/// The function of a tool call in an answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ResponseFunction {
    pub(crate) name: String,
    /// JSON text; some servers send an object instead, accepted as is.
    pub(crate) arguments: Option<serde_json::Value>,
}

/// Token counts.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct WireUsage {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) prompt_tokens_details: Option<PromptTokensDetails>,
}

/// The cached part of the prompt (OpenAI).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: u64,
}

/// One chunk of a streamed answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChatChunk {
    pub(crate) choices: Vec<ChunkChoice>,
    pub(crate) usage: Option<WireUsage>,
    /// An error reported inside the stream (OpenAI, vLLM) instead of a chunk.
    pub(crate) error: Option<serde_json::Value>,
}

/// One choice of a chunk.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChunkChoice {
    pub(crate) index: u32,
    pub(crate) delta: Delta,
    pub(crate) finish_reason: Option<String>,
}

/// What a chunk adds to the answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Delta {
    pub(crate) content: Option<String>,
    /// The model declined: its refusal's text, in pieces as `content` would be.
    pub(crate) refusal: Option<String>,
    pub(crate) reasoning_content: Option<String>,
    pub(crate) reasoning: Option<String>,
    pub(crate) tool_calls: Vec<ToolCallDelta>,
}

/// A piece of a tool call: the first piece carries id and name, the next ones argument text.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCallDelta {
    /// Which call of the answer; servers that send whole calls may leave it out.
    pub(crate) index: Option<usize>,
    pub(crate) id: Option<String>,
    pub(crate) function: FunctionDelta,
}

/// The function part of a tool call piece.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FunctionDelta {
    pub(crate) name: Option<String>,
    pub(crate) arguments: Option<String>,
}
