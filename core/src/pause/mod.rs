//! A paused run's values and its keeping: interrupts (raised, identified, answered), the
//! checkpoint a run resumes from, the stores that keep checkpoints and lease their keys, and
//! why a checkpoint could not be made, kept or resumed ([`CheckpointError`], [`ResumeError`]).
//!
//! Its public face is [`interrupt`](crate::interrupt), which documents it. It sits low, above
//! messages and models only: the run's context holds an interruption on its way out and the
//! lease of the run's key, the run's events and output carry interrupts and checkpoints, and
//! the run's `Error` composes its errors.

mod checkpoint;
mod checkpointer;
mod counters;
mod dyn_checkpointer;
mod file_checkpointer;
mod held;
mod lease;
mod lease_watch;
mod members;
mod memory_checkpointer;
mod resume;
mod signed;
mod slot;
mod tool_answer;
mod wire;

use std::fmt;

use serde::{Deserialize, Serialize};

pub(crate) use checkpoint::run_key;
pub use checkpoint::{Checkpoint, CheckpointError, Position};
pub use checkpointer::{Checkpointer, MAX_KEY_LEN, Stored, valid_key};
pub(crate) use counters::Counters;
pub use dyn_checkpointer::{BoxFuture, DynCheckpointer};
pub use file_checkpointer::FileCheckpointer;
pub(crate) use held::Held;
pub(crate) use lease::LastState;
pub use lease::{Claim, Clock, Lease, Record, Tombstone, from_millis, millis};
pub(crate) use lease_watch::LeaseWatch;
pub(crate) use members::{Matching, Members};
pub use memory_checkpointer::InMemoryCheckpointer;
pub use resume::ResumeError;
pub use signed::SignatureError;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use signed::{MAX_KEY_ID_LEN, MIN_SECRET_LEN, SigningKey};
pub use slot::{Slot, SlotStore};
pub use tool_answer::{Raiser, ToolAnswer};
pub(crate) use wire::named_spec;

use crate::hook::Hook;

/// Identifies an interrupt within a run; answer it by this id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InterruptId(String);

impl InterruptId {
    /// An id as written (for answers read back from a person or a file).
    pub fn new(id: impl Into<String>) -> Self {
        InterruptId(id.into())
    }

    /// The id of an interrupt raised by a sequential hook, at the run's pause number `pause`.
    pub(crate) fn hook(pause: usize, step: usize, hook: Hook, member: usize, name: &str) -> Self {
        InterruptId(format!("{pause}/{step}:{hook}:{member}:{name}"))
    }

    /// The id of an interrupt raised on the path of the tool call `call_id`: by the
    /// `wrap_tool_call` hook of the member at `member` named `name`, or by the tool.
    pub(crate) fn tool(
        pause: usize,
        step: usize,
        call_id: &str,
        raiser: Option<(usize, &str)>,
    ) -> Self {
        InterruptId(match raiser {
            Some((member, name)) => {
                format!("{pause}/{step}:wrap_tool_call:{member}:{name}:{call_id}")
            }
            None => format!("{pause}/{step}:tool:{call_id}"),
        })
    }

    /// The number of the run's pause this interrupt was raised at (from 0), for the ids the
    /// agent makes; `None` for an id written by hand that is not one.
    pub(crate) fn pause(&self) -> Option<usize> {
        self.0.split_once('/')?.0.parse().ok()
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InterruptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for InterruptId {
    fn from(id: &str) -> Self {
        InterruptId::new(id)
    }
}

/// A pause of the run, waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Interrupt {
    /// Answer the interrupt by this id.
    pub id: InterruptId,
    /// The middleware (or tool) that raised it: its instance's name if it is a named instance
    /// ([`Named`](crate::middleware::Named)), else its [`NAME`](crate::Middleware::NAME).
    pub source: String,
    /// The hook that raised it; `None` when a tool did.
    pub hook: Option<Hook>,
    /// The raising middleware's position in the chain (flattened, from 0); `None` when a tool
    /// raised it. Tells apart two instances of one middleware type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<usize>,
    /// The step it was raised in.
    pub step: usize,
    /// The tool call it concerns, on the tool path.
    pub tool_call_id: Option<String>,
    /// What the raiser wants answered (data only, so it survives a restart).
    pub payload: serde_json::Value,
}

/// An interrupt on its way out of a hook, before the agent gives it an id.
///
/// Made by [`Flow::interrupt`](crate::Flow::interrupt) and
/// [`Error::interrupt`](crate::Error::interrupt).
#[derive(Debug, Clone, PartialEq)]
pub struct Interruption {
    pub(crate) payload: serde_json::Value,
    /// The position of the raising member in the flattened chain, relative to the chain level
    /// the interruption has reached; each chain adds its member's offset on the way out.
    pub(crate) member: usize,
    /// The raising middleware's (or tool's) name, once known.
    pub(crate) source: Option<String>,
    /// Whether the tool itself raised it (rather than a `wrap_tool_call` hook).
    pub(crate) by_tool: bool,
    /// The hook it left, once known, and whether it left as an error
    /// ([`Error::interrupt`](crate::Error::interrupt)) rather than a flow: what the error of
    /// an interrupt raised where the run cannot pause says to do instead.
    pub(crate) raised_in: Option<Hook>,
    pub(crate) as_error: bool,
}

impl Interruption {
    /// An interruption carrying `payload`.
    #[must_use]
    pub fn new(payload: serde_json::Value) -> Self {
        Interruption {
            payload,
            member: 0,
            source: None,
            by_tool: false,
            raised_in: None,
            as_error: false,
        }
    }

    /// What the raiser wants answered.
    #[must_use]
    pub fn payload(&self) -> &serde_json::Value {
        &self.payload
    }

    /// Moves the interruption out of a member at `offset` named `name`.
    pub(crate) fn leaving_member(
        mut self: Box<Self>,
        offset: usize,
        name: &'static str,
    ) -> Box<Self> {
        self.member += offset;
        self.source.get_or_insert_with(|| name.to_owned());
        self
    }

    /// The interruption of a `wrap_tool_call` hook of the member at `at` (in the flattened
    /// chain) named `name`.
    pub(crate) fn raised_at(mut self, at: usize, name: &'static str) -> Self {
        self.member = at;
        self.source.get_or_insert_with(|| name.to_owned());
        self
    }

    /// Names the instance `to` as its source where its middleware `from` is
    /// ([`Named`](crate::middleware::Named)).
    pub(crate) fn renamed(&mut self, from: &str, to: &str) {
        if self.source.as_deref() == Some(from) && !self.by_tool {
            self.source = Some(to.to_owned());
        }
    }

    /// Names the middleware that raised it, if not named yet.
    pub(crate) fn raised_by(&mut self, name: &'static str) {
        self.source.get_or_insert_with(|| name.to_owned());
    }

    /// Records the hook it left, if not recorded yet.
    pub(crate) fn left(&mut self, hook: Hook) {
        self.raised_in.get_or_insert(hook);
    }

    /// Names the tool that raised it.
    pub(crate) fn raised_by_tool(mut self, tool: &str) -> Self {
        self.source = Some(tool.to_owned());
        self.by_tool = true;
        self
    }
}
