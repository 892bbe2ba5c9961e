//! Why a tool call failed.

use crate::report::BoxError;

/// Why a tool call failed.
///
/// The agent turns it into an error [`ToolResult`](crate::ToolResult). What the model reads is
/// a short, safe message naming the tool and the kind of failure (see
/// [`ToolFailure::message`](crate::tool::ToolFailure::message)): the error's own text, which may hold
/// internal details (a connection string, a path), goes to `tracing` and to the application
/// ([`RunOutput::tool_failures`](crate::RunOutput::tool_failures)), not to the model — except
/// where it is meant for the model: bad arguments, an unknown tool, and
/// [`ToolError::ForModel`].
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
    /// The arguments do not match the tool's schema (the model reads why, to fix its call).
    #[error("invalid arguments for tool `{tool}`")]
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// What did not match.
        #[source]
        source: serde_json::Error,
    },
    /// The tool ran and failed; the model reads only that it failed.
    #[error("tool `{tool}` failed")]
    Failed {
        /// The tool's name.
        tool: String,
        /// The tool's error.
        #[source]
        source: BoxError,
    },
    /// The tool failed with a message meant for the model (a validation message it should act
    /// on): the model reads `message` as it is.
    #[error("tool `{tool}`: {message}")]
    ForModel {
        /// The tool's name.
        tool: String,
        /// What the model reads.
        message: String,
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
    /// run resumes, the tool is called again with the answer in its context
    /// ([`ToolContext::resume_value`](crate::ToolContext::resume_value)).
    #[error("tool asked to pause the run (an interrupt), which is not possible here")]
    Interrupt {
        /// What the tool wants answered.
        payload: serde_json::Value,
    },
    /// The tool's output could not be turned into text.
    #[error("tool `{tool}` returned output that could not be serialized")]
    Output {
        /// The tool's name.
        tool: String,
        /// The serialization error.
        #[source]
        source: serde_json::Error,
    },
}

impl ToolError {
    /// A failure of the tool `tool`, whose text the model does not read.
    pub fn failed(tool: impl Into<String>, error: impl Into<BoxError>) -> Self {
        ToolError::Failed {
            tool: tool.into(),
            source: error.into(),
        }
    }

    /// A failure of the tool `tool` whose `message` the model reads as it is: for a message
    /// written for the model (which argument to fix, what to try instead).
    pub fn for_model(tool: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::ForModel {
            tool: tool.into(),
            message: message.into(),
        }
    }
}
