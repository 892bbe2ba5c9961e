//! Why a checkpoint could not be resumed.

use super::InterruptId;

/// Why [`Agent::resume`](crate::Agent::resume) refused a checkpoint or its answers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The checkpoint was made by another chain.
    #[error(
        "the checkpoint was made by another chain: it has [{}], this agent's chain has [{}]",
        checkpoint.join(", "),
        agent.join(", ")
    )]
    ChainMismatch {
        /// The members of the chain that made the checkpoint.
        checkpoint: Vec<String>,
        /// The members of this agent's chain.
        agent: Vec<String>,
    },
    /// An answer names no pending interrupt (a typo, or an answer to an older checkpoint).
    #[error(
        "no pending interrupt has the id `{id}` (an answer to an older checkpoint?); pending: [{}]",
        pending.iter().map(InterruptId::as_str).collect::<Vec<_>>().join(", ")
    )]
    UnknownInterrupt {
        /// The id answered.
        id: InterruptId,
        /// The ids waiting for answers.
        pending: Vec<InterruptId>,
    },
    /// The same interrupt is answered twice.
    #[error("interrupt `{id}` is answered more than once: give one answer per interrupt")]
    DuplicateAnswer {
        /// The interrupt answered twice.
        id: InterruptId,
    },
    /// A pending interrupt has no answer.
    #[error("interrupt `{id}` has no answer: answer every pending interrupt to resume")]
    MissingAnswer {
        /// The interrupt without an answer.
        id: InterruptId,
    },
    /// The checkpoint's chain state does not fit this chain's state type.
    #[error("the checkpoint's chain state does not fit this chain: {0}")]
    State(#[source] serde_json::Error),
    /// The checkpoint has no pending interrupt: there is nothing to resume.
    #[error("the checkpoint has no pending interrupt: there is nothing to resume")]
    NothingPending,
}
