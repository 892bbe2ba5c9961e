//! An answer kept for a layer of a tool call that still waits, and who on the call's path
//! raised the interrupt it answers.

use serde::{Deserialize, Serialize};

/// Who on a tool call's path raised an interrupt, and so who reads its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Raiser {
    /// The `wrap_tool_call` hook of the member at this position of the flattened chain.
    Member(usize),
    /// The tool itself.
    Tool,
}

/// An answer given at an earlier pause to a layer of a tool call that still waits: it stays
/// that layer's until the call completes (see [`Position::Tools`](crate::interrupt::Position)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolAnswer {
    pub(crate) call_id: String,
    pub(crate) raiser: Raiser,
    pub(crate) answer: serde_json::Value,
    /// The payload of the interrupt it answers (`null` in checkpoints written before it was
    /// kept).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub(crate) asked: serde_json::Value,
}
