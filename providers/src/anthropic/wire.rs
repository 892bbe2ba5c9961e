//! The Messages API wire format. Lenient on input: fields a server may leave out have
//! defaults, unknown fields are ignored, unknown block and event types are skipped.

use std::borrow::Cow;

use hookchain_core::message::ImageSource;
use serde::{Deserialize, Serialize};

/// `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct MessagesRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system: Option<System>,
    pub(crate) messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thinking: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) stream: bool,
    /// Provider extras from the settings, as they are.
    #[serde(flatten)]
    pub(crate) extra: &'a serde_json::Map<String, serde_json::Value>,
}

/// The system text: a string, or one text block with a cache breakpoint.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum System {
    Text(String),
    Cached([SystemBlock; 1]),
}

/// The system text as a block.
#[derive(Debug, Serialize)]
pub(crate) struct SystemBlock {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) text: String,
    pub(crate) cache_control: CacheControl,
}

/// A prompt-cache breakpoint: the prompt up to this block is cached.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttl: Option<&'static str>,
}

/// One turn of the conversation: a role and its content blocks.
#[derive(Debug, Serialize)]
pub(crate) struct RequestMessage<'a> {
    pub(crate) role: &'static str,
    pub(crate) content: Vec<Block<'a>>,
}

/// A content block of a turn, with a cache breakpoint on it if the prompt is cached up to it.
#[derive(Debug, Serialize)]
pub(crate) struct Block<'a> {
    #[serde(flatten)]
    pub(crate) block: RequestBlock<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cache_control: Option<CacheControl>,
}

impl<'a> From<RequestBlock<'a>> for Block<'a> {
    fn from(block: RequestBlock<'a>) -> Self {
        Block {
            block,
            cache_control: None,
        }
    }
}

/// A content block of the request.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum RequestBlock<'a> {
    Text {
        text: Cow<'a, str>,
    },
    /// Our image sources have Anthropic's form.
    Image {
        source: &'a ImageSource,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a serde_json::Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ToolResultContent<'a>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// The content of a tool result: a string (text only, the common case), or text and image
/// blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolResultContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<RequestBlock<'a>>),
}

/// A tool offered to the model.
#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) input_schema: &'a serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cache_control: Option<CacheControl>,
}

/// The answer of an unstreamed call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MessagesResponse {
    /// `None` when the server sent no content at all: not an answer.
    pub(crate) content: Option<Vec<ContentBlock>>,
    pub(crate) stop_reason: Option<String>,
    /// `None` when the server sent none: the usage is unknown, not 0.
    pub(crate) usage: Option<WireUsage>,
}

/// A content block of an answer.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: serde_json::Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        /// Sent whole in unstreamed answers; streams start the block with it empty and send
        /// it as a delta.
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// Server tool use, and block types added later.
    #[serde(other)]
    Other,
}

/// Token counts; `input_tokens` excludes the cached ones, which are counted apart.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(crate) struct WireUsage {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) cache_creation_input_tokens: Option<u64>,
    pub(crate) cache_read_input_tokens: Option<u64>,
}

/// One event of a streamed answer (the `data` of an SSE event; its `type` names it).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamEvent {
    MessageStart {
        #[serde(default)]
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        #[serde(default)]
        error: serde_json::Value,
    },
    /// Event types added later.
    #[serde(other)]
    Other,
}

/// The message a stream opens with: its usage so far (input and cache counts).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MessageStart {
    pub(crate) usage: Option<WireUsage>,
}

/// More of a content block.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockDelta {
    TextDelta {
        #[serde(default)]
        text: String,
    },
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    ThinkingDelta {
        #[serde(default)]
        thinking: String,
    },
    SignatureDelta {
        #[serde(default)]
        signature: String,
    },
    /// Citations, and delta types added later.
    #[serde(other)]
    Other,
}

/// The end of the message: why it stopped.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct MessageDelta {
    pub(crate) stop_reason: Option<String>,
}
