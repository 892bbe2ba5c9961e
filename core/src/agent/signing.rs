//! An agent that signs the checkpoints it hands out, and resumes only signed ones
//! ([`AgentBuilder::checkpoint_signing`](super::AgentBuilder::checkpoint_signing)).

#[cfg(feature = "signing")]
use std::sync::Arc;

use super::{Agent, ResumeFrom};
use crate::error::Error;
use crate::interrupt::Checkpoint;
#[cfg(feature = "signing")]
use crate::interrupt::{CheckpointError, SignatureError, SigningKey};

/// The keys an agent signs its checkpoints with and verifies them with: none unless
/// configured.
#[derive(Debug, Clone, Default)]
pub(super) struct Signing {
    /// The first signs; all verify.
    #[cfg(feature = "signing")]
    pub(super) keys: Option<Arc<[SigningKey]>>,
}

/// What a resume continues, once the agent admitted it: a checkpoint (verified, if the agent
/// signs its checkpoints) or a key of its store.
#[derive(Debug)]
pub(super) enum Admitted {
    /// This checkpoint.
    Checkpoint(Box<Checkpoint>),
    /// What the store holds under this key.
    Stored(String),
}

impl<M, C> Agent<M, C> {
    /// `from`, if this agent resumes it: with signing, a signed checkpoint that verifies with
    /// one of its keys (read here) or a key of its store; a checkpoint given as it is is
    /// refused ([`SignatureError::Unsigned`]). Without, anything but a signed checkpoint.
    pub(super) fn admit(&self, from: ResumeFrom) -> Result<Admitted, Error> {
        match from {
            ResumeFrom::Stored(key) => Ok(Admitted::Stored(key)),
            #[cfg(feature = "signing")]
            ResumeFrom::Signed(text) => {
                let checkpoint = Checkpoint::from_signed_json(&text, self.signing_keys()?)?;
                Ok(Admitted::Checkpoint(Box::new(checkpoint)))
            }
            #[cfg(feature = "signing")]
            ResumeFrom::Checkpoint(_) if self.signing.keys.is_some() => {
                Err(CheckpointError::Signature(SignatureError::Unsigned).into())
            }
            ResumeFrom::Checkpoint(checkpoint) => Ok(Admitted::Checkpoint(checkpoint)),
        }
    }

    /// `checkpoint` as signed JSON, signed with the agent's first key
    /// ([`AgentBuilder::checkpoint_signing`](super::AgentBuilder::checkpoint_signing)): what
    /// to hand a client, and what it gives back to
    /// [`ResumeFrom::signed`](super::ResumeFrom::signed). An agent without a key refuses
    /// ([`SignatureError::NoKey`]).
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn sign_checkpoint(&self, checkpoint: &Checkpoint) -> Result<String, CheckpointError> {
        let key = self.signing_keys()?.first();
        checkpoint.to_signed_json(key.ok_or(CheckpointError::Signature(SignatureError::NoKey))?)
    }

    /// The agent's keys, if it has any.
    #[cfg(feature = "signing")]
    fn signing_keys(&self) -> Result<&[SigningKey], CheckpointError> {
        match self.signing.keys.as_deref() {
            Some(keys) if !keys.is_empty() => Ok(keys),
            _ => Err(CheckpointError::Signature(SignatureError::NoKey)),
        }
    }
}
