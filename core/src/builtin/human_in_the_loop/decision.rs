//! What a person is asked, and what they answer.

use serde::{Deserialize, Serialize};

use crate::interrupt::{Interrupt, InterruptId};
use crate::tool::ToolError;

/// The payload of a human-in-the-loop interrupt: the calls waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// One per gated call, in the order the model made them.
    pub actions: Vec<ActionRequest>,
}

/// One call waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ActionRequest {
    /// The tool call's id.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// The arguments the model gave.
    pub arguments: serde_json::Value,
    /// What the person is told about the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The decisions the person may take.
    pub allowed_decisions: Vec<DecisionKind>,
}

impl ApprovalRequest {
    /// The approval request an interrupt asks for, if it is one (`None` for another kind of
    /// interrupt).
    ///
    /// ```
    /// # use hookchain::builtin::human_in_the_loop::{ApprovalRequest, ApprovalResponse};
    /// # fn answer(interrupt: &hookchain::Interrupt) -> Option<(hookchain::InterruptId, serde_json::Value)> {
    /// let request = ApprovalRequest::from_interrupt(interrupt)?;
    /// Some(ApprovalResponse::approve_all(&request).answer(interrupt))
    /// # }
    /// ```
    #[must_use]
    pub fn from_interrupt(interrupt: &Interrupt) -> Option<ApprovalRequest> {
        ApprovalRequest::deserialize(&interrupt.payload).ok()
    }
}

/// The answer to a human-in-the-loop interrupt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalResponse {
    /// One per action of the request, in order.
    pub decisions: Vec<Decision>,
}

impl ApprovalResponse {
    /// One decision per action of the request, in order.
    pub fn new(decisions: impl IntoIterator<Item = Decision>) -> Self {
        ApprovalResponse {
            decisions: decisions.into_iter().collect(),
        }
    }

    /// Approves every action of `request`.
    #[must_use]
    pub fn approve_all(request: &ApprovalRequest) -> Self {
        Self::new(request.actions.iter().map(|_| Decision::Approve))
    }

    /// Rejects every action of `request`, telling the model `why`.
    pub fn reject_all(request: &ApprovalRequest, why: impl Into<String>) -> Self {
        let why = why.into();
        Self::new(request.actions.iter().map(|_| Decision::Reject {
            message: Some(why.clone()),
        }))
    }

    /// The answer to `interrupt`, as `Agent::resume` takes it.
    #[must_use]
    pub fn answer(&self, interrupt: &Interrupt) -> (InterruptId, serde_json::Value) {
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        (interrupt.id.clone(), value)
    }

    /// Answers approving every action of every approval among `interrupts` (the others are
    /// left unanswered): for a test, a demo, or an operator's "approve all".
    ///
    /// ```
    /// # use hookchain::builtin::human_in_the_loop::ApprovalResponse;
    /// # fn resume(paused: &hookchain::RunOutput) {
    /// let answers = ApprovalResponse::approve_every(paused.interrupts());
    /// # let _ = answers;
    /// # }
    /// ```
    #[must_use]
    pub fn approve_every(interrupts: &[Interrupt]) -> Vec<(InterruptId, serde_json::Value)> {
        interrupts
            .iter()
            .filter_map(|interrupt| {
                let request = ApprovalRequest::from_interrupt(interrupt)?;
                Some(Self::approve_all(&request).answer(interrupt))
            })
            .collect()
    }
}

/// What a person decided about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as the model made it.
    Approve,
    /// Run the call with these arguments instead.
    Edit {
        /// The new arguments.
        arguments: serde_json::Value,
    },
    /// Do not run the call; the model reads that it was rejected, and why.
    Reject {
        /// Why, for the model.
        #[serde(default)]
        message: Option<String>,
    },
    /// Do not run the call; the model reads `content` as its result.
    Respond {
        /// The result.
        content: String,
    },
}

impl Decision {
    /// The kind of the decision.
    #[must_use]
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::Approve => DecisionKind::Approve,
            Decision::Edit { .. } => DecisionKind::Edit,
            Decision::Reject { .. } => DecisionKind::Reject,
            Decision::Respond { .. } => DecisionKind::Respond,
        }
    }
}

/// A kind of [`Decision`], for policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DecisionKind {
    /// [`Decision::Approve`].
    Approve,
    /// [`Decision::Edit`].
    Edit,
    /// [`Decision::Reject`].
    Reject,
    /// [`Decision::Respond`].
    Respond,
}

impl DecisionKind {
    /// Every kind.
    pub const ALL: [DecisionKind; 4] = [
        DecisionKind::Approve,
        DecisionKind::Edit,
        DecisionKind::Reject,
        DecisionKind::Respond,
    ];
}

/// Why a human-in-the-loop answer could not be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HumanInTheLoopError {
    /// The answer is not an [`ApprovalResponse`] (or the request could not be written).
    #[error("the answer is not an approval response")]
    Json(#[from] serde_json::Error),
    /// The answer has a different number of decisions than the request had actions.
    #[error("the answer has {found} decisions for {expected} actions: give one per action")]
    DecisionCount {
        /// The number of actions.
        expected: usize,
        /// The number of decisions.
        found: usize,
    },
    /// Edited arguments the tool does not accept.
    #[error("the edited arguments of `{tool}` are not accepted")]
    EditedArguments {
        /// The tool.
        tool: String,
        /// What the tool said.
        #[source]
        source: ToolError,
    },
    /// A decision the tool's policy does not allow.
    #[error("`{decision:?}` is not allowed for calls of `{tool}`")]
    NotAllowed {
        /// The tool.
        tool: String,
        /// The decision.
        decision: DecisionKind,
    },
}
