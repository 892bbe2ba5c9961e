//! A model plays the tools: a tool call is answered by the emulating model's reply instead of
//! running the tool — to test an agent without side effects, or before the tools exist.
//!
//! ```
//! use hookchain::builtin::ToolEmulator;
//! use hookchain::{Agent, ModelResponse, ScriptedModel, ToolCall};
//! # use hookchain::FnTool;
//! # futures::executor::block_on(async {
//! let emulator = ScriptedModel::new([ModelResponse::text("Sent to 3 people.")]);
//! let emulation = ToolEmulator::builder(emulator).tools(["send_email"]).build()?;
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls([ToolCall::new("c1", "send_email", serde_json::json!({"to": "team"}))]),
//!     ModelResponse::text("Done."),
//! ]);
//! # let send_email = FnTool::new("send_email", "Sends an e-mail.", |_: serde_json::Value| async {
//! #     Err::<String, _>(std::io::Error::other("must not run in this example"))
//! # });
//! let agent = Agent::builder(model).tool(send_email).chain(emulation).build()?;
//! let output = agent.run("Tell the team").await.unwrap();
//! assert_eq!(output.messages[2].text(), "Sent to 3 people.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - The emulated tools are all the tools the model was offered (default), or those listed
//!   with [`tools`](ToolEmulatorBuilder::tools). A call of an emulated tool never runs the
//!   tool, nor the middleware listed after the emulator (it answers in their place): the
//!   emulating model reads the tool's name, description and argument schema and the call's
//!   arguments, and its reply's text is the call's result.
//! - A call of a tool the model was not offered is not emulated (it gets the unknown-tool
//!   result as usual). On a run resumed right into its tool calls the offered tools are not
//!   known: the listed tools (or, with "all", every call) are emulated from their name alone.
//! - The emulating model fails: the call gets an error result saying the emulated tool
//!   failed (the error is logged at `WARN`), and the run goes on, as for a failing tool.
//! - The emulating model's calls are its own: not in the run's usage nor its `chat` spans.

use std::fmt;

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

use super::ConfigError;
use crate::context::ToolContext;
use crate::error::Error;
use crate::message::{Message, ToolCall, ToolResult};
use crate::middleware::ToolNext;
use crate::model::{Model, ModelRequest};
use crate::shared::Shared;
use crate::tool::ToolSpec;

/// What the emulating model is told unless told otherwise.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You emulate a tool. You are given its name, its \
description, the JSON schema of its arguments and the arguments of one call. Answer with \
exactly what the tool would return for that call: its output only, realistic and consistent \
with the arguments, with no commentary.";

/// Answers tool calls with a model's reply instead of running the tools (see the
/// [module docs](self)).
pub struct ToolEmulator<E> {
    emulator: E,
    /// `None`: every tool.
    tools: Option<Vec<String>>,
    system_prompt: String,
}

/// Builds a [`ToolEmulator`]; [`build`](Self::build) checks the settings.
#[must_use]
pub struct ToolEmulatorBuilder<E> {
    emulator: E,
    tools: Option<Vec<String>>,
    system_prompt: String,
}

/// The tools offered in the current step (run-scoped state of [`ToolEmulator`]; not
/// checkpointed: the next step offers them again).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OfferedTools {
    #[serde(skip)]
    specs: Option<Shared<Vec<ToolSpec>>>,
}

impl<E: Model> ToolEmulator<E> {
    /// A builder around the emulating model; every tool emulated.
    pub fn builder(emulator: E) -> ToolEmulatorBuilder<E> {
        ToolEmulatorBuilder {
            emulator,
            tools: None,
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
        }
    }

    /// Whether the call of `name` is emulated, and the tool's spec if known.
    fn emulates<'s>(&self, name: &str, offered: &'s OfferedTools) -> Option<Option<&'s ToolSpec>> {
        if let Some(tools) = &self.tools
            && !tools.iter().any(|tool| tool == name)
        {
            return None;
        }
        match &offered.specs {
            Some(specs) => specs.iter().find(|spec| spec.name == name).map(Some),
            None => Some(None),
        }
    }

    /// The emulating model's request for `call`.
    fn request(&self, call: &ToolCall, spec: Option<&ToolSpec>) -> ModelRequest {
        let mut text = format!("Tool: {}\n", call.name);
        if let Some(spec) = spec {
            text.push_str(&format!(
                "Description: {}\nArguments schema: {}\n",
                spec.description, spec.parameters
            ));
        }
        text.push_str(&format!("Arguments: {}", call.arguments));
        ModelRequest::new(vec![Message::user(text)]).with_system_prompt(self.system_prompt.clone())
    }
}

impl<E> ToolEmulatorBuilder<E> {
    /// Emulates only these tools (default: every tool).
    pub fn tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.tools
            .get_or_insert_with(Vec::new)
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// What the emulating model is told (its system prompt).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// The middleware; an error names a setting that cannot work: an empty list of `tools`
    /// (to emulate every tool, do not call `tools`), an empty tool name, an empty
    /// `system_prompt`.
    pub fn build(self) -> Result<ToolEmulator<E>, ConfigError> {
        if let Some(tools) = &self.tools {
            if tools.is_empty() {
                return Err(ConfigError::new(
                    "tools",
                    "the list is empty: to emulate every tool, do not call `tools`",
                ));
            }
            ConfigError::require_names("tools", tools)?;
        }
        ConfigError::require_text("system_prompt", &self.system_prompt)?;
        Ok(ToolEmulator {
            emulator: self.emulator,
            tools: self.tools,
            system_prompt: self.system_prompt,
        })
    }
}

#[middleware(crate = crate, state = OfferedTools)]
impl<E: Model + 'static> ToolEmulator<E> {
    /// Notes the tools the model is offered (shared, not copied).
    #[hook(before_model)]
    fn note_tools(&self, offered: &mut OfferedTools, request: &mut ModelRequest) {
        offered.specs = Some(request.tools.clone());
    }

    /// Answers an emulated call with the emulating model's reply.
    #[hook(wrap_tool_call)]
    async fn emulate(
        &self,
        cx: ToolContext<'_>,
        offered: &OfferedTools,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let Some(spec) = self.emulates(&call.name, offered) else {
            return Ok(next.call(cx, call).await);
        };
        match self.emulator.invoke(self.request(&call, spec)).await {
            Ok(response) => {
                tracing::debug!(tool = %call.name, call_id = %call.id, "tool call emulated");
                Ok(ToolResult::ok(&call.id, response.message.text()))
            }
            Err(error) => {
                tracing::warn!(
                    tool = %call.name,
                    call_id = %call.id,
                    error = %crate::error::Report(&error),
                    "the tool-emulating model failed"
                );
                Ok(ToolResult::error(
                    &call.id,
                    format!("The tool `{}` failed: it could not be run.", call.name),
                ))
            }
        }
    }
}

impl<E> fmt::Debug for ToolEmulator<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEmulator")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl<E> fmt::Debug for ToolEmulatorBuilder<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEmulatorBuilder")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}
