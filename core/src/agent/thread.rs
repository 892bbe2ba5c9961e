//! A conversation that spans several runs of the same agent.

use serde::{Deserialize, Serialize};

use crate::message::Message;

/// A conversation carried across runs: its history and the chain's state.
///
/// Run an agent in a thread with [`Agent::run_in`](crate::Agent::run_in): the run starts from
/// the thread's history (plus the new input) and state, and leaves both updated. A middleware
/// thus keeps per-thread data in its state for as long as the thread lives, and per-run data by
/// resetting that part in `before_agent` ([`Context::run_index`](crate::Context::run_index)
/// counts the thread's earlier runs). Threads serialize, so a conversation can be stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Thread<S> {
    pub(crate) messages: Vec<Message>,
    pub(crate) state: S,
    pub(crate) runs: usize,
}

impl<S: Default> Thread<S> {
    /// An empty thread.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S> Thread<S> {
    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The chain's state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The runs completed in this thread.
    pub fn runs(&self) -> usize {
        self.runs
    }
}
