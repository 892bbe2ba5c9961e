//! Interrupts: a hook or a tool pauses the run to ask for outside input (an approval, an
//! answer), and the run resumes later, in this process or another, from a [`Checkpoint`].
//!
//! ```text
//!             ┌──────────── Agent::run ────────────┐
//!  input ───► │ … before_model / after_model /     │ ──► RunOutput { end: Interrupted,
//!             │   wrap_tool_call / a tool raises    │                 interrupts, checkpoint }
//!             │   an interrupt with a payload       │            │
//!             └─────────────────────────────────────┘            ▼ serialize, store, restart…
//!             ┌─────────── Agent::resume ──────────┐    a person (or program) answers each
//!  checkpoint │ the interrupted hook runs again and │ ◄── interrupt by its id
//!  + answers ►│ reads its answer; completed tool    │
//!             │ calls are never run again           │ ──► RunOutput { end: Finished, … }
//!             └─────────────────────────────────────┘
//! ```
//!
//! - From `before_model` and `after_model`, return [`Flow::interrupt`](crate::Flow::interrupt).
//!   On resume the step goes on from that hook: the hooks before it do not run again (their
//!   edits to the request or response, and to their state, are in the checkpoint), and the hook
//!   reads its answer with [`Context::resume_value`](crate::Context::resume_value).
//! - From `wrap_tool_call`, return `Err(Error::interrupt(payload))`; from a tool, return
//!   `Err(ToolError::Interrupt { payload })`. The interrupt travels out of band: whatever the
//!   wraps outside make of the call's result (it [`is_paused`](crate::ToolResult::is_paused)),
//!   the run pauses. The other tool calls of the step complete and are kept; on resume the
//!   interrupted call runs again through the wraps, and the answer reaches only the layer that
//!   asked: a wrap reads its own with [`ToolContext::resume_value`](crate::ToolContext::resume_value)
//!   (and keeps it for the rest of the step, should an inner layer ask next), the tool is
//!   called again and reads its own the same way, from the [`ToolContext`](crate::ToolContext)
//!   that [`Tool::call`](crate::Tool::call) receives.
//! - Before anything runs, `resume` asks whoever raised each interrupt whether its answer will
//!   do ([`Middleware::check_answer`](crate::Middleware::check_answer),
//!   [`Tool::check_answer`](crate::Tool::check_answer)), and refuses the resume if not.
//! - **A checkpoint is single-use**: see [`Checkpoint`].
//! - **A checkpoint is trusted input**: one that passes through a client is signed
//!   (`Checkpoint::to_signed_json`, feature `signing`) and read back only unchanged; see
//!   [`Checkpoint`].
//!
//! Interrupt ids are deterministic: the number of the run's earlier pauses, the step, the hook
//! (or `tool`), the middleware's position in the chain and name, and the tool call's id — so the
//! same run gives the same ids, two instances of one middleware have ids of their own, and an
//! answer meant for an earlier pause is refused.
//!
//! # Example
//!
//! A hook asks before every model call whether to go on; the run pauses, the checkpoint goes
//! through JSON (as it would through a file or a database), and the run resumes:
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::{Checkpoint, EndReason, chain, hook};
//! use serde_json::json;
//!
//! /// Asks a person before each model call.
//! #[hook(before_model)]
//! fn ask_first(cx: &mut Context) -> Flow {
//!     match cx.resume_value() {
//!         // Resumed: the answer is here.
//!         Some(answer) if answer == &json!("go") => Flow::Continue,
//!         Some(_) => Flow::respond(ModelResponse::text("Stopped by the operator.")),
//!         // First time: pause with a question.
//!         None => Flow::interrupt(json!({ "question": "Call the model?" })),
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
//!     .chain(chain![ask_first])
//!     .build()?;
//!
//! let paused = agent.run("Hi").await?;
//! assert_eq!(paused.end, EndReason::Interrupted);
//! let interrupt = &paused.interrupts()[0];
//! assert_eq!(interrupt.payload, json!({ "question": "Call the model?" }));
//! let id = interrupt.id.clone();
//!
//! // Store it anywhere; a new process can resume it with an agent built the same way.
//! let saved = paused.checkpoint.unwrap().to_json()?;
//! let checkpoint = Checkpoint::from_json(&saved)?;
//!
//! let done = agent.resume(checkpoint, [(id, json!("go"))]).await?;
//! assert_eq!(done.end, EndReason::Finished);
//! assert_eq!(done.text().as_deref(), Some("Hello!"));
//! # Ok::<(), hookchain::Error>(())
//! # }).unwrap();
//! ```
//!
//! [`Checkpointer`] stores checkpoints by key for the workers of a deployment, each key leased
//! to one worker at a time ([`InMemoryCheckpointer`], [`FileCheckpointer`], and SQLite and
//! Postgres stores behind the features `sqlite` and `postgres`); an agent writes its runs there
//! as its [`Durability`](crate::Durability) says, so that a run whose process dies is taken
//! over by another worker once its lease expired. [`HumanInTheLoop`] and [`AskUser`] are built
//! on this mechanism.
//!
//! # Exactly once, at the seams
//!
//! An agent with a checkpointer resumes only what its store holds:
//! [`Agent::resume`](crate::Agent::resume) claims the run's key and resumes the checkpoint
//! stored there — the one given, if it is that one, or whatever is stored
//! ([`ResumeFrom::stored`](crate::ResumeFrom::stored)). What can go wrong, and what happens:
//!
//! | what happened | what a resume gets |
//! |---|---|
//! | another worker runs it now (a duplicated approval) | [`CheckpointError::Claimed`], nothing runs |
//! | the run went on past the given checkpoint (a retried or stale approval) | [`ResumeError::Superseded`]: resume what is stored |
//! | the run ended (a replayed approval) | [`ResumeError::Ended`], naming its [`Tombstone`] |
//! | it ended longer ago than the tombstones are kept, or was never stored | [`ResumeError::NotStored`] |
//! | its worker died | the run, once the worker's [`Lease`] expired, from its last step |
//! | its future was dropped (client gone, cancelled) | its key released at once; the run goes on from its last step |
//! | the store failed after the run ended | the output, with [`RunOutput::cleanup_error`](crate::RunOutput::cleanup_error) |
//! | a checkpoint that passed through a client was changed (with signing) | [`CheckpointError::Signature`], nothing runs |
//!
//! A completed tool call never runs again; one in flight when its worker died runs again with
//! the same [`idempotency_key`](crate::ToolContext::idempotency_key). A checkpoint that passed
//! through a client is trusted input (see [`Checkpoint`]).
//!
//! [`HumanInTheLoop`]: crate::builtin::human_in_the_loop::HumanInTheLoop
//! [`AskUser`]: crate::tool::AskUser

mod answer;
mod checkpoint;
mod checkpointer;
mod dyn_checkpointer;
mod file_checkpointer;
mod lease;
mod members;
mod memory_checkpointer;
mod resume;
mod signed;
mod slot;
mod wire;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::context::{Raiser, ToolAnswer};
pub use answer::Answer;
pub(crate) use checkpoint::run_key;
pub use checkpoint::{Checkpoint, CheckpointError, Position};
pub use checkpointer::{Checkpointer, MAX_KEY_LEN, Stored, valid_key};
pub use dyn_checkpointer::{BoxFuture, DynCheckpointer};
pub use file_checkpointer::FileCheckpointer;
pub use lease::{Claim, Clock, Lease, Record, Tombstone, from_millis, millis};
pub(crate) use members::{Matching, Members};
pub use memory_checkpointer::InMemoryCheckpointer;
pub use resume::ResumeError;
pub use signed::SignatureError;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use signed::{MAX_KEY_ID_LEN, MIN_SECRET_LEN, SigningKey};
pub use slot::{Slot, SlotStore};
pub(crate) use wire::named_spec;

use crate::middleware::Hook;

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
