//! What a hook sees of the run besides its request or response.

use crate::message::{Message, ToolCall};
use crate::model::Usage;

/// What every hook sees of the run: the conversation history and the run's counters.
///
/// Hooks on the model path get `&mut Context` and may edit the history; those edits persist for
/// the rest of the run, while edits to a [`ModelRequest`](crate::ModelRequest) affect one model
/// call only. `wrap_tool_call` hooks get `&Context`, because the tool calls of one step run
/// concurrently.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub(crate) messages: Vec<Message>,
    pub(crate) step: usize,
    pub(crate) model_calls: usize,
    pub(crate) tool_calls: usize,
    pub(crate) usage: Usage,
}

impl Context {
    /// The context of a run whose history starts with `messages`.
    ///
    /// The agent creates the context of each run; this constructor lets hooks be unit-tested.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    /// The conversation history, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The conversation history, to edit (summarize, trim, annotate) for the rest of the run.
    ///
    /// The request of a step is built from the history when the step begins, so an edit made
    /// in `before_model` shows from the next step on. To change the current call too, edit the
    /// request as well (a summarizer replaces old messages in both). The request is never
    /// rebuilt behind a hook's back: that would undo an earlier hook's request-only edit, such
    /// as input redaction.
    pub fn messages_mut(&mut self) -> &mut Vec<Message> {
        &mut self.messages
    }

    /// The 1-based number of the current step (one model call per step); 0 in `before_agent`.
    pub fn step(&self) -> usize {
        self.step
    }

    /// How many times the model has been invoked in this run (retries included).
    pub fn model_calls(&self) -> usize {
        self.model_calls
    }

    /// How many tool calls have been answered in this run.
    pub fn tool_calls(&self) -> usize {
        self.tool_calls
    }

    /// Tokens used by this run's model calls so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The tool calls of the last assistant message that have no result in the history yet.
    pub fn pending_tool_calls(&self) -> Vec<ToolCall> {
        let Some(at) = self.messages.iter().rposition(Message::has_tool_calls) else {
            return Vec::new();
        };
        let answered = |id: &str| {
            self.messages[at + 1..]
                .iter()
                .any(|m| m.tool_call_id.as_deref() == Some(id))
        };
        self.messages[at]
            .tool_calls
            .iter()
            .filter(|call| !answered(&call.id))
            .cloned()
            .collect()
    }
}
