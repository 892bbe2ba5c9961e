//! Context editing: once the request grows past a number of tokens, the results of older tool
//! calls are replaced by a short placeholder in what the model reads.
//!
//! ```
//! use hookchain::builtin::ContextEditing;
//! use hookchain::{Agent, Message, ModelResponse, ScriptedModel, ToolCall, ToolResult};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let editing = ContextEditing::builder()
//!     .trigger_tokens(50)
//!     .keep(1)
//!     .exclude_tool("memory")
//!     .build()?;
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Done.")]))
//!     .chain(editing)
//!     .build()?;
//! let search = |id: &str| ToolCall::new(id, "search", serde_json::json!({ "q": id }));
//! let history = vec![
//!     Message::user("Look it up twice."),
//!     Message::assistant_with_tool_calls("", [search("a")]),
//!     Message::tool(ToolResult::ok("a", "a long page of results ".repeat(10))).with_name("search"),
//!     Message::assistant_with_tool_calls("", [search("b")]),
//!     Message::tool(ToolResult::ok("b", "another page")).with_name("search"),
//! ];
//! let output = agent.run(history).await.unwrap();
//! let sent = &agent.model().requests()[0].messages;
//! assert_eq!(sent[2].text(), "[cleared]"); // the model read the placeholder…
//! assert!(output.messages[2].text().starts_with("a long page")); // …the history kept the result
//! assert_eq!(sent[4].text(), "another page"); // the last result is kept
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Checked in `before_model`, on the request: when its messages hold `trigger_tokens`
//!   tokens or more (counted by the [`TokenCounter`], an [`ApproximateCounter`] by default;
//!   100,000 by default), older tool results are cleared.
//! - The last `keep` tool results of the request (3 by default; all tools counted) are kept;
//!   of the older ones, those of the excluded tools are kept too, and the others are cleared.
//! - A cleared result's content becomes the placeholder (`[cleared]` by default), and its
//!   [`metadata`](crate::Message::metadata) gets `"cleared": true`; it stays a result of its
//!   call (same id, same error flag), so the request stays valid. With
//!   [`clear_arguments`](ContextEditingBuilder::clear_arguments), the call's arguments become
//!   `{}` as well, and the assistant message lists the call's id under `"cleared_arguments"`.
//! - Only the request changes: the model sees the edited view, the history (and a
//!   [`Thread`](crate::Thread)) keeps the originals, so each step clears anew from them.

use std::collections::BTreeSet;

use serde_json::Value;

use hookchain_macros::middleware;

use super::ConfigError;
use super::tokens::{ApproximateCounter, TokenCounter};
use crate::message::{Message, Role};
use crate::model::ModelRequest;

/// The key of the tag a cleared tool result carries in its metadata (`true`).
pub const CLEARED_TAG: &str = "cleared";

/// The key under which an assistant message lists the ids of calls whose arguments were
/// cleared.
pub const CLEARED_ARGUMENTS_TAG: &str = "cleared_arguments";

/// Clears older tool results from what the model reads (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextEditing<C = ApproximateCounter> {
    trigger_tokens: u64,
    keep: usize,
    exclude: BTreeSet<String>,
    clear_arguments: bool,
    placeholder: String,
    counter: C,
}

/// Builds a [`ContextEditing`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
#[must_use]
pub struct ContextEditingBuilder<C = ApproximateCounter> {
    trigger_tokens: u64,
    keep: usize,
    exclude: BTreeSet<String>,
    clear_arguments: bool,
    placeholder: String,
    counter: C,
}

impl ContextEditing {
    /// A builder with the defaults: clear at 100,000 tokens, keep the last 3 results, exclude
    /// no tool, keep the arguments, placeholder `[cleared]`, an [`ApproximateCounter`].
    pub fn builder() -> ContextEditingBuilder {
        ContextEditingBuilder {
            trigger_tokens: 100_000,
            keep: 3,
            exclude: BTreeSet::new(),
            clear_arguments: false,
            placeholder: "[cleared]".to_owned(),
            counter: ApproximateCounter::new(),
        }
    }
}

impl<C> ContextEditingBuilder<C> {
    /// Clears when the request holds this many tokens or more.
    pub fn trigger_tokens(mut self, tokens: u64) -> Self {
        self.trigger_tokens = tokens;
        self
    }

    /// How many of the most recent tool results stay as they are.
    pub fn keep(mut self, results: usize) -> Self {
        self.keep = results;
        self
    }

