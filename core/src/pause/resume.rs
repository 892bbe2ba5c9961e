//! Why a checkpoint could not be resumed.

use super::{InterruptId, Tombstone};
use crate::ids::ThreadId;
use crate::report::BoxError;

/// Why [`Agent::resume`](crate::Agent::resume) refused a checkpoint or its answers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The checkpoint's chain state cannot be split among its members (it is not the state of
    /// the members it records), or it is of format 2, which resumes only on the same members.
    #[error(
        "the checkpoint's chain state cannot be carried over to this chain: the checkpoint has \
         [{}], this agent's chain has [{}]",
        checkpoint.join(", "),
        agent.join(", ")
    )]
    ChainMismatch {
        /// The members of the chain that made the checkpoint.
        checkpoint: Vec<String>,
        /// The members of this agent's chain.
        agent: Vec<String>,
    },
    /// The stored chain (a checkpoint's or a thread's) and this agent's chain differ in their
    /// members of one middleware so that which continues which, and keeps its state, would be
    /// a guess: two `ToolCallLimit`s without names before, one after, say, one of which had
    /// counted something (or paused the run). Name the instances
    /// ([`Middleware::named`](crate::Middleware::named)): a named instance continues the one
    /// of its name.
    #[error(
        "which member `{name}` continues which cannot be told: the stored chain has [{}], this \
         agent's chain has [{}]; name each instance (`.named(\"..\")`) so that its state follows \
         its name (state stored without names resumes on a chain with as many of them)",
        checkpoint.join(", "),
        agent.join(", ")
    )]
    AmbiguousMember {
        /// The middleware ([`Middleware::NAME`](crate::Middleware::NAME)).
        name: String,
        /// Its members in the stored chain, in order (with their instance names, if any).
        checkpoint: Vec<String>,
        /// Its members in this agent's chain, in order (with their instance names, if any).
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
    /// A member's state in the checkpoint no longer deserializes as that member's state (its
    /// type changed): the checkpoint cannot be resumed on this chain.
    #[error(
        "the state of `{member}` in the checkpoint no longer fits its type: the checkpoint cannot \
         resume on this chain"
    )]
    State {
        /// The member (its name).
        member: String,
        /// Why its state does not deserialize.
        #[source]
        source: serde_json::Error,
    },
    /// The checkpoint is of a run in a thread: it resumes only with `Agent::resume_in` on that
    /// thread.
    #[error(
        "the checkpoint is of a run in thread `{thread}`: resume it with `Agent::resume_in` on \
         that thread"
    )]
    ThreadCheckpoint {
        /// The checkpoint's thread.
        thread: ThreadId,
    },
    /// The checkpoint is not of a run of this thread.
    #[error(
        "the checkpoint is not of a run of thread `{thread}` (it is of {}): a checkpoint resumes \
         only on its own thread",
        checkpoint.as_ref().map_or_else(|| "no thread".to_owned(), |id| format!("thread `{id}`"))
    )]
    WrongThread {
        /// The checkpoint's thread, if any.
        checkpoint: Option<ThreadId>,
        /// The thread it was resumed on.
        thread: ThreadId,
    },
    /// The thread does not wait on this checkpoint: it was resumed already (a checkpoint is
    /// single-use), or the thread moved on.
    #[error(
        "checkpoint `{checkpoint}` was already resumed, or its thread moved on: a checkpoint \
         resumes once"
    )]
    Spent {
        /// The checkpoint's id.
        checkpoint: String,
    },
    /// The store holds another checkpoint under the key than the one given: the run went on
    /// past it (it was resumed already, or a newer step was stored). Nothing ran; resume what
    /// the store holds ([`ResumeFrom::stored`](crate::ResumeFrom::stored)) to go on.
    #[error(
        "checkpoint `{checkpoint}` is not the one stored under its key (`{stored}` is): the run          went on past it, and a checkpoint resumes once"
    )]
    Superseded {
        /// The checkpoint given.
        checkpoint: String,
        /// The checkpoint the store holds.
        stored: String,
    },
    /// The run ended: its key holds its tombstone. A replayed or duplicated resume is refused,
    /// never run again.
    #[error("the run ended: {tombstone}; a checkpoint resumes once")]
    Ended {
        /// The checkpoint given, if any.
        checkpoint: Option<String>,
        /// What is left of the run.
        tombstone: Box<Tombstone>,
    },
    /// Nothing is stored under the key: never stored, or its run ended longer ago than the
    /// tombstones' retention. A durable agent resumes only what its store holds.
    #[error(
        "nothing is stored under key `{key}` (never stored, or its run ended longer ago than the tombstones are kept): a durable agent resumes only what its store holds"
    )]
    NotStored {
        /// The key.
        key: String,
    },
    /// A run that goes a step at a time ([`Agent::step`](crate::Agent::step)) was asked of an
    /// agent that keeps no runs: each step goes on from what the store holds.
    #[error(
        "a run that goes a step at a time needs a store: give the agent one with \
         `checkpointer(..)` (any durability but `Never`)"
    )]
    NoCheckpointer,
    /// The answer was refused by whoever raised the interrupt (nothing ran).
    #[error("the answer to interrupt `{id}` is refused")]
    InvalidAnswer {
        /// The interrupt.
        id: InterruptId,
        /// Why, as its raiser said.
        #[source]
        source: BoxError,
    },
}
