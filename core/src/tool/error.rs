//! Why a tool call failed.

use crate::error::BoxError;

/// Why a tool call failed. The agent turns it into an error [`ToolResult`](crate::ToolResult)
/// whose text is this error's message, so the model can read it and try again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model called a tool that is not registered.
    #[error("unknown tool `{name}`; available tools: {available}")]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The registered tool names, comma-separated.
        available: String,
    },
    /// The arguments do not match the tool's schema.
    #[error("invalid arguments for tool `{tool}`: {source}")]
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// What did not match.
        #[source]
        source: serde_json::Error,
    },
    /// The tool ran and failed.
    #[error("tool `{tool}` failed: {source}")]
    Failed {
        /// The tool's name.
        tool: String,
        /// The tool's error.
        #[source]
        source: BoxError,
    },
    /// The tool panicked.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool's name.
        tool: String,
        /// The panic message, if it was a string.
        message: String,
    },
    /// The tool pauses the run to ask for outside input (an answer from a person, say); when the
    /// run resumes, [`Tool::resume`](crate::Tool::resume) turns the answer into the result.
    #[error("tool asked to pause the run (an interrupt), which is not possible here")]
    Interrupt {
        /// What the tool wants answered.
        payload: serde_json::Value,
    },
    /// The tool's output could not be turned into text.
    #[error("tool `{tool}` returned output that could not be serialized: {source}")]
    Output {
        /// The tool's name.
        tool: String,
        /// The serialization error.
        #[source]
        source: serde_json::Error,
    },
}

impl ToolError {
    /// A failure of the tool `tool`.
    pub fn failed(tool: impl Into<String>, error: impl Into<BoxError>) -> Self {
        ToolError::Failed {
            tool: tool.into(),
            source: error.into(),
        }
    }
}
