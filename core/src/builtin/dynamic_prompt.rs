//! A system prompt computed for every model call, from the run (its history, its step, the
//! values of its [`RunContext`](crate::RunContext)) and the request.
//!
//! ```
//! use hookchain::builtin::DynamicPrompt;
//! use hookchain::{Agent, ModelResponse, RunContext, ScriptedModel};
//!
//! /// Who the agent works for (a value of the run's context).
//! struct User {
//!     name: &'static str,
//! }
//!
//! # futures::executor::block_on(async {
//! let prompt = DynamicPrompt::builder()
//!     .prompt(|cx, _request| match cx.get::<User>() {
//!         Some(user) => format!("You help {}. This is step {}.", user.name, cx.step()),
//!         None => "You help a guest.".to_owned(),
//!     })
//!     .build()?;
//! let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
//! let agent = Agent::builder(model).system_prompt("Overwritten.").chain(prompt).build()?;
//! let context = RunContext::new().with(User { name: "Ada" });
//! agent.with_context(context).run("Hi").await.unwrap();
//! let sent = &agent.model().requests()[0];
//! assert_eq!(sent.system_prompt.as_deref(), Some("You help Ada. This is step 1."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - The function runs before every model call (in `before_model`, in listing order with the
//!   other middleware), with the run's [`Context`] and the request as the earlier middleware
//!   left it.
//! - [`PromptMode::Replace`] (the default): its text is the call's system prompt, in place of
//!   the agent's; an empty text leaves the call without one. [`PromptMode::Append`]: its text
//!   follows the current system prompt after a blank line; an empty text adds nothing.
//! - It changes that call's request only, never the history (a request is one call's; the
//!   history is the run's).
//! - Phase `Input`: list it with the middleware that prepare the request.

use std::fmt;
use std::sync::Arc;

use hookchain_macros::middleware;

use super::ConfigError;
use crate::context::Context;
use crate::model::ModelRequest;

/// The function that computes the prompt.
type PromptFn = Arc<dyn Fn(&Context, &ModelRequest) -> String + Send + Sync>;

/// Whether the computed text replaces the system prompt or follows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptMode {
    /// The text is the whole system prompt of the call.
    #[default]
    Replace,
    /// The text follows the current system prompt, after a blank line.
    Append,
}

/// Computes the system prompt of every model call (see the [module docs](self)).
#[derive(Clone)]
pub struct DynamicPrompt {
    prompt: PromptFn,
    mode: PromptMode,
}

/// Builds a [`DynamicPrompt`]; [`build`](Self::build) checks the settings.
#[derive(Clone, Default)]
#[must_use]
pub struct DynamicPromptBuilder {
    prompt: Option<PromptFn>,
    mode: PromptMode,
}

impl DynamicPrompt {
    /// A builder with no function yet, in [`PromptMode::Replace`].
    pub fn builder() -> DynamicPromptBuilder {
        DynamicPromptBuilder::default()
    }
}

impl DynamicPromptBuilder {
    /// The function that computes the text from the run and the request.
    pub fn prompt(
        mut self,
        prompt: impl Fn(&Context, &ModelRequest) -> String + Send + Sync + 'static,
    ) -> Self {
        self.prompt = Some(Arc::new(prompt));
        self
    }

    /// Whether the text replaces the system prompt (default) or follows it.
    pub fn mode(mut self, mode: PromptMode) -> Self {
        self.mode = mode;
        self
    }

    /// The middleware; an error if no [`prompt`](Self::prompt) function was given.
    pub fn build(self) -> Result<DynamicPrompt, ConfigError> {
        let prompt = self.prompt.ok_or_else(|| {
            ConfigError::new(
                "prompt",
                "no function: give one with `.prompt(|cx, request| ..)`",
            )
        })?;
        Ok(DynamicPrompt {
            prompt,
            mode: self.mode,
        })
    }
}

#[middleware(crate = crate, phase = input)]
impl DynamicPrompt {
    /// Sets the call's system prompt.
    #[hook(before_model)]
    fn set_prompt(&self, cx: &mut Context, request: &mut ModelRequest) {
        let text = (self.prompt)(cx, request);
        tracing::trace!(bytes = text.len(), mode = ?self.mode, "system prompt computed");
        match (self.mode, &mut request.system_prompt) {
            (PromptMode::Replace, prompt) => {
                *prompt = (!text.is_empty()).then_some(text);
            }
            (PromptMode::Append, _) if text.is_empty() => {}
            (PromptMode::Append, Some(prompt)) if !prompt.is_empty() => {
                prompt.push_str("\n\n");
                prompt.push_str(&text);
            }
            (PromptMode::Append, prompt) => *prompt = Some(text),
        }
    }
}

impl fmt::Debug for DynamicPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicPrompt")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for DynamicPromptBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicPromptBuilder")
            .field("prompt", &self.prompt.as_ref().map(|_| "fn"))
            .field("mode", &self.mode)
            .finish()
    }
}
