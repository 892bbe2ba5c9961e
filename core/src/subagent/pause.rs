//! A sub-agent's pause, as its parent's tool call reports it: the payload of the parent's
//! interrupt.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::interrupt::{Checkpoint, Interrupt, InterruptId};
use crate::model::Usage;

/// The `kind` of a [`SubAgentPause`] payload.
pub const SUB_AGENT_PAUSE: &str = "sub_agent_pause";

/// A sub-agent paused inside a tool call of its parent: the payload of the interrupt the call
/// raised (see [the module's docs](super)).
///
/// Read it from the parent's interrupt with [`from_interrupt`](Self::from_interrupt), answer
/// the child's [`interrupts`](Self::interrupts) as you would the parent's own (an approval,
/// a question), and resume the parent with [`answer`](Self::answer)'s value for this
/// interrupt. A grandchild's pause is a `SubAgentPause` among the child's interrupts, answered
/// the same way one level down.
///
/// ```
/// use hookchain::builtin::human_in_the_loop::{
///     ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
/// };
/// use hookchain::subagent::SubAgentPause;
/// use hookchain::prelude::*;
/// use hookchain::{EndReason, chain, tool};
/// use serde_json::json;
///
/// /// Pays an invoice.
/// #[tool]
/// async fn pay(invoice: String) -> String {
///     format!("paid {invoice}")
/// }
///
/// # futures::executor::block_on(async {
/// // The child asks before it pays.
/// let accountant = Agent::builder(ScriptedModel::new([
///     ModelResponse::tool_calls([ToolCall::new("p1", "pay", json!({"invoice": "INV-7"}))]),
///     ModelResponse::text("INV-7 is paid."),
/// ]))
/// .name("accountant")
/// .tool(pay)
/// .chain(chain![HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())])
/// .build()?;
/// let lead = Agent::builder(ScriptedModel::new([
///     ModelResponse::tool_calls([ToolCall::new("c1", "accounts", json!({"task": "Pay INV-7."}))]),
///     ModelResponse::text("Done: INV-7 is paid."),
/// ]))
/// .tool(accountant.into_tool("accounts", "Handles invoices.")?)
/// .build()?;
///
/// let paused = lead.run("Pay INV-7").await?;
/// assert_eq!(paused.end, EndReason::Interrupted);
/// let interrupt = paused.interrupts()[0].clone();
/// let child = SubAgentPause::from_interrupt(&interrupt).expect("the child paused");
/// assert_eq!(child.agent, "accountant");
/// // The child's approval request, answered as the parent's own would be.
/// let asked = &child.interrupts()[0];
/// let request = ApprovalRequest::from_interrupt(asked).expect("an approval");
/// let approve = ApprovalResponse::approve_all(&request).answer(asked);
///
/// let done = lead
///     .resume(paused.checkpoint.unwrap(), [(interrupt.id, child.answer([approve]))])
///     .await?;
/// assert_eq!(done.text().as_deref(), Some("Done: INV-7 is paid."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubAgentPause {
    /// Always [`SUB_AGENT_PAUSE`]: tells this payload from other interrupts'.
    kind: PauseKind,
    /// The child agent's name.
    pub agent: String,
    /// The parent's tool the child runs as.
    pub tool: String,
    /// The child's checkpoint: where it resumes from.
    pub checkpoint: Checkpoint,
    /// What the child had spent when it paused (counted in the parent's usage already).
    pub usage: Usage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum PauseKind {
    #[serde(rename = "sub_agent_pause")]
    SubAgentPause,
}

/// The value a parent resumes with for a child's pause: the answers to the child's
/// interrupts, by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct ChildAnswers {
    pub(super) answers: BTreeMap<InterruptId, serde_json::Value>,
}

impl SubAgentPause {
    pub(super) fn new(agent: &str, tool: &str, checkpoint: Checkpoint, usage: Usage) -> Self {
        Self {
            kind: PauseKind::SubAgentPause,
            agent: agent.to_owned(),
            tool: tool.to_owned(),
            checkpoint,
            usage,
        }
    }

    /// The child's pause in an interrupt's payload, if it is one.
    #[must_use]
    pub fn from_payload(payload: &serde_json::Value) -> Option<Self> {
        Self::deserialize(payload).ok()
    }

    /// The child's pause that `interrupt` (the parent's) reports, if it is one.
    #[must_use]
    pub fn from_interrupt(interrupt: &Interrupt) -> Option<Self> {
        Self::from_payload(&interrupt.payload)
    }

    /// The child's interrupts, waiting for answers.
    #[must_use]
    pub fn interrupts(&self) -> &[Interrupt] {
        self.checkpoint.interrupts()
    }

    /// The value to resume the parent with, for its interrupt that reports this pause: the
    /// answers to the child's interrupts (an interrupt left unanswered pauses the child, and so
    /// the parent, again).
    #[must_use]
    pub fn answer(
        &self,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> serde_json::Value {
        let answers = ChildAnswers {
            answers: answers.into_iter().collect(),
        };
        // Plain data: writing it as JSON cannot fail.
        serde_json::to_value(answers).unwrap_or_default()
    }
}

impl ChildAnswers {
    /// The answers in a parent's resume value, checked against the child's interrupts: each
    /// must answer one of them.
    pub(super) fn read(value: &serde_json::Value, pause: &SubAgentPause) -> Result<Self, String> {
        let answers = Self::deserialize(value).map_err(|error| {
            format!(
                "the answer to a sub-agent's pause must be `SubAgentPause::answer`'s value \
                 ({{\"answers\": {{\"<child interrupt id>\": …}}}}): {error}"
            )
        })?;
        if let Some(stray) = answers
            .answers
            .keys()
            .find(|id| !pause.interrupts().iter().any(|asked| &asked.id == *id))
        {
            return Err(format!(
                "`{}` is not an interrupt of the sub-agent `{}`",
                stray.as_str(),
                pause.agent
            ));
        }
        Ok(answers)
    }
}
