//! What a finished run returns.

use crate::interrupt::{Checkpoint, Interrupt};
use crate::message::{Message, Role};
use crate::model::Usage;

/// What a run returns: when it ended (finished, jumped to the end) and when it paused for an
/// interrupt (then [`checkpoint`](Self::checkpoint) resumes it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutput {
    /// The whole history: the input, every model answer and every tool result.
    pub messages: Vec<Message>,
    /// Tokens used by every model call of the run.
    pub usage: Usage,
    /// Steps run (each step is one pass through `before_model` … `after_model`).
    pub steps: usize,
    /// Times the model was invoked (retries included; responses from hooks excluded).
    pub model_calls: usize,
    /// Tool calls answered (each with one result message).
    pub tool_calls: usize,
    /// Why the run ended.
    pub end: EndReason,
    /// When an interrupt paused the run: where to resume from.
    pub checkpoint: Option<Checkpoint>,
    /// Where this run's messages (its input included) start in `messages`.
    pub(crate) run_start: usize,
}

impl RunOutput {
    /// The last assistant message of this run, if the model (or a hook standing in for it)
    /// answered; `None` for a paused run, which has no answer yet (a run in a thread never
    /// returns an earlier run's answer).
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

    /// The text of this run's last assistant message; `None` if the run paused or the model
    /// never answered in it.
    pub fn text(&self) -> Option<&str> {
        self.final_message().map(|m| m.content.as_str())
    }

    /// The interrupts waiting for answers, when the run paused.
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
    /// The model answered without calling tools.
    Finished,
    /// A hook jumped to the end.
    Jumped,
    /// An interrupt paused the run; resume it from [`RunOutput::checkpoint`].
    Interrupted,
}
