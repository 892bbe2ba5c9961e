//! What a person is asked, and what they answer.

use serde::{Deserialize, Serialize};

/// The payload of a human-in-the-loop interrupt: the calls waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// One per gated call, in the order the model made them.
    pub actions: Vec<ActionRequest>,
}

/// One call waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The answer to a human-in-the-loop interrupt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalResponse {
    /// One per action of the request, in order.
    pub decisions: Vec<Decision>,
}

/// What a person decided about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
    #[error("the answer is not an approval response: {0}")]
    Json(#[from] serde_json::Error),
    /// The answer has a different number of decisions than the request had actions.
    #[error("the answer has {found} decisions for {expected} actions: give one per action")]
    DecisionCount {
        /// The number of actions.
        expected: usize,
        /// The number of decisions.
        found: usize,
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
