//! Tools the model can call: the [`Tool`] trait, tools made from async closures ([`FnTool`]), and
//! the [`ToolRegistry`] that dispatches calls by name.

mod ask_user;
mod error;
mod failure;
mod fn_tool;
mod registry;

use std::future::Future;

use serde::{Deserialize, Serialize};

pub use ask_user::{ASK_USER, AnswerError, AnswerKind, AskUser, Question};
pub use error::ToolError;
pub(crate) use failure::MessagePolicy;
pub use failure::{ToolFailure, ToolFailureKind};
pub use fn_tool::FnTool;
pub use registry::ToolRegistry;
pub(crate) use registry::{panic_message, result_of};

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON schema of the tool's arguments.
    pub parameters: serde_json::Value,
}

/// A tool the model can call.
///
/// Most tools are made with [`FnTool::new`] from an async closure and an argument type deriving
/// `serde::Deserialize` and `schemars::JsonSchema`. Implement the trait directly for tools with
/// their own schema or dispatch.
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description and argument schema.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool on the model's arguments; the `Ok` text is what the model reads.
    ///
    /// `Err(ToolError::Interrupt { payload })` pauses the run; see
    /// [`interrupt`](crate::interrupt).
    fn call(
        &self,
        arguments: serde_json::Value,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;

    /// Finishes a call that interrupted the run, given the `answer` to the interrupt; the `Ok`
    /// text is what the model reads. By default the answer is the result: a JSON string as its
    /// text, anything else as JSON.
    fn resume(
        &self,
        arguments: serde_json::Value,
        answer: serde_json::Value,
    ) -> impl Future<Output = Result<String, ToolError>> + Send {
        let _ = arguments;
        std::future::ready(Ok(match answer {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        }))
    }

    /// Checks `arguments` without running the tool (for an answer that edits a call's
    /// arguments, before the run resumes). By default, the arguments must be a JSON object;
    /// tools with typed arguments ([`FnTool`]) check that they deserialize.
    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        if arguments.is_object() {
            Ok(())
        } else {
            Err(ToolError::failed(
                self.spec().name,
                "the arguments must be a JSON object",
            ))
        }
    }

    /// Checks the `answer` to an interrupt this tool raised for a call with `arguments`, before
    /// the run resumes: an answer refused here is refused by `resume` before anything runs.
    /// Accepts every answer by default.
    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &serde_json::Value,
    ) -> Result<(), ToolError> {
        let _ = (arguments, answer);
        Ok(())
    }
}
