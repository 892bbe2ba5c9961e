//! What a finished run returns.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::message::tool_failure::ToolFailure;
use crate::message::{Message, Role};
use crate::model::{OutputError, StopReason, Usage};
use crate::pause::{Checkpoint, CheckpointError, Interrupt};
use crate::shared::Shared;

/// What a run returns: when it ended (finished, jumped to the end) and when it paused for an
/// interrupt (then [`checkpoint`](Self::checkpoint) resumes it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutput {
    /// The whole history: the input, every model answer and every tool result (shared with
    /// the run's thread, if any: no copy is made for the output).
    pub messages: Shared<Vec<Message>>,
    /// Tokens of every model call that happened in the run: each call to the model counts,
    /// also one a wrap retried or discarded, and one that a resumed run made before its pause.
    /// A response a hook gave in place of the model (`Flow::Respond`, a wrap that does not call
    /// `next`) counts nothing, whatever usage it claims.
    pub usage: Usage,
    /// Steps run: each step is one pass through `before_model`, the model call (or a response
    /// standing in for it) and `after_model`. [`max_steps`](crate::AgentBuilder::max_steps)
    /// bounds this number.
    pub steps: usize,
    /// Times the model was invoked: retries and fallbacks included, responses from hooks
    /// excluded.
    pub model_calls: usize,
    /// Tool calls answered (each with one result message).
    pub tool_calls: usize,
    /// Why the run ended. A run whose last answer the model did not finish normally — refused,
    /// filtered, cut off by the token limit — ends [`Refused`](EndReason::Refused),
    /// [`Filtered`](EndReason::Filtered) or [`Truncated`](EndReason::Truncated), never
    /// [`Finished`](EndReason::Finished): match on `end` to tell an answer from a non-answer.
    pub end: EndReason,
    /// How the last answer kept in this run ended, as the provider said
    /// ([`ModelResponse::stop_reason`](crate::ModelResponse::stop_reason)); `None` if the run
    /// kept no answer (it paused, or a hook ended it before the model answered).
    pub stop_reason: Option<StopReason>,
    /// When an interrupt paused the run: where to resume from.
    pub checkpoint: Option<Box<Checkpoint>>,
    /// The tool calls of the run that failed, with the full errors (the model read only a short
    /// message for each): for logs and the application. Only the calls made in this process:
    /// those before a pause it resumed from are not in a checkpoint.
    pub tool_failures: Vec<ToolFailure>,
    /// When the run's store could not be cleaned up after it ended (its tombstone not written,
    /// its key not let go): the error, also logged at WARN. The run itself ended and this output
    /// is its result — do not run it again; its lease expires on its own.
    pub cleanup_error: Option<CleanupError>,
    /// Where this run's messages (its input included) start in `messages`.
    pub(crate) run_start: usize,
    /// Whether the agent's checkpointer holds `checkpoint` (under its key).
    pub(crate) stored: bool,
}

/// The store's error after a run ended ([`RunOutput::cleanup_error`]): shared, so that the
/// output stays cheap to clone; two are equal when they say the same.
#[derive(Debug, Clone)]
pub struct CleanupError(pub(crate) Arc<CheckpointError>);

impl CleanupError {
    /// The store's error.
    #[must_use]
    pub fn error(&self) -> &CheckpointError {
        &self.0
    }
}

impl fmt::Display for CleanupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the run ended, but its store was not cleaned up: {}",
            self.0
        )
    }
}

impl std::error::Error for CleanupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl PartialEq for CleanupError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl RunOutput {
    /// The last assistant message of this run, if the model (or a hook standing in for it)
    /// answered; `None` for a paused run, which has no answer yet (a run in a thread never
    /// returns an earlier run's answer).
    #[must_use]
    pub fn final_message(&self) -> Option<&Message> {
        if self.end == EndReason::Interrupted {
            return None;
        }
        self.messages
            .get(self.run_start..)?
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
    }

