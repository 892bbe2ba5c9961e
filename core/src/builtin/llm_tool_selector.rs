//! A helper model picks, for each model call, the few tools of the agent that matter for it:
//! the request then offers only those (smaller prompts, fewer wrong calls).
//!
//! ```
//! use hookchain::builtin::LlmToolSelector;
//! use hookchain::{Agent, ModelResponse, ScriptedModel};
//! # use hookchain::{FnTool, Tool};
//! # fn tool(name: &'static str) -> impl Tool {
//! #     FnTool::new(name, "A tool.", |_: serde_json::Value| async { Ok::<_, std::convert::Infallible>("ok") })
//! # }
//! # futures::executor::block_on(async {
//! let helper = ScriptedModel::new([ModelResponse::text(r#"{"tools": ["weather"]}"#)]);
//! let selector = LlmToolSelector::builder(helper)
//!     .max_tools(1)
//!     .always_include(["search"])
//!     .build()?;
//! let model = ScriptedModel::new([ModelResponse::text("Sunny.")]);
//! let agent = Agent::builder(model)
//!     .tool(tool("weather"))
//!     .tool(tool("search"))
//!     .tool(tool("calendar"))
//!     .chain(selector)
//!     .build()?;
//! agent.run("Weather in Oslo?").await.unwrap();
//! let offered: Vec<_> = agent.model().requests()[0].tools.iter().map(|t| t.name.clone()).collect();
//! assert_eq!(offered, ["weather", "search"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Before every model call, the helper model reads the last user message and the names and
//!   descriptions of the request's tools (those of `always_include` left out), and answers
//!   with JSON: `{"tools": ["name", ..]}` (asked for with a response format; a code fence is
//!   accepted).
//! - The request keeps, in the agent's order, at most `max_tools` of the tools the helper
//!   named (names it made up are ignored, the first `max_tools` named count), plus every
//!   `always_include` tool (not counted in `max_tools`).
//! - No helper call when there is nothing to choose: the request's tools other than
//!   `always_include` are no more than `max_tools`.
//! - The helper fails (an error, or an answer that is not the JSON above): the call goes on
//!   with all its tools and a `WARN` event, unless [`fail_on_error`](LlmToolSelectorBuilder::fail_on_error)
//!   is set: then the run ends with the error.
//! - Only the request changes (that call); the history and the agent's tools do not. The
//!   helper's calls are its own: they are not in the run's usage nor its `chat` spans.
//! - Phase `Input`.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;

use hookchain_macros::middleware;

use super::ConfigError;
use crate::error::{BoxError, Error};
use crate::message::{Message, Role};
use crate::model::{Model, ModelRequest, ResponseFormat, parse_answer};
use crate::shared::Shared;
use crate::tool::ToolSpec;

/// What the helper model is told unless told otherwise.
pub const DEFAULT_SYSTEM_PROMPT: &str = "Your goal is to select the most relevant tools for \
answering the user's query. Answer with JSON only: {\"tools\": [\"tool_name\", ...]}, the most \
relevant first.";

/// Offers each model call only the tools a helper model picks (see the [module docs](self)).
pub struct LlmToolSelector<H> {
    helper: H,
    max_tools: usize,
    always_include: Vec<String>,
    system_prompt: String,
    fail_on_error: bool,
}

/// Builds an [`LlmToolSelector`]; [`build`](Self::build) checks the settings.
#[must_use]
pub struct LlmToolSelectorBuilder<H> {
    helper: H,
    max_tools: usize,
    always_include: Vec<String>,
    system_prompt: String,
    fail_on_error: bool,
}

/// The helper's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Selection {
    /// The names of the chosen tools, most relevant first.
    tools: Vec<String>,
}

/// The helper failed and the selector is set to fail.
#[derive(Debug, thiserror::Error)]
#[error("the tool-selecting helper model failed")]
pub struct ToolSelectionFailed {
    #[source]
    source: BoxError,
}

