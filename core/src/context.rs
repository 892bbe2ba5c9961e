//! What a hook sees of the run besides its request or response.

use crate::message::{Message, ToolCall};
use crate::model::Usage;

/// The shared data of one agent run: the conversation history and the run's counters.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub(crate) messages: Vec<Message>,
    pub(crate) step: usize,
    pub(crate) model_calls: usize,
    pub(crate) tool_calls: usize,
    pub(crate) usage: Usage,
}

impl Run {
    /// A run whose history starts with `messages`.
    ///
    /// The agent creates the run; this constructor exists so hooks can be unit-tested on their own.
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

    /// The 1-based number of the current step (one model call per step); 0 before the first.
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

/// What a hook on the model path (`before_agent`, `before_model`, `wrap_model_call`,
/// `after_model`, `after_agent`) sees: the run, mutably, and its own middleware's state `S`.
///
/// Edits to the history made here persist for the rest of the run; edits to a
/// [`ModelRequest`](crate::ModelRequest) affect one model call only.
#[derive(Debug)]
pub struct Context<'a, S = ()> {
    pub(crate) run: &'a mut Run,
    pub(crate) state: &'a mut S,
}

impl<'a, S> Context<'a, S> {
    /// A context over `run` and `state`; the chain makes these, this is for unit tests of hooks.
    pub fn new(run: &'a mut Run, state: &'a mut S) -> Self {
        Self { run, state }
    }

    /// The run.
    pub fn run(&self) -> &Run {
        self.run
    }

    /// The conversation history, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.run.messages
    }

    /// The conversation history, to edit (summarize, trim, annotate) for the rest of the run.
    pub fn messages_mut(&mut self) -> &mut Vec<Message> {
        &mut self.run.messages
    }

    /// The 1-based number of the current step; 0 in `before_agent`.
    pub fn step(&self) -> usize {
        self.run.step
    }

    /// This middleware's state.
    pub fn state(&self) -> &S {
        self.state
    }

    /// This middleware's state, to update.
    pub fn state_mut(&mut self) -> &mut S {
        self.state
    }

    /// A shorter-lived context over the same run and state, to hand to `next` more than once.
    pub fn reborrow(&mut self) -> Context<'_, S> {
        Context {
            run: self.run,
            state: self.state,
        }
    }
}

/// What a `wrap_tool_call` hook sees: the run and its own middleware's state, read-only, because
/// the tool calls of one step run concurrently.
#[derive(Debug)]
pub struct ToolContext<'a, S = ()> {
    pub(crate) run: &'a Run,
    pub(crate) state: &'a S,
}

impl<S> Clone for ToolContext<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for ToolContext<'_, S> {}

impl<'a, S> ToolContext<'a, S> {
    /// A context over `run` and `state`; the chain makes these, this is for unit tests of hooks.
    pub fn new(run: &'a Run, state: &'a S) -> Self {
        Self { run, state }
    }

    /// The run.
    pub fn run(&self) -> &'a Run {
        self.run
    }

    /// The conversation history, oldest first.
    pub fn messages(&self) -> &'a [Message] {
        &self.run.messages
    }

    /// The 1-based number of the current step.
    pub fn step(&self) -> usize {
        self.run.step
    }

    /// This middleware's state.
    pub fn state(&self) -> &'a S {
        self.state
    }
}