    /// The text of this run's last assistant message (its text parts, without reasoning:
    /// see [`Content::text`](crate::message::Content::text)); `None` if the run paused or the
    /// model never answered in it. Borrowed from the history unless the answer has several
    /// text parts.
    #[must_use]
    pub fn text(&self) -> Option<Cow<'_, str>> {
        self.final_message().map(Message::text)
    }

    /// This run's final answer parsed as JSON into `T` (structured output, see
    /// [`AgentBuilder::response_format`](crate::AgentBuilder::response_format)); an error says
    /// what did not fit, that there is no answer, or that the model did not finish it
    /// ([`OutputError::Unfinished`]: refused, filtered, cut off).
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, OutputError> {
        let answer = self.final_message().ok_or(OutputError::Empty)?;
        if let Some(reason) = self.stop_reason.filter(|reason| !reason.is_answer()) {
            return Err(OutputError::Unfinished(reason));
        }
        crate::model::parse_answer(&answer.text())
    }

    /// The key the agent's checkpointer keeps this run's pause under, when it paused and is
    /// stored: what a later request (in this process or another, to any agent on the same
    /// store) resumes it by, with [`ResumeFrom::stored`](crate::ResumeFrom::stored) — the
    /// thread's id for a run in a [`Thread`](crate::Thread), else the run's id (see
    /// [`Checkpoint::key`]). `None` when the run did not pause, or when nothing is stored (the
    /// agent has no [`checkpointer`](crate::AgentBuilder::checkpointer)): then resume from
    /// [`checkpoint`](Self::checkpoint) itself.
    ///
    /// A streamed run's pause has its key in its last event,
    /// [`AgentEvent::Output`](crate::agent::AgentEvent::Output).
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::{Durability, EndReason, ResumeFrom, chain, hook};
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
    /// let store = Arc::new(InMemoryCheckpointer::new());
    /// let agent = |answer: &str| {
    ///     Agent::builder(ScriptedModel::new([ModelResponse::text(answer)]))
    ///         .chain(chain![ask])
    ///         .checkpointer(Arc::clone(&store), Durability::Pauses)
    ///         .build()
    /// };
    /// let paused = agent("unused")?.run("Hello").await?;
    /// let key = paused.pause_key().unwrap().to_owned(); // sent to the client, say
    /// let id = paused.interrupts()[0].id.clone();
    ///
    /// // A later request, another agent on the same store: the key is all it needs.
    /// let output = agent("Hi!")?
    ///     .resume(ResumeFrom::stored(key), [(id, serde_json::json!(true))])
    ///     .await?;
    /// assert_eq!(output.end, EndReason::Finished);
    /// assert_eq!(output.pause_key(), None);
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn pause_key(&self) -> Option<&str> {
        self.checkpoint
            .as_ref()
            .filter(|checkpoint| self.stored && checkpoint.is_pause())
            .map(|checkpoint| checkpoint.key())
    }

    /// The interrupts waiting for answers, when the run paused.
    #[must_use]
    pub fn interrupts(&self) -> &[Interrupt] {
        self.checkpoint
            .as_ref()
            .map_or(&[], |checkpoint| checkpoint.interrupts())
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// The model answered without calling tools, and finished its answer.
    Finished,
    /// The model declined to answer ([`StopReason::Refusal`]): the text is its refusal.
    Refused,
    /// The provider filtered the answer ([`StopReason::ContentFilter`]): the text, if any, is
    /// what it let through.
    Filtered,
    /// The token limit cut the answer off ([`StopReason::MaxTokens`]): the text is its start
    /// (a tool call cut off with it was dropped, never run).
    Truncated,
    /// A hook jumped to the end.
    Jumped,
    /// An interrupt paused the run; resume it from [`RunOutput::checkpoint`].
    Interrupted,
    /// A run going one step at a time ([`Agent::start_step`](crate::Agent::start_step)) ran
    /// its step and goes on: the store holds it, [`Agent::step`](crate::Agent::step) runs the
    /// next one.
    Stepped,
    /// The run was cancelled from outside ([`Agent::cancel_step`](crate::Agent::cancel_step)):
    /// it ended where its last step left it, its waiting tool calls answered as not executed.
    Cancelled,
}

impl EndReason {
    /// How a run ends whose last kept answer stopped for `stop` and called no tools.
    pub(crate) fn finished(stop: Option<StopReason>) -> Self {
        match stop {
            Some(StopReason::Refusal) => EndReason::Refused,
            Some(StopReason::ContentFilter) => EndReason::Filtered,
            Some(StopReason::MaxTokens) => EndReason::Truncated,
            _ => EndReason::Finished,
        }
    }
}
