//! The AG-UI events this crate sends, as the protocol writes them (JSON, `camelCase`, tagged by
//! `type`), checked against `@ag-ui/core` 1.0's schemas.

use serde::Serialize;
use serde_json::Value;

/// One AG-UI event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum AguiEvent {
    /// The run started: the first event of every stream.
    #[serde(rename_all = "camelCase")]
    RunStarted {
        /// The conversation.
        thread_id: String,
        /// This run.
        run_id: String,
    },
    /// An assistant message starts.
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        /// The message.
        message_id: String,
        /// Always `assistant` here.
        role: &'static str,
    },
    /// A piece of an assistant message's text (never empty).
    #[serde(rename_all = "camelCase")]
    TextMessageContent {
        /// The message.
        message_id: String,
        /// The text.
        delta: String,
    },
    /// An assistant message ends.
    #[serde(rename_all = "camelCase")]
    TextMessageEnd {
        /// The message.
        message_id: String,
    },
    /// The model's reasoning starts.
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        /// The reasoning.
        message_id: String,
    },
    /// A reasoning message starts.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageStart {
        /// The reasoning.
        message_id: String,
        /// Always `reasoning`.
        role: &'static str,
    },
    /// A piece of the reasoning's text.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageContent {
        /// The reasoning.
        message_id: String,
        /// The text.
        delta: String,
    },
    /// A reasoning message ends.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageEnd {
        /// The reasoning.
        message_id: String,
    },
    /// The model's reasoning ends.
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        /// The reasoning.
        message_id: String,
    },
    /// The model starts a tool call.
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_call_name: String,
        /// The assistant message the call belongs to.
        parent_message_id: String,
    },
    /// A piece of a tool call's arguments (JSON text, as the model writes it).
    #[serde(rename_all = "camelCase")]
    ToolCallArgs {
        /// The call.
        tool_call_id: String,
        /// The text.
        delta: String,
    },
    /// The model's tool call is complete.
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        /// The call.
        tool_call_id: String,
    },
    /// A tool call's result.
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        /// The result's message.
        message_id: String,
        /// The call.
        tool_call_id: String,
        /// The result as text.
        content: String,
        /// Always `tool`.
        role: &'static str,
    },
    /// An event of hookchain's own, with no AG-UI equivalent (`hookchain.*`).
    Custom {
        /// What it is.
        name: &'static str,
        /// Its data.
        value: Value,
    },
    /// The run ended, answered or paused.
    #[serde(rename_all = "camelCase")]
    RunFinished {
        /// The conversation.
        thread_id: String,
        /// This run.
        run_id: String,
        /// The answer's text, and how the run ended.
        result: Value,
        /// `success`, or `interrupt` with what must be answered to go on.
        outcome: Outcome,
        /// The tokens the run spent.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
    },
    /// The run failed; nothing follows.
    #[serde(rename_all = "camelCase")]
    RunError {
        /// What went wrong, in words fit for the client (never internals).
        message: String,
        /// A stable code (`model_unavailable`, `invalid_input`, …).
        code: &'static str,
    },
}

/// How a run finished.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// It answered.
    Success,
    /// It paused, waiting for these answers (at least one).
    Interrupt {
        /// What must be answered.
        interrupts: Vec<AguiInterrupt>,
    },
}

/// A pause's question, as AG-UI carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AguiInterrupt {
    /// Answer it by this id (the interrupt's).
    pub id: String,
    /// Who asks (the middleware or tool that raised it: `human_in_the_loop`, …).
    pub reason: String,
    /// The tool call it concerns, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What the raiser asks (its payload: the calls to approve, an MCP server's form, …).
    pub metadata: Value,
}

/// Tokens a run spent (AG-UI's numeric-only usage).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// The provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Input tokens (cached ones included).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cached_input_tokens: u64,
}
