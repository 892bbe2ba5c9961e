//! A conversation that spans several runs of the same agent.

use serde::{Deserialize, Serialize};

pub use crate::ids::ThreadId;
use crate::interrupt::Members;
use crate::message::{Message, ToolResult};
use crate::model::Usage;
use crate::shared::Shared;

/// A conversation carried across runs: its id, its history, the chain's thread-scoped state,
/// and, while a run of it is paused, which checkpoint resumes it.
///
/// Run an agent in a thread with [`Agent::run_in`](crate::Agent::run_in): the run starts from
/// the thread's history (plus the new input) and thread-scoped state, and leaves both updated
/// when it ends or pauses. A middleware keeps per-thread data in its
/// [`ThreadState`](crate::Middleware::ThreadState), which lives as long as the thread, and
/// per-run data in its [`State`](crate::Middleware::State), which every run starts afresh.
///
/// A run's future that is dropped before it ends (a timeout, a `select!`) leaves the thread as
/// it was. While a run of the thread is paused, [`Agent::run_in`](crate::Agent::run_in)
/// refuses to start another: resume the pause with
/// [`Agent::resume_in`](crate::Agent::resume_in), or give it up with
/// [`abandon_pause`](Self::abandon_pause). Threads serialize, so a conversation can be stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread<S> {
    /// The version of the stored form (see [`THREAD_FORMAT`]): a thread stored before the
    /// field existed reads as format 1; one of a newer format is refused when read, never
    /// misread.
    #[serde(
        default = "legacy_format",
        deserialize_with = "readable_format",
        rename = "format"
    )]
    pub(crate) format: u32,
    /// A thread stored before threads had ids gets a fresh one when it is read.
    #[serde(default = "ThreadId::fresh")]
    pub(crate) id: ThreadId,
    pub(crate) messages: Shared<Vec<Message>>,
    pub(crate) state: S,
    pub(crate) runs: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) paused: Option<PauseMark>,
    /// The members of the chain whose thread-scoped state `state` is, nested as it is (the
    /// thread's fingerprint): a run on a chain that changed since carries each member's state
    /// over by name, as a checkpoint's. Absent in a thread no agent ran yet, or stored in
    /// format 1 (then taken to be the running chain's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chain: Option<Shared<Members>>,
    /// The tokens every run of the thread spent, charged when each run pauses, ends, fails or
    /// is dropped (a thread stored before the field existed reads as none spent).
    #[serde(default)]
    pub(crate) spent: Usage,
    /// Who the thread belongs to (a [`Principal`](crate::Principal)'s id), recorded when it
    /// was made; `None` for a thread no one owns (stored in format 2 or before, or made
    /// without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
}

/// The pause a thread waits on: the checkpoint that resumes it (each resumes once), and the
/// results of the paused step's calls that completed before it (kept if the pause is
/// abandoned, so that no completed call runs again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PauseMark {
    pub(crate) checkpoint: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) completed: Vec<ToolResult>,
}

impl<S: Default> Default for Thread<S> {
    fn default() -> Self {
        Self::with_id(ThreadId::fresh())
    }
}

impl<S: Default> Thread<S> {
    /// An empty thread with a fresh id.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty thread with the id `id`.
    #[must_use]
    pub fn with_id(id: ThreadId) -> Self {
        Thread {
            format: THREAD_FORMAT,
            id,
            messages: Shared::default(),
            state: S::default(),
            runs: 0,
            paused: None,
            chain: None,
            spent: Usage::default(),
            owner: None,
        }
    }
}

impl<S> Thread<S> {
    /// The thread, owned by `owner` (a [`Principal`](crate::Principal)'s id): a server records
    /// who made a thread so that it can check, on every later request, that the thread is the
    /// asker's (see `hookchain::axum`'s *Serve it safely*). Runs never change it.
    #[must_use]
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    /// Who the thread belongs to, if it records an owner.
    #[must_use]
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// The thread's id.
    pub fn id(&self) -> &ThreadId {
        &self.id
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The chain's thread-scoped state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The runs completed in this thread.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The tokens every run of this thread spent: every model call that answered, charged as the
    /// run pauses, ends or fails — and when its future is dropped (cancelled, its client gone),
    /// which otherwise leaves the thread as it was — so a run given up paused or cancelled
    /// still counts. Thread-scoped budgets ([`TokenBudget`](crate::builtin::TokenBudget)) read
    /// it through [`Context::thread_usage`](crate::Context::thread_usage).
    #[must_use]
    pub fn spent(&self) -> Usage {
        self.spent
    }

    /// Whether a run of this thread is paused, waiting for [`Agent::resume_in`](crate::Agent::resume_in).
    pub fn is_paused(&self) -> bool {
        self.paused.is_some()
    }

    /// Gives up the paused run: its checkpoint no longer resumes, and every tool call it left
    /// without a result gets one right after the call — the result it had if it completed
    /// before the pause, else an error result saying it was not executed — so the history
    /// stays valid for any provider and no completed call ever runs again. Returns whether
    /// there was a pause.
    ///
    /// This changes the thread only. With an agent that keeps its runs in a checkpointer, give
    /// the pause up with [`Agent::abandon`](crate::Agent::abandon), which records it in the
    /// store first, so that no copy of the thread and no worker resumes it.
    pub fn abandon_pause(&mut self) -> bool {
        let Some(pause) = self.paused.take() else {
            return false;
        };
        // The run given up ended: the next is another (and its pause, still in a store, no
        // longer this thread's to resume).
        self.runs = self.runs.saturating_add(1);
        crate::message::close_pending(&mut self.messages, pause.completed, |call| {
            format!(
                "tool call `{}` was not executed: the run was abandoned while paused",
                call.name
            )
        });
        true
    }
}

/// The version of a stored [`Thread`] this crate writes and reads. 1: the id, the history,
/// the thread-scoped state, the runs, the pause; 2: and the members of the chain whose state it
/// holds (its fingerprint); 3: and its owner (so that a version that does not know owners
/// refuses the thread rather than saving it again without one).
pub const THREAD_FORMAT: u32 = 3;

/// The format of a thread stored before threads had one.
fn legacy_format() -> u32 {
    1
}

/// Deserializes a thread's format version, refusing one newer than [`THREAD_FORMAT`].
fn readable_format<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let format = u32::deserialize(deserializer)?;
    if format <= THREAD_FORMAT {
        Ok(format)
    } else {
        Err(serde::de::Error::custom(format!(
            "thread format {format} is newer than this version reads (format {THREAD_FORMAT})"
        )))
    }
}

/// Why a run could not start in a [`Thread`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ThreadError {
    /// A run of the thread is paused.
    #[error(
        "thread `{thread}` has a paused run: resume it with `Agent::resume_in`, or give it up \
         with `Thread::abandon_pause` before starting another run"
    )]
    Paused {
        /// The thread.
        thread: ThreadId,
    },
}
