//! A paused run, as data: everything needed to resume it, in this process or another.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::signed;
use super::wire::{self, FORMAT, OLDEST};
use super::{Counters, ToolAnswer};
use super::{Interrupt, InterruptId, Members, SignatureError};
use crate::ids::ThreadId;
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::{ModelRequest, ModelResponse};
use crate::shared::Shared;

/// A paused run: the history, the chain's state, the counters, where the run stopped, and the
/// interrupts waiting for answers — or, with durability
/// [`EveryStep`](crate::Durability::EveryStep), a run in progress after its last completed
/// step. Serializable, so a run can resume in a new process.
///
/// # The format
///
/// Versioned (format 3), and checked on every way in: a checkpoint of an older format is
/// migrated when read, one of a newer format does not deserialize at all (with
/// [`from_json`](Self::from_json), serde, or any other format). The history is written once, tool
/// schemas not at all (the agent that resumes has them), and only serde features every
/// self-describing format supports are used (JSON, CBOR, MessagePack…). The chain's members are
/// recorded with their state, so a checkpoint resumes on a chain that changed since (see
/// [`Agent::resume`](crate::Agent::resume)).
///
/// **A checkpoint is single-use**: it resumes its run once. A checkpoint of a run in a
/// [`Thread`](crate::Thread) resumes only on that thread, and only while the thread still
/// waits on it ([`Agent::resume_in`](crate::Agent::resume_in) refuses it afterwards). An agent
/// with a [`checkpointer`](crate::AgentBuilder::checkpointer) resumes a checkpoint only if it is
/// the one its store holds under the run's key, claimed for one worker at a time, and refuses
/// it once the run went on or ended (see [`Agent::resume`](crate::Agent::resume)).
///
/// **A checkpoint is trusted input**: it carries the history, the chain's state and the calls
/// waiting for approval, which a resume takes as they are. [`from_json`](Self::from_json) and
/// serde check its format and that its parts agree, not where it has been: one that passes
/// through a client (a browser, another service) could come back changed — an approved call's
/// arguments edited, a counter reset — and would resume so. Either keep checkpoints
/// server-side and resume by key ([`ResumeFrom::stored`](crate::ResumeFrom::stored)), where the
/// store's copy is the one resumed; or sign the ones you hand out
/// ([`to_signed_json`](Self::to_signed_json) with a
/// [`SigningKey`](crate::interrupt::SigningKey), feature `signing`, on by default) and read
/// them back with [`from_signed_json`](Self::from_signed_json), which refuses one changed by
/// a single byte, or signed with a key you did not give, before anything of it runs — or let
/// the agent do both and refuse any other
/// ([`AgentBuilder::checkpoint_signing`](crate::AgentBuilder::checkpoint_signing)). A
/// signature proves the checkpoint is one your servers made, not that it is the latest: a
/// client can still send back an older signed checkpoint of the same run, or the same one
/// twice, which only a store (see [`Agent::resume`](crate::Agent::resume)) or the run's
/// thread refuses. A signed checkpoint is not
/// encrypted: keep secrets out of the history and the state.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Unique per pause or step: `<run id>:<pause number>` (`:s<step>` for a step).
    pub(crate) id: String,
    pub(crate) run_id: String,
    /// The thread the run belongs to, if any.
    pub(crate) thread: Option<ThreadId>,
    /// The chain's members, nested as its state is.
    pub(crate) chain: Members,
    /// Read from format 2, which did not record the members' nesting: resumes only on a chain
    /// of the same members.
    pub(crate) flat_chain: bool,
    pub(crate) messages: Shared<Vec<Message>>,
    /// The chain's run-scoped state, as JSON.
    pub(crate) state: serde_json::Value,
    /// The chain's thread-scoped state, as JSON.
    pub(crate) thread_state: serde_json::Value,
    pub(crate) counters: Counters,
    pub(crate) position: Position,
    pub(crate) interrupts: Vec<Interrupt>,
    /// The run context's saved values (typed ones are never written).
    pub(crate) run_context: BTreeMap<String, serde_json::Value>,
}

