//! What `#[tool]` generates calls to: the spec, the arguments and the result of a tool
//! function.
//!
//! The result conversions are traits on the user's return type, carrying the diagnostic for a
//! type that cannot be a tool's result; the macro spans the conversion at the user's `-> T`.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::BoxError;
use crate::tool::{ToolError, ToolSpec, parameters_schema};

/// The spec of a tool whose arguments are `A`.
pub fn tool_spec<A: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: parameters_schema::<A>(),
    }
}

/// The model's arguments for the tool `tool`, deserialized.
pub fn tool_arguments<A: DeserializeOwned>(
    tool: &str,
    arguments: serde_json::Value,
) -> Result<A, ToolError> {
    crate::tool::fn_tool::arguments_as(tool, arguments)
}

/// Whether the model's arguments deserialize into `A`.
pub fn check_tool_arguments<A: DeserializeOwned>(
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<(), ToolError> {
    A::deserialize(arguments)
        .map(drop)
        .map_err(|source| ToolError::InvalidArguments {
            tool: tool.to_owned(),
            source,
        })
}

/// An answer to the tool's interrupt as its result, for a tool function that takes no context
/// (and so cannot read the answer itself).
pub fn answer_as_text(answer: &serde_json::Value) -> String {
    crate::tool::fn_tool::answer_as_text(answer)
}

/// What a tool function returns, when it does not return a `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result: the model reads it as JSON",
    label = "return a type that implements `serde::Serialize` here, or `Result<T, E>` with such a `T`",
    note = "a `String` is the text the model reads; anything else is serialized to JSON"
)]
pub trait ToolOutput {
    /// The text the model reads.
    fn into_tool_output(self, tool: &str) -> Result<String, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutput for T {
    #[inline]
    fn into_tool_output(self, tool: &str) -> Result<String, ToolError> {
        crate::tool::fn_tool::output_as_text(tool, Ok::<T, ToolError>(self))
    }
}

/// What a tool function returns, when it returns a `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result: its `Ok` value must implement \
               `serde::Serialize`, and its error must be an error type",
    label = "return `Result<T, E>` here, with `T: serde::Serialize`",
    note = "the model reads `T` as JSON (a `String` as it is); `E` is any error type that \
            converts into `Box<dyn std::error::Error + Send + Sync>`, such as \
            `hookchain::ToolError`"
)]
pub trait FallibleToolOutput {
    /// The text the model reads, or the tool's failure.
    fn into_tool_output(self, tool: &str) -> Result<String, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize, E: Into<BoxError>> FallibleToolOutput for Result<T, E> {
    #[inline]
    fn into_tool_output(self, tool: &str) -> Result<String, ToolError> {
        crate::tool::fn_tool::output_as_text(tool, self)
    }
}
