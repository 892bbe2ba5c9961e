//! The error of a [`ToolCallLimit`](super::ToolCallLimit) whose exit is an error.

use crate::builtin::limit::LimitScope;

/// The error of [`ToolLimitExit::Error`](super::ToolLimitExit::Error): a tool call limit was reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool call limit reached for {}: {scope} limit of {limit} ({run_calls} calls in this run, \
     {thread_calls} in the thread)",
    tool.as_deref().map_or_else(|| "all tools".to_owned(), |tool| format!("`{tool}`"))
)]
#[non_exhaustive]
pub struct ToolCallLimitExceeded {
    /// The limited tool; `None`: every tool.
    pub tool: Option<String>,
    /// The limit that tripped.
    pub scope: LimitScope,
    /// Its value.
    pub limit: u32,
    /// Calls counted in the run, the blocked one included.
    pub run_calls: u32,
    /// Calls counted in the thread.
    pub thread_calls: u32,
}
