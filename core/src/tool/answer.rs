//! An answer to an interrupt, as its raiser checks it before the run resumes.

use serde::de::DeserializeOwned;

use super::{ToolError, ToolRegistry};
use crate::pause::Interrupt;

/// An answer to one of a checkpoint's interrupts, handed to the middleware that raised it
/// ([`Middleware::check_answer`](crate::Middleware::check_answer)) before the run resumes, so
/// that a wrong answer is refused by `resume` before anything runs.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    interrupt: &'a Interrupt,
    value: &'a serde_json::Value,
    tools: &'a ToolRegistry,
}

impl<'a> Answer<'a> {
    pub(crate) fn new(
        interrupt: &'a Interrupt,
        value: &'a serde_json::Value,
        tools: &'a ToolRegistry,
    ) -> Self {
        Answer {
            interrupt,
            value,
            tools,
        }
    }

    /// The interrupt answered (its payload is what the middleware asked).
    #[must_use]
    pub fn interrupt(&self) -> &'a Interrupt {
        self.interrupt
    }

    /// The answer as given.
    #[must_use]
    pub fn value(&self) -> &'a serde_json::Value {
        self.value
    }

    /// The answer, deserialized.
    pub fn value_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(self.value)
    }

    /// The interrupt's payload, deserialized.
    pub fn payload_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.interrupt.payload)
    }

    /// Checks `arguments` against the agent's tool `tool` (see
    /// [`Tool::check_arguments`](crate::Tool::check_arguments)): for an answer that edits a
    /// call's arguments.
    pub fn check_tool_arguments(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<(), ToolError> {
        self.tools.check_arguments(tool, arguments)
    }
}
