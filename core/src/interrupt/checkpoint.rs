//! A paused run, as data: everything needed to resume it, in this process or another.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Interrupt, InterruptId};
use crate::agent::ThreadId;
use crate::context::{Counters, ToolAnswer};
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::{ModelRequest, ModelResponse};
use crate::shared::Shared;

/// The version of the checkpoint format this crate writes and reads. 2: checkpoints have an
/// id, a run id, a thread, the thread-scoped state apart, and tool-path answers by layer.
const FORMAT: u32 = 2;

/// A paused run: the history, the chain's state, the counters, where the run stopped, and the
/// interrupts waiting for answers. Serializable (JSON), so a run can resume in a new process.
///
/// **A checkpoint is single-use**: it resumes its run once. A checkpoint of a run in a
/// [`Thread`](crate::Thread) resumes only on that thread, and only while the thread still
/// waits on it ([`Agent::resume_in`](crate::Agent::resume_in) refuses it afterwards). A stored
/// checkpoint is claimed with [`Checkpointer::take`](super::Checkpointer::take), which hands it
/// to one caller only, so two workers racing to resume it run it once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Checked on every way in: a checkpoint of another format does not deserialize at all
    /// (with `from_json`, serde, or any other format), so it can never be resumed by mistake.
    #[serde(deserialize_with = "supported_format")]
    pub(crate) format: u32,
    /// Unique per pause: `<run id>:<pause number>`.
    pub(crate) id: String,
    pub(crate) run_id: String,
    /// The thread the run belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thread: Option<ThreadId>,
    /// The chain's members, in order (identities where known, names otherwise): a checkpoint
    /// resumes only on the same chain.
    pub(crate) chain: Vec<String>,
    pub(crate) messages: Shared<Vec<Message>>,
    /// The chain's run-scoped state, as JSON.
    pub(crate) state: serde_json::Value,
    /// The chain's thread-scoped state, as JSON.
    pub(crate) thread_state: serde_json::Value,
    /// The run's counters (flattened: the JSON keeps them at the top level).
    #[serde(flatten)]
    pub(crate) counters: Counters,
    pub(crate) position: Position,
    pub(crate) interrupts: Vec<Interrupt>,
    /// The run context's saved values (typed ones are never written): absent when there are
    /// none, so checkpoints written before the field existed still load.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) run_context: BTreeMap<String, serde_json::Value>,
}

/// Where in a step the run stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "at")]
#[non_exhaustive]
pub enum Position {
    /// In `before_model`, at the flattened chain's member `member`, with the request as the
    /// hooks before it left it.
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
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answers: Vec<ToolAnswer>,
    },
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
    pub fn chain(&self) -> &[String] {
        &self.chain
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

    /// Whether the run paused for answers (pending interrupts), rather than being saved after
    /// a step of a run in progress (durability `EveryStep`).
    #[must_use]
    pub fn is_pause(&self) -> bool {
        !self.interrupts.is_empty()
    }

    /// The checkpoint as JSON.
    pub fn to_json(&self) -> Result<String, CheckpointError> {
        serde_json::to_string_pretty(self).map_err(CheckpointError::Encode)
    }

    /// Reads a checkpoint written by [`to_json`](Self::to_json). A checkpoint of another
    /// format version is [`CheckpointError::Format`].
    pub fn from_json(json: &str) -> Result<Checkpoint, CheckpointError> {
        /// The format alone, read first: its error is the clearest.
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        if let Ok(Format { format }) = serde_json::from_str::<Format>(json)
            && format != FORMAT
        {
            return Err(CheckpointError::Format {
                found: format,
                supported: FORMAT,
            });
        }
        serde_json::from_str(json).map_err(CheckpointError::Decode)
    }

    pub(crate) fn format() -> u32 {
        FORMAT
    }

    /// Whether this checkpoint is of the format this version resumes (always, for one that was
    /// deserialized or made by a run; checked again before a resume).
    pub(crate) fn check_format(&self) -> Result<(), CheckpointError> {
        if self.format == FORMAT {
            Ok(())
        } else {
            Err(CheckpointError::Format {
                found: self.format,
                supported: FORMAT,
            })
        }
    }

    /// The results of the paused step's calls that completed before the pause.
    pub(crate) fn completed_results(&self) -> Vec<ToolResult> {
        match &self.position {
            Position::Tools { results, .. } => results.iter().flatten().cloned().collect(),
            _ => Vec::new(),
        }
    }
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
    #[error("checkpoint format {found} is not supported (this version reads format {supported})")]
    Format {
        /// The checkpoint's format.
        found: u32,
        /// The format this version reads.
        supported: u32,
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
    /// The store's database failed (a connection, a query, a file).
    #[error("the checkpoint store failed: {what}")]
    Store {
        /// What the store was doing ("claim", "connect", …).
        what: &'static str,
        /// Why it failed.
        #[source]
        source: crate::error::BoxError,
    },
}

/// Deserializes the format version, refusing any but [`FORMAT`].
fn supported_format<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let format = u32::deserialize(deserializer)?;
    if format == FORMAT {
        Ok(format)
    } else {
        Err(serde::de::Error::custom(format!(
            "checkpoint format {format} is not supported (this version reads format {FORMAT})"
        )))
    }
}
