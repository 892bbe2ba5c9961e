//! A handoff: the conversation handed to another agent, whose answer ends the run.

use std::fmt;
use std::sync::Arc;

use serde_json::json;

use super::child::{Child, check_child_answer, unfinished};
use super::depth::DEFAULT_MAX_DEPTH;
use super::tool::IntoToolError;
use crate::agent::{Agent, EndReason, RunInput};
use crate::context::ToolContext;
use crate::interrupt::Answer;
use crate::message::{Content, Message, Role};
use crate::middleware::Middleware;
use crate::model::Model;
use crate::tool::{FinalAnswer, Tool, ToolError, ToolSpec};

/// What the receiving agent sees of the conversation.
pub type HistoryFilter = Arc<dyn Fn(&[Message]) -> Vec<Message> + Send + Sync>;

/// A tool that hands the conversation to another agent (the OpenAI Agents SDK's handoff): the
/// receiver runs on the conversation so far ([`history`](Self::history) filters what it
/// sees), and its answer is the run's answer — it enters the history as the assistant's
/// message, [named](Message::name) after the receiver, and the run ends without calling its
/// own model again. Made by [`Agent::into_handoff`].
///
/// The receiver runs inside the tool call as a sub-agent does ([`AgentTool`](super::AgentTool)):
/// its pause pauses the run (a [`SubAgentPause`](super::SubAgentPause)), its usage and events
/// are the run's, the parent's `wrap_tool_call` middleware wrap the handoff (an approval
/// before handing over). The history the receiver sees is the conversation as the model left
/// it, without the calls of the message that hands over (which have no results yet); what
/// the receiver does on the way (its tool calls) stays in its own run: the conversation gets
/// its answer.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{EndReason, Role};
///
/// # futures::executor::block_on(async {
/// let answer = ModelResponse::text("Your refund is on its way.");
/// let billing = Agent::builder(ScriptedModel::new([answer]))
///     .name("billing")
///     .build()?;
/// let triage = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([ToolCall::new(
///     "h1",
///     "transfer_to_billing",
///     serde_json::json!({}),
/// )])]))
/// .tool(billing.into_handoff("Refunds, invoices and payments.")?)
/// .build()?;
///
/// let output = triage.run("Where is my refund?").await?;
/// assert_eq!(output.end, EndReason::Finished);
/// assert_eq!(output.text().as_deref(), Some("Your refund is on its way."));
/// let answer = output.messages.last().unwrap();
/// assert_eq!((answer.role, answer.name.as_deref()), (Role::Assistant, Some("billing")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Handoff<M, C> {
    agent: Arc<Agent<M, C>>,
    spec: ToolSpec,
    history: HistoryFilter,
    max_depth: usize,
}

impl<M, C> Agent<M, C> {
    /// A tool, `transfer_to_<this agent's name>`, that hands the conversation to this agent;
    /// the model is told `description` (what this agent handles). See [`Handoff`].
    ///
    /// # Errors
    ///
    /// [`IntoToolError::HasCheckpointer`]: the agent keeps its runs in a checkpointer (the
    /// receiver's runs are kept in the run that hands over).
    pub fn into_handoff(
        self,
        description: impl Into<String>,
    ) -> Result<Handoff<M, C>, IntoToolError> {
        if self.keeps_runs() {
            return Err(IntoToolError::HasCheckpointer {
                agent: self.name().to_owned(),
            });
        }
        let name = format!("transfer_to_{}", tool_safe(self.name()));
        let description = format!(
            "Hand the conversation to the agent `{}`, which answers the user from here: {}",
            self.name(),
            description.into()
        );
        Ok(Handoff {
            agent: Arc::new(self),
            spec: ToolSpec::new(
                name,
                description,
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
            history: Arc::new(without_pending_calls),
            max_depth: DEFAULT_MAX_DEPTH,
        })
    }
}

impl<M, C> Handoff<M, C> {
    /// What the receiver sees of the conversation: `filter` gets the history (without the
    /// calls of the message that hands over) and returns the receiver's input. By default it
    /// is all of it; [`last_user_message`] keeps only the user's last message.
    #[must_use]
    pub fn history(
        mut self,
        filter: impl Fn(&[Message]) -> Vec<Message> + Send + Sync + 'static,
    ) -> Self {
        self.history = Arc::new(move |messages| filter(&without_pending_calls(messages)));
        self
    }

    /// The tool's name (`transfer_to_<agent>` by default).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.spec.name = name.into();
        self
    }

    /// See [`AgentTool::max_depth`](super::AgentTool::max_depth).
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }
}

impl<M, C> Clone for Handoff<M, C> {
    fn clone(&self) -> Self {
        Self {
            agent: Arc::clone(&self.agent),
            spec: self.spec.clone(),
            history: Arc::clone(&self.history),
            max_depth: self.max_depth,
        }
    }
}

impl<M, C> fmt::Debug for Handoff<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff")
            .field("name", &self.spec.name)
            .field("agent", &self.agent.name())
            .finish_non_exhaustive()
    }
}

// Not listed in a "not a tool" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl<M, C> Tool for Handoff<M, C>
where
    M: Model + 'static,
    C: Middleware + 'static,
{
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn check_answer(
        &self,
        _arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        check_child_answer(&self.spec.name, answer)
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let name = self.spec.name.as_str();
        let child = Child {
            agent: &self.agent,
            tool: name,
            max_depth: self.max_depth,
            inherit_context: true,
        };
        let output = child
            .run(cx, || Ok(RunInput((self.history)(cx.messages()))))
            .await?;
        if output.end != EndReason::Finished {
            return Err(unfinished(self.agent.name(), name, output.end, &output));
        }
        let answer = output
            .final_message()
            .map(|message| message.content.clone());
        let answer = answer.unwrap_or_else(|| Content::from(""));
        cx.end_run_with(FinalAnswer::new(answer).by(self.agent.name()));
        Ok(Content::from(format!(
            "The conversation was handed to `{}`, which answered.",
            self.agent.name()
        )))
    }
}

/// The history without the tool calls that have no result yet (the handoff's own, and its
/// siblings'): a message that only made calls is left out, one with text keeps its text.
fn without_pending_calls(messages: &[Message]) -> Vec<Message> {
    let answered: std::collections::HashSet<&str> = messages
        .iter()
        .filter_map(|message| message.tool_call_id.as_deref())
        .collect();
    messages
        .iter()
        .filter_map(|message| {
            if message
                .tool_calls
                .iter()
                .all(|call| answered.contains(call.id.as_str()))
            {
                return Some(message.clone());
            }
            let mut kept = message.clone();
            kept.tool_calls
                .retain(|call| answered.contains(call.id.as_str()));
            (!kept.tool_calls.is_empty() || !kept.text().is_empty()).then_some(kept)
        })
        .collect()
}

/// Keeps only the user's last message: for a receiver that should start afresh.
#[must_use]
pub fn last_user_message(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .rfind(|message| message.role == Role::User)
        .cloned()
        .into_iter()
        .collect()
}

/// `name` with what a provider refuses in a tool name replaced by `_`.
fn tool_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
