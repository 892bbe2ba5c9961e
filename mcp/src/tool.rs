//! An MCP server's tool as a hookchain [`Tool`].

use std::sync::Arc;

use hookchain_core::{Tool, ToolContext, ToolError, ToolSpec};

use crate::connection::{CallError, Connection};
use crate::output::tool_output;

/// A tool of an MCP server, as the agent sees it: a [`Tool`] like any other, so every
/// `wrap_tool_call` middleware (approval, retry, timeouts, limits, caches) applies to it as to
/// a `#[tool]`.
///
/// Its [`spec`](Tool::spec) has the provider-safe name (see
/// [`provider_safe_names`](crate::provider_safe_names)) and the server's description and input
/// schema (with `"properties"` where it had none); a call sends `tools/call` with the
/// server's own name for the tool. What the model reads:
///
/// - the result's text (see [`McpToolset`](crate::McpToolset) for images and structured
///   content);
/// - for a result with `isError: true`, the server's text, as a [`ToolError::ForModel`];
/// - for a call that timed out, a server that stopped during the call or cannot be started,
///   or a tool the server no longer offers, a short message saying so
///   ([`ToolError::ForModel`]; the full error goes to `tracing`). The next call starts a new
///   session (a stdio server is started again) when the server died or no longer answers.
#[derive(Clone)]
pub struct McpTool {
    spec: ToolSpec,
    original: Arc<str>,
    connection: Arc<Connection>,
}

impl McpTool {
    pub(crate) fn new(spec: ToolSpec, original: String, connection: Arc<Connection>) -> Self {
        Self {
            spec,
            original: original.into(),
            connection,
        }
    }

    /// The name the model calls the tool by.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The server's own name for the tool (sent in `tools/call`).
    #[must_use]
    pub fn original_name(&self) -> &str {
        &self.original
    }

    /// The name of the server the tool is from.
    #[must_use]
    pub fn server(&self) -> &str {
        self.connection.server().name()
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("original", &self.original)
            .field("server", &self.server())
            .finish()
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn call(
        &self,
        _cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let name = &self.spec.name;
        let arguments = match arguments {
            serde_json::Value::Object(arguments) => Some(arguments),
            // Models send `null` (or nothing) for a tool without arguments.
            serde_json::Value::Null => None,
            _ => {
                return Err(ToolError::for_model(
                    name.as_str(),
                    "the arguments must be a JSON object",
                ));
            }
        };
        match self.connection.call(&self.original, arguments).await {
            Ok(result) => tool_output(name, result),
            Err(error) => Err(for_model(name, error)),
        }
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        if arguments.is_object() || arguments.is_null() {
            Ok(())
        } else {
            Err(ToolError::for_model(
                self.spec.name.as_str(),
                "the arguments must be a JSON object",
            ))
        }
    }
}

/// What the model reads of a call that got no result: what happened, in a sentence, without
/// the server's internals (its stderr, a transport error), which go to `tracing`.
fn for_model(tool: &str, error: CallError) -> ToolError {
    tracing::warn!(tool, error = %error, source = ?std::error::Error::source(&error), "MCP tool call failed");
    let message = match &error {
        CallError::NotOffered { .. } => {
            format!("tool `{tool}` is no longer offered by its server; do not call it again")
        }
        CallError::Timeout { timeout, .. } => {
            format!("tool `{tool}` did not answer within {timeout:?} and was cancelled")
        }
        CallError::Disconnected { .. } => format!(
            "the server of tool `{tool}` stopped during the call; it is restarted on the next call"
        ),
        CallError::Unavailable { .. } => {
            format!("the server of tool `{tool}` is unavailable; try again later")
        }
        CallError::Refused { message, .. } => format!("tool `{tool}` refused the call: {message}"),
    };
    ToolError::for_model(tool, message)
}