/// Where in a step the run stopped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Position {
    /// In `before_model`, at the flattened chain's member `member`, with the request as the
    /// hooks before it left it. Its tool specs hold their names only (a checkpoint keeps no
    /// schema): the agent that resumes puts its own specs of those tools there.
    BeforeModel {
        /// The request being prepared.
        request: ModelRequest,
        /// The interrupting member's position.
        member: usize,
    },
    /// In `after_model`, at member `member`, with the response as the hooks before it left it.
    AfterModel {
        /// The response being processed.
        response: ModelResponse,
        /// The interrupting member's position.
        member: usize,
        /// Results hooks that ran before the pause supplied for the response's tool calls.
        answered: Vec<ToolResult>,
    },
    /// In the tool calls of a step: `results[i]` is the result of `calls[i]` if it completed
    /// (it never runs again), `None` if it interrupted.
    Tools {
        /// The step's tool calls.
        calls: Vec<ToolCall>,
        /// Their results so far.
        results: Vec<Option<ToolResult>>,
        /// Answers given at earlier pauses of this step to layers of calls still waiting:
        /// each stays its layer's until the call completes.
        answers: Vec<ToolAnswer>,
    },
    /// Between two steps of a run in progress (a step checkpoint): the next step starts from
    /// the history.
    Step,
}

impl Checkpoint {
    /// The checkpoint's id, unique per pause.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The thread whose run paused, if it ran in one: the checkpoint resumes only there.
    #[must_use]
    pub fn thread(&self) -> Option<&ThreadId> {
        self.thread.as_ref()
    }

    /// The interrupts waiting for answers.
    #[must_use]
    pub fn interrupts(&self) -> &[Interrupt] {
        &self.interrupts
    }

    /// The ids of the interrupts waiting for answers.
    pub fn pending(&self) -> impl Iterator<Item = &InterruptId> {
        self.interrupts.iter().map(|interrupt| &interrupt.id)
    }

    /// The history at the pause.
    #[must_use]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Where the run stopped.
    #[must_use]
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The members of the chain that made it (their names, in order).
    #[must_use]
    pub fn chain(&self) -> Vec<String> {
        self.chain.names()
    }

    /// The run the checkpoint continues: with the id of a tool call, the key a tool tells a
    /// repeated call by ([`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key)).
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The key the run is stored under in a [`checkpointer`](crate::AgentBuilder::checkpointer):
    /// the thread's id for a run in a [`Thread`](crate::Thread), else the run's id
    /// ([`run_id`](Self::run_id)). Every checkpoint of a run, its pauses and its steps, has
    /// the run's key (each run of a thread, the thread's), which a resume claims, and which
    /// [`ResumeFrom::stored`](crate::ResumeFrom::stored) takes.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::{EndReason, chain, hook};
    ///
    /// #[hook(before_model)]
    /// fn ask(cx: &mut Context) -> Flow {
    ///     match cx.resume_value() {
    ///         Some(_) => Flow::Continue,
    ///         None => Flow::interrupt(serde_json::json!("go on?")),
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi!")]))
    ///     .chain(chain![ask])
    ///     .build()?;
    /// let alone = agent.run("Hello").await?.checkpoint.unwrap();
    /// assert_eq!(alone.key(), alone.run_id());
    ///
    /// let mut thread = agent.thread();
    /// let in_thread = agent.run_in(&mut thread, "Hello").await?.checkpoint.unwrap();
    /// assert_eq!(in_thread.key(), thread.id().as_str());
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn key(&self) -> &str {
        run_key(self.thread.as_ref(), &self.run_id)
    }

    /// The chain's run-scoped state at the pause, as JSON.
    #[must_use]
    pub fn state(&self) -> &serde_json::Value {
        &self.state
    }

    /// The step the run paused in.
    #[must_use]
    pub fn step(&self) -> usize {
        self.counters.step
    }

    /// A value the run saved in its [`RunContext`](crate::RunContext)
    /// ([`with_saved`](crate::RunContext::with_saved)), as JSON: what a server records of the
    /// request that started the run, read back when deciding whether a retried request is the
    /// same one (see [`Agent::interrupted_run`](crate::Agent::interrupted_run)).
    #[must_use]
    pub fn saved_value(&self, key: &str) -> Option<&serde_json::Value> {
        self.run_context.get(key)
    }

    /// Whether the run paused for answers (pending interrupts), rather than being saved after
    /// a step of a run in progress (durability `EveryStep`).
    #[must_use]
    pub fn is_pause(&self) -> bool {
        !self.interrupts.is_empty()
    }

    /// The checkpoint as JSON (compact: it is written for a store, not for reading).
    pub fn to_json(&self) -> Result<String, CheckpointError> {
        serde_json::to_string(self).map_err(CheckpointError::Encode)
    }

