//! A tool call's answer that ends the run: the model is not called again.

use serde::{Deserialize, Serialize};

use super::{Content, Message};

/// The answer a tool call gives the whole run
/// ([`ToolContext::end_run_with`](crate::ToolContext::end_run_with)): once the step's calls are
/// done, it enters the history as the assistant's answer — named after the agent that gave it,
/// if one did — and the run ends [`Finished`](crate::EndReason::Finished), without calling the
/// model again. What a handoff does ([`Handoff`](crate::subagent::Handoff)), and a tool whose
/// result is the answer (LangChain's `return_direct`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FinalAnswer {
    /// The answer.
    pub content: Content,
    /// The agent that answered, recorded as the message's [`name`](Message::name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl FinalAnswer {
    /// The answer `content`.
    pub fn new(content: impl Into<Content>) -> Self {
        Self {
            content: content.into(),
            agent: None,
        }
    }

    /// The answer, given by the agent `agent`.
    #[must_use]
    pub fn by(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// The assistant message it enters the history as.
    pub(crate) fn into_message(self) -> Message {
        let message = Message::assistant(self.content);
        match self.agent {
            Some(agent) => message.with_name(agent),
            None => message,
        }
    }
}
