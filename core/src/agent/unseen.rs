//! What the store holds of a thread's current run that the thread never saw: its worker died
//! (or its client went away) after storing a step, a pause or the run's end, before the thread
//! was kept.

use super::{Agent, Thread};
use crate::error::Error;
use crate::interrupt::{Checkpoint, Record};

/// What [`Agent::unseen_run`] found of a thread's current run: where it stands, as the store
/// holds it. Each is taken up the same way — [`Agent::resume_in`] from
/// [`ResumeFrom::stored`](super::ResumeFrom::stored) with no answers — and nothing that
/// completed runs again.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum UnseenRun {
    /// In progress, kept after its last completed step: the resume goes on from there.
    InProgress(Checkpoint),
    /// Paused, at a pause the thread does not wait on: the resume hands the pause back (the
    /// thread then waits on it), and the answers go to that pause.
    Paused(Checkpoint),
    /// Ended, its end kept with its tombstone: the resume hands the end back (nothing runs).
    /// The checkpoint is the run as it ended.
    Ended(Checkpoint),
}

impl UnseenRun {
    /// The run as the store holds it (what it saved: [`Checkpoint::saved_value`]).
    #[must_use]
    pub fn checkpoint(&self) -> &Checkpoint {
        match self {
            UnseenRun::InProgress(checkpoint)
            | UnseenRun::Paused(checkpoint)
            | UnseenRun::Ended(checkpoint) => checkpoint,
        }
    }

    /// The run as the store holds it, taken.
    #[must_use]
    pub fn into_checkpoint(self) -> Checkpoint {
        match self {
            UnseenRun::InProgress(checkpoint)
            | UnseenRun::Paused(checkpoint)
            | UnseenRun::Ended(checkpoint) => checkpoint,
        }
    }
}

impl<M, C> Agent<M, C> {
    /// What the agent's checkpointer holds of `thread`'s current run that the thread never
    /// saw — its worker died, or its client went away, after storing it and before the thread
    /// was kept: a step ([`interrupted_run`](Self::interrupted_run)), a pause other than the
    /// one the thread waits on, or the run's end. A service sent the same request again (a
    /// client retrying after a restart) hands it back with
    /// [`resume_in`](Self::resume_in)`(thread, ResumeFrom::stored(key), [])` rather than
    /// starting the request over.
    ///
    /// `None` with no checkpointer, when the store holds nothing of the thread's current run,
    /// or only the pause the thread waits on.
    pub async fn unseen_run<S>(&self, thread: &Thread<S>) -> Result<Option<UnseenRun>, Error> {
        let Some(durable) = &self.durable else {
            return Ok(None);
        };
        let current = |checkpoint: &Checkpoint| {
            checkpoint.thread.as_ref() == Some(&thread.id)
                && checkpoint.counters.runs == thread.runs
        };
        Ok(match durable.stored(thread.id.as_str()).await? {
            Some(Record::Checkpoint(checkpoint)) if current(&checkpoint) => {
                if !checkpoint.is_pause() {
                    Some(UnseenRun::InProgress(*checkpoint))
                } else if thread
                    .paused
                    .as_ref()
                    .is_some_and(|pause| pause.checkpoint == checkpoint.id)
                {
                    None
                } else {
                    Some(UnseenRun::Paused(*checkpoint))
                }
            }
            Some(Record::Ended(tombstone)) => tombstone
                .last
                .filter(|last| current(&last.checkpoint))
                .map(|last| UnseenRun::Ended(last.checkpoint)),
            _ => None,
        })
    }
}