    /// Never clears the results of `tool`.
    pub fn exclude_tool(mut self, tool: impl Into<String>) -> Self {
        self.exclude.insert(tool.into());
        self
    }

    /// Whether a cleared result's call loses its arguments too (replaced by `{}`).
    pub fn clear_arguments(mut self, clear: bool) -> Self {
        self.clear_arguments = clear;
        self
    }

    /// What the model reads in place of a cleared result.
    pub fn placeholder(mut self, text: impl Into<String>) -> Self {
        self.placeholder = text.into();
        self
    }

    /// Counts tokens with `counter` instead of an [`ApproximateCounter`].
    pub fn token_counter<T: TokenCounter>(self, counter: T) -> ContextEditingBuilder<T> {
        ContextEditingBuilder {
            trigger_tokens: self.trigger_tokens,
            keep: self.keep,
            exclude: self.exclude,
            clear_arguments: self.clear_arguments,
            placeholder: self.placeholder,
            counter,
        }
    }

    /// The middleware; an error names a setting that cannot work: a trigger of 0 tokens, an
    /// empty placeholder, an empty tool name.
    pub fn build(self) -> Result<ContextEditing<C>, ConfigError> {
        if self.trigger_tokens == 0 {
            return Err(ConfigError::new(
                "trigger_tokens",
                "a trigger of 0 tokens is always reached: every step would clear",
            ));
        }
        if self.placeholder.trim().is_empty() {
            return Err(ConfigError::new(
                "placeholder",
                "the placeholder is empty: the model would not know a result was there",
            ));
        }
        if self.exclude.iter().any(|tool| tool.trim().is_empty()) {
            return Err(ConfigError::new("exclude_tool", "a tool's name is empty"));
        }
        Ok(ContextEditing {
            trigger_tokens: self.trigger_tokens,
            keep: self.keep,
            exclude: self.exclude,
            clear_arguments: self.clear_arguments,
            placeholder: self.placeholder,
            counter: self.counter,
        })
    }
}

#[middleware(crate = crate)]
impl<C: TokenCounter + 'static> ContextEditing<C> {
    /// Clears the older tool results of the request once it is long enough.
    #[hook(before_model)]
    fn clear(&self, request: &mut ModelRequest) {
        let tokens_before = self.counter.count_messages(&request.messages);
        if tokens_before < self.trigger_tokens {
            return;
        }
        let results: Vec<usize> = request
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::Tool)
            .map(|(at, _)| at)
            .collect();
        let older = results.len().saturating_sub(self.keep);
        let mut cleared = 0_usize;
        for &at in &results[..older] {
            let Some((owner, call)) = self.clearable(&request.messages, at) else {
                continue;
            };
            // The first write copies the request's messages; the history keeps its own.
            let messages = &mut *request.messages;
            let result = &mut messages[at];
            result.content = self.placeholder.as_str().into();
            result
                .metadata
                .insert(CLEARED_TAG.to_owned(), Value::Bool(true));
            if self.clear_arguments {
                let assistant = &mut messages[owner];
                let id = assistant.tool_calls[call].id.clone();
                assistant.tool_calls[call].arguments = Value::Object(serde_json::Map::new());
                match assistant
                    .metadata
                    .entry(CLEARED_ARGUMENTS_TAG.to_owned())
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(ids) => ids.push(Value::String(id)),
                    other => *other = Value::Array(vec![Value::String(id)]),
                }
            }
            cleared += 1;
        }
        if cleared > 0 {
            tracing::debug!(
                cleared,
                kept = results.len() - cleared,
                tokens_before,
                tokens_after = self.counter.count_messages(&request.messages),
                "older tool results cleared from the request"
            );
        }
    }
}

impl<C> ContextEditing<C> {
    /// The assistant message holding the call that the tool result at `at` answers, and the
    /// call's position in it — if that result may be cleared: not cleared yet, not of an
    /// excluded tool.
    fn clearable(&self, messages: &[Message], at: usize) -> Option<(usize, usize)> {
        let result = &messages[at];
        if result.metadata.get(CLEARED_TAG) == Some(&Value::Bool(true)) {
            return None;
        }
        let id = result.tool_call_id.as_deref()?;
        // The results of a call follow its assistant message: the nearest one before.
        let owner = messages[..at].iter().rposition(Message::has_tool_calls)?;
        let call = messages[owner].tool_calls.iter().position(|c| c.id == id)?;
        let tool = &messages[owner].tool_calls[call].name;
        if self.exclude.contains(tool) {
            return None;
        }
        Some((owner, call))
    }
}
