//! What a parent's model gives a sub-agent by default: a task, in words.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agent::RunInput;

/// The input of an [`AgentTool`](super::AgentTool) unless it is given a type of its own: a
/// task, which becomes the child's first (and only) user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Task {
    /// The task, with everything needed to do it: the agent sees nothing else of this
    /// conversation.
    pub task: String,
}

impl Task {
    /// The task `task`.
    pub fn new(task: impl Into<String>) -> Self {
        Self { task: task.into() }
    }
}

impl From<Task> for RunInput {
    fn from(task: Task) -> Self {
        RunInput::from(task.task)
    }
}
