//! The Gemini API's wire format (`generateContent`, `streamGenerateContent`). Lenient on input:
//! fields a server may leave out have defaults, unknown fields and part kinds are ignored.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// `POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`: the same body).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerateRequest<'a> {
    pub(crate) contents: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system_instruction: Option<SystemInstruction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_config: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub(crate) generation_config: GenerationConfig<'a>,
    /// Provider extras from the settings, as they are (`safetySettings`, `cachedContent`, …);
    /// an extra named `generationConfig` is merged into ours instead.
    #[serde(flatten)]
    pub(crate) extra: serde_json::Map<String, serde_json::Value>,
}

/// The system prompt: text parts without a role.
#[derive(Debug, Serialize)]
pub(crate) struct SystemInstruction {
    pub(crate) parts: [TextPart; 1],
}

/// A part that is text only.
#[derive(Debug, Serialize)]
pub(crate) struct TextPart {
    pub(crate) text: String,
}

/// One turn of the conversation: `user` or `model`, and its parts.
#[derive(Debug, Serialize)]
pub(crate) struct Turn<'a> {
    pub(crate) role: &'static str,
    pub(crate) parts: Vec<RequestPart<'a>>,
}

/// A part of a request: exactly one of its data fields is set, with the signature Gemini gave
/// the part when it wrote it.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestPart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) inline_data: Option<Blob<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file_data: Option<FileData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) function_call: Option<RequestCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thought_signature: Option<&'a str>,
}

/// Bytes sent inline, base64-encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Blob<'a> {
    pub(crate) mime_type: &'a str,
    pub(crate) data: &'a str,
}

/// A file Gemini fetches by URI.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileData<'a> {
    pub(crate) mime_type: &'static str,
    pub(crate) file_uri: &'a str,
}

/// A call the model made, sent back in the history.
#[derive(Debug, Serialize)]
pub(crate) struct RequestCall<'a> {
    pub(crate) name: &'a str,
    pub(crate) args: &'a serde_json::Value,
}

/// A tool's result: Gemini matches it to its call by name and order (it has no call ids).
#[derive(Debug, Serialize)]
pub(crate) struct FunctionResponse<'a> {
    pub(crate) name: &'a str,
    pub(crate) response: serde_json::Value,
}

/// The tools offered to the model.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tools<'a> {
    pub(crate) function_declarations: Vec<FunctionDeclaration<'a>>,
}

/// One tool; its parameters in Gemini's schema subset.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionDeclaration<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) parameters: serde_json::Value,
}

/// Sampling, length, output format and thinking.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_schema: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking_config: Option<ThinkingConfig>,
    /// The settings' extra `generationConfig` (`topK`, `seed`, …), as it is.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) extra: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

impl GenerationConfig<'_> {
    fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.max_output_tokens.is_none()
            && self.stop_sequences.is_empty()
            && self.response_mime_type.is_none()
            && self.thinking_config.is_none()
            && self.extra.is_none_or(serde_json::Map::is_empty)
    }
}

/// Whether the model's thoughts come back as `thought` parts, and how much it may think.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThinkingConfig {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) include_thoughts: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking_budget: Option<i32>,
}

/// An answer, whole or one chunk of a stream (a stream's chunks have this shape too).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct GenerateResponse {
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) prompt_feedback: Option<PromptFeedback>,
    /// `None` when the server sent none: the usage is unknown, not 0.
    pub(crate) usage_metadata: Option<UsageMetadata>,
    /// An error reported inside a stream.
    pub(crate) error: Option<serde_json::Value>,
}

/// One answer of the model (this client asks for one).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Candidate {
    pub(crate) content: Option<CandidateContent>,
    pub(crate) finish_reason: Option<String>,
}

/// The parts of an answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CandidateContent {
    pub(crate) parts: Vec<Part>,
}

/// A part of an answer: text (a thought if `thought`), or a function call; other kinds
/// (inline data, code execution) are read as neither and skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Part {
    pub(crate) text: Option<String>,
    pub(crate) thought: bool,
    pub(crate) thought_signature: Option<String>,
    pub(crate) function_call: Option<FunctionCall>,
}

/// A call the model makes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FunctionCall {
    /// Set by some Gemini APIs (the Live API); otherwise this client names the call.
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) args: serde_json::Value,
}

/// Why the prompt itself was blocked, if it was.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct PromptFeedback {
    pub(crate) block_reason: Option<String>,
}

/// Token counts: `promptTokenCount` includes the cached tokens (`cachedContentTokenCount`);
/// the thoughts are counted apart from the answer.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct UsageMetadata {
    pub(crate) prompt_token_count: u64,
    pub(crate) candidates_token_count: u64,
    pub(crate) cached_content_token_count: u64,
    pub(crate) thoughts_token_count: u64,
    pub(crate) tool_use_prompt_token_count: u64,
}
