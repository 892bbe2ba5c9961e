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
//! # Where the parts live
//!
//! This module is the face of interrupts: what it offers is made below it — the interrupts,
//! checkpoints, their stores and leases by the `pause` module, which the run's context and
//! events already name; the [`Answer`] a raiser checks by the tool module, since it checks a
//! tool's arguments against the agent's tools.
//!
//! [`HumanInTheLoop`]: crate::builtin::human_in_the_loop::HumanInTheLoop
//! [`AskUser`]: crate::tool::AskUser

pub use crate::pause::{
    BoxFuture, Checkpoint, CheckpointError, Checkpointer, Claim, Clock, DynCheckpointer,
    FileCheckpointer, InMemoryCheckpointer, Interrupt, InterruptId, Interruption, Lease,
    MAX_KEY_LEN, Position, Raiser, Record, ResumeError, SignatureError, Slot, SlotStore, Stored,
    Tombstone, ToolAnswer, from_millis, millis, valid_key,
};
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use crate::pause::{MAX_KEY_ID_LEN, MIN_SECRET_LEN, SigningKey};
pub(crate) use crate::pause::{Matching, Members, named_spec, run_key};
pub use crate::tool::answer::Answer;