impl<H: Model> LlmToolSelector<H> {
    /// A builder around `helper`: at most 3 tools, none always included, degrading on the
    /// helper's failure.
    pub fn builder(helper: H) -> LlmToolSelectorBuilder<H> {
        LlmToolSelectorBuilder {
            helper,
            max_tools: 3,
            always_include: Vec::new(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            fail_on_error: false,
        }
    }

    /// The helper's request: the task, the last user message, the tools to choose from.
    fn helper_request(&self, request: &ModelRequest, candidates: &[&ToolSpec]) -> ModelRequest {
        let question = request
            .messages
            .iter()
            .rev()
            .find(|message| message.role == Role::User)
            .map(|message| message.text().into_owned())
            .unwrap_or_default();
        let mut listing = format!(
            "Choose at most {} of these tools for the query below.\n\nTools:\n",
            self.max_tools
        );
        for spec in candidates {
            listing.push_str(&format!("- {}: {}\n", spec.name, spec.description));
        }
        listing.push_str(&format!("\nQuery: {question}"));
        ModelRequest::new(vec![Message::user(listing)])
            .with_system_prompt(self.system_prompt.clone())
            .with_response_format(ResponseFormat::of::<Selection>())
    }

    /// The tools of `request` the helper picks, or why it could not.
    async fn select(&self, request: &ModelRequest) -> Result<Option<Vec<ToolSpec>>, BoxError> {
        let always = |spec: &ToolSpec| self.always_include.contains(&spec.name);
        let candidates: Vec<&ToolSpec> = request.tools.iter().filter(|s| !always(s)).collect();
        if candidates.len() <= self.max_tools {
            return Ok(None);
        }
        let response = self
            .helper
            .invoke(self.helper_request(request, &candidates))
            .await?;
        let selection: Selection = parse_answer(&response.message.text())?;
        let mut chosen: BTreeSet<&str> = BTreeSet::new();
        for name in &selection.tools {
            if chosen.len() < self.max_tools && candidates.iter().any(|spec| spec.name == *name) {
                chosen.insert(name);
            }
        }
        tracing::debug!(chosen = ?chosen, of = candidates.len(), "tools selected");
        Ok(Some(
            request
                .tools
                .iter()
                .filter(|spec| always(spec) || chosen.contains(spec.name.as_str()))
                .cloned()
                .collect(),
        ))
    }
}

impl<H> LlmToolSelectorBuilder<H> {
    /// At most this many tools chosen by the helper per call (`always_include` not counted).
    pub fn max_tools(mut self, max_tools: usize) -> Self {
        self.max_tools = max_tools;
        self
    }

    /// Tools every call keeps, whatever the helper says.
    pub fn always_include<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.always_include
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// What the helper model is told (its system prompt).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// Whether the helper's failure ends the run (default: no, the call keeps all its tools).
    pub fn fail_on_error(mut self, fail: bool) -> Self {
        self.fail_on_error = fail;
        self
    }

    /// The middleware; an error names a setting that cannot work: `max_tools` of 0, an empty
    /// name in `always_include`, an empty `system_prompt`.
    pub fn build(self) -> Result<LlmToolSelector<H>, ConfigError> {
        if self.max_tools == 0 {
            return Err(ConfigError::new(
                "max_tools",
                "must be at least 1 (to offer no tools, leave them out of the agent)",
            ));
        }
        ConfigError::require_names("always_include", &self.always_include)?;
        ConfigError::require_text("system_prompt", &self.system_prompt)?;
        Ok(LlmToolSelector {
            helper: self.helper,
            max_tools: self.max_tools,
            always_include: self.always_include,
            system_prompt: self.system_prompt,
            fail_on_error: self.fail_on_error,
        })
    }
}

#[middleware(crate = crate, phase = input)]
impl<H: Model + 'static> LlmToolSelector<H> {
    /// Filters the request's tools to the helper's choice.
    #[hook(before_model)]
    async fn filter_tools(&self, request: &mut ModelRequest) -> Result<(), Error> {
        match self.select(request).await {
            Ok(Some(tools)) => request.tools = Shared::new(tools),
            Ok(None) => {}
            Err(source) if self.fail_on_error => {
                return Err(Error::hook(ToolSelectionFailed { source }));
            }
            Err(error) => {
                tracing::warn!(
                    error = %crate::error::Report(&*error),
                    "the tool-selecting helper model failed; the call keeps all its tools"
                );
            }
        }
        Ok(())
    }
}

impl<H> fmt::Debug for LlmToolSelector<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmToolSelector")
            .field("max_tools", &self.max_tools)
            .field("always_include", &self.always_include)
            .field("fail_on_error", &self.fail_on_error)
            .finish_non_exhaustive()
    }
}

impl<H> fmt::Debug for LlmToolSelectorBuilder<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmToolSelectorBuilder")
            .field("max_tools", &self.max_tools)
            .field("always_include", &self.always_include)
            .field("fail_on_error", &self.fail_on_error)
            .finish_non_exhaustive()
    }
}
