//! [`ToolSpec`]: a tool as the model is offered it, in a request.

use serde::{Deserialize, Serialize};

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON schema of the tool's arguments.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// The spec of the tool `name`, doing what `description` says, taking arguments that
    /// follow the JSON schema `parameters`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}