    /// Reads a checkpoint written by [`to_json`](Self::to_json), by this version or an older
    /// one (migrated). A checkpoint of a format this version does not read is
    /// [`CheckpointError::Format`].
    pub fn from_json(json: &str) -> Result<Checkpoint, CheckpointError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(CheckpointError::Decode)?;
        // The format is read first: its error is the clearest.
        if let Some(found) = wire::format_of(&value)
            && !(u64::from(OLDEST)..=u64::from(FORMAT)).contains(&found)
        {
            return Err(CheckpointError::Format {
                found: u32::try_from(found).unwrap_or(u32::MAX),
                supported: FORMAT,
            });
        }
        if wire::format_of(&value).is_none() && value.get(signed::MARKER).is_some() {
            return Err(CheckpointError::Decode(serde::de::Error::custom(
                "a signed checkpoint: read it with `Checkpoint::from_signed_json`",
            )));
        }
        serde_json::from_value(value).map_err(CheckpointError::Decode)
    }

    /// The results of the paused step's calls that completed before the pause.
    pub(crate) fn completed_results(&self) -> Vec<ToolResult> {
        match &self.position {
            Position::Tools { results, .. } => results.iter().flatten().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

/// The key a run is kept under: its thread's id, or its own id — for a checkpoint
/// ([`Checkpoint::key`]) and for a run in progress (the agent's own writes) alike.
pub(crate) fn run_key<'a>(thread: Option<&'a ThreadId>, run_id: &'a str) -> &'a str {
    thread.map_or(run_id, ThreadId::as_str)
}

/// Why a checkpoint could not be made, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The chain's state could not be serialized.
    #[error("the chain's state could not be serialized into the checkpoint")]
    State(#[source] serde_json::Error),
    /// The checkpoint could not be written as JSON.
    #[error("the checkpoint could not be written as JSON")]
    Encode(#[source] serde_json::Error),
    /// The text is not a checkpoint (corrupt, truncated, or something else).
    #[error("not a valid checkpoint (corrupt or truncated?)")]
    Decode(#[source] serde_json::Error),
    /// The checkpoint was written in another format version.
    #[error(
        "checkpoint format {found} is not supported (this version reads formats {} to {supported})",
        OLDEST
    )]
    Format {
        /// The checkpoint's format.
        found: u32,
        /// The newest format this version reads (it migrates older ones).
        supported: u32,
    },
    /// A signed checkpoint that is refused, and so never resumed: changed since it was signed,
    /// signed with a key not given, its signature truncated or removed, or never signed (see
    /// [`Checkpoint::from_signed_json`], feature `signing`).
    #[error("signed checkpoint refused: {0}")]
    Signature(SignatureError),
    /// A [`SigningKey`](super::SigningKey) that is refused: a secret shorter than 32 bytes, an
    /// id empty or too long. Its secret is never in the error.
    #[error("signing key `{id}` is refused: {reason}")]
    SigningKey {
        /// The key's id (its first 64 characters).
        id: String,
        /// Why.
        reason: &'static str,
    },
    /// A file-backed checkpointer failed.
    #[error("checkpoint file {} could not be read or written", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A checkpoint key that no store takes: empty, or longer than
    /// [`MAX_KEY_LEN`](super::MAX_KEY_LEN) bytes.
    #[error("checkpoint key {key:?} is empty or too long (at most 512 bytes)")]
    Key {
        /// The key (its first 64 characters).
        key: String,
    },
    /// Another worker holds the key: this one may not write it (it lost the key, or never had
    /// it). See *Claims* on [`Checkpointer`](super::Checkpointer).
    #[error("checkpoint `{key}` is held by worker `{by}`: only the worker holding a key writes it")]
    Claimed {
        /// The key.
        key: String,
        /// The worker holding it.
        by: String,
    },
    /// This worker's lease on the key is gone: released, freed by a pause, or expired and
    /// claimed by another since. It no longer writes the key (see *Leases* on
    /// [`Checkpointer`](super::Checkpointer)).
    #[error(
        "the lease on checkpoint `{key}` was lost (expired and claimed, released, or freed by a pause): this worker no longer writes it"
    )]
    LeaseLost {
        /// The key.
        key: String,
    },
    /// The run's lease was about to run out when a tool call was to start (its renewals have
    /// failed for a third of its time): the call did not start, and the run stops after its
    /// step, its key let go, for a worker to resume it.
    #[error(
        "the lease on `{key}` was running out (its renewals failed: is the store reachable?): \
         no tool call starts on it; the run stops, to be resumed"
    )]
    LeaseRunningOut {
        /// The key.
        key: String,
    },
    /// The store's database failed (a connection, a query, a file).
    #[error("the checkpoint store failed: {what}")]
    Store {
        /// What the store was doing ("claim", "connect", …).
        what: &'static str,
        /// Why it failed.
        #[source]
        source: crate::report::BoxError,
    },
}
