//! Bedrock's Converse wire format (requests written, answers and stream events read), as the
//! Converse API reference describes it. Lenient: unknown fields are ignored, missing ones take
//! defaults, and unknown content blocks are skipped.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `Converse` or `ConverseStream` request (the model is in the URL).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConverseRequest<'a> {
    pub(crate) messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) system: Vec<SystemBlock<'a>>,
    #[serde(skip_serializing_if = "InferenceConfig::is_empty")]
    pub(crate) inference_config: InferenceConfig<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_config: Option<ToolConfig<'a>>,
    /// The model's own fields (Claude's `thinking`, and the like).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) additional_model_request_fields: Option<Value>,
    /// Settings' extras, at the top level (`guardrailConfig`, `performanceConfig`, …).
    #[serde(flatten)]
    pub(crate) extra: serde_json::Map<String, Value>,
}

/// One turn of the conversation: `user` or `assistant`.
#[derive(Debug, Serialize)]
pub(crate) struct Turn<'a> {
    pub(crate) role: &'static str,
    pub(crate) content: Vec<Block<'a>>,
}

/// A content block of a request.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Block<'a> {
    Text(Cow<'a, str>),
    Image(Image<'a>),
    ToolUse(ToolUse<'a>),
    ToolResult(ToolResult<'a>),
    /// As Bedrock wrote it (kept in the message's metadata).
    ReasoningContent(&'a Value),
    CachePoint(CachePoint),
}

/// An image, inline (`bytes`, base64 in JSON) or in S3.
#[derive(Debug, Serialize)]
pub(crate) struct Image<'a> {
    pub(crate) format: &'a str,
    pub(crate) source: ImageSource<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ImageSource<'a> {
    Bytes(&'a str),
    S3Location { uri: &'a str },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolUse<'a> {
    pub(crate) tool_use_id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) input: &'a Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResult<'a> {
    pub(crate) tool_use_id: &'a str,
    pub(crate) content: Vec<ResultBlock<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<&'static str>,
}

/// A block of a tool result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ResultBlock<'a> {
    Text(Cow<'a, str>),
    Json(&'a Value),
    Image(Image<'a>),
}

/// Reasoning as Bedrock writes it (and takes back, from the message's metadata): signed text,
/// or redacted (opaque, base64) content. A union on the wire (one field set); read leniently,
/// as a struct.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ReasoningContent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning_text: Option<ReasoningText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) redacted_content: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ReasoningText {
    pub(crate) text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) signature: Option<String>,
}

/// A cache breakpoint: the prompt up to here is cached.
#[derive(Debug, Serialize)]
pub(crate) struct CachePoint {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

impl CachePoint {
    pub(crate) const DEFAULT: CachePoint = CachePoint { kind: "default" };
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SystemBlock<'a> {
    Text(Cow<'a, str>),
    CachePoint(CachePoint),
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InferenceConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub(crate) stop_sequences: &'a [String],
}

impl InferenceConfig<'_> {
    fn is_empty(&self) -> bool {
        self.max_tokens.is_none()
            && self.temperature.is_none()
            && self.top_p.is_none()
            && self.stop_sequences.is_empty()
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolConfig<'a> {
    pub(crate) tools: Vec<ToolEntry<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ToolEntry<'a> {
    ToolSpec(ToolSpec<'a>),
    CachePoint(CachePoint),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolSpec<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub(crate) description: &'a str,
    pub(crate) input_schema: InputSchema<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct InputSchema<'a> {
    pub(crate) json: &'a Value,
}

/// An unstreamed answer.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ConverseResponse {
    pub(crate) output: Option<Output>,
    pub(crate) stop_reason: Option<String>,
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Output {
    pub(crate) message: Option<AnswerMessage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AnswerMessage {
    pub(crate) content: Vec<AnswerBlock>,
}

/// A content block of an answer: a union on the wire, read as a struct so that anything else
/// (an image, a citation, a block of a newer API) is skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct AnswerBlock {
    pub(crate) text: Option<String>,
    pub(crate) tool_use: Option<AnswerToolUse>,
    pub(crate) reasoning_content: Option<ReasoningContent>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AnswerToolUse {
    pub(crate) tool_use_id: String,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) input: Value,
}

/// Token counts: `inputTokens` leaves out the cached ones, counted apart.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WireUsage {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) cache_read_input_tokens: u64,
    pub(crate) cache_write_input_tokens: u64,
}

/// `contentBlockStart`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockStart {
    pub(crate) content_block_index: usize,
    #[serde(default)]
    pub(crate) start: Option<StartBlock>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct StartBlock {
    pub(crate) tool_use: Option<StartToolUse>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartToolUse {
    pub(crate) tool_use_id: String,
    pub(crate) name: String,
}

/// `contentBlockDelta`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockDelta {
    pub(crate) content_block_index: usize,
    pub(crate) delta: Delta,
}

/// A delta: a union on the wire, read as a struct (a delta of another kind is skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Delta {
    pub(crate) text: Option<String>,
    pub(crate) tool_use: Option<ToolUseDelta>,
    pub(crate) reasoning_content: Option<ReasoningDelta>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolUseDelta {
    #[serde(default)]
    pub(crate) input: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ReasoningDelta {
    pub(crate) text: Option<String>,
    pub(crate) signature: Option<String>,
    pub(crate) redacted_content: Option<String>,
}

/// `contentBlockStop`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockStop {
    pub(crate) content_block_index: usize,
}

/// `messageStop`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageStop {
    #[serde(default)]
    pub(crate) stop_reason: Option<String>,
}

/// `metadata`: the usage, after the stop.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StreamMetadata {
    pub(crate) usage: Option<WireUsage>,
}
