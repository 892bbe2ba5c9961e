//! [`ResumeFrom`]: what a resume continues.

use crate::interrupt::Checkpoint;

/// What [`Agent::resume`](super::Agent::resume) continues: a checkpoint in the caller's hands,
/// or whatever a key of the agent's checkpointer holds.
///
/// With a [`checkpointer`](super::AgentBuilder::checkpointer), both claim the run's key and
/// resume exactly the checkpoint the store holds there: a checkpoint given resumes only if it
/// is that one (else [`ResumeError::Superseded`](crate::interrupt::ResumeError::Superseded),
/// [`Ended`](crate::interrupt::ResumeError::Ended) or
/// [`NotStored`](crate::interrupt::ResumeError::NotStored), and nothing runs). Without one,
/// only a checkpoint can be given, and it is trusted as it is — unless the agent signs its
/// checkpoints ([`AgentBuilder::checkpoint_signing`](super::AgentBuilder::checkpoint_signing)):
/// then only a [`Signed`](Self::Signed) one that verifies, or a stored key, is resumed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResumeFrom {
    /// This checkpoint (a request to resume this very version).
    Checkpoint(Box<Checkpoint>),
    /// Whatever the agent's checkpointer holds under this key (a thread's id, or a run's): a
    /// pause, with its answers, or a run in progress whose worker died, with none.
    Stored(String),
    /// A checkpoint signed by [`Agent::sign_checkpoint`](super::Agent::sign_checkpoint) (or
    /// [`Checkpoint::to_signed_json`]), as a client sent it back: read only if its signature
    /// verifies with one of the agent's keys
    /// ([`AgentBuilder::checkpoint_signing`](super::AgentBuilder::checkpoint_signing)), else
    /// refused with [`CheckpointError::Signature`](crate::interrupt::CheckpointError::Signature)
    /// before anything runs; then resumed as a checkpoint given.
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    Signed(String),
}

impl ResumeFrom {
    /// What the agent's checkpointer holds under `key`.
    pub fn stored(key: impl Into<String>) -> Self {
        ResumeFrom::Stored(key.into())
    }

    /// The signed checkpoint `text` (see [`ResumeFrom::Signed`]).
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn signed(text: impl Into<String>) -> Self {
        ResumeFrom::Signed(text.into())
    }
}

impl From<Checkpoint> for ResumeFrom {
    fn from(checkpoint: Checkpoint) -> Self {
        ResumeFrom::Checkpoint(Box::new(checkpoint))
    }
}

impl From<Box<Checkpoint>> for ResumeFrom {
    fn from(checkpoint: Box<Checkpoint>) -> Self {
        ResumeFrom::Checkpoint(checkpoint)
    }
}
