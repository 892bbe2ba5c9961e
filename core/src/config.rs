//! The errors of builders: a setting that cannot work (a built-in's, a plugin set's), and an
//! agent that cannot be built as configured. Plain values, below every layer: the middleware's
//! contributions raise the agent's, and the run's `Error` composes it.

mod build_error;

pub use build_error::AgentBuildError;

/// A setting of a built-in middleware that cannot work, named by its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid `{field}`: {problem}")]
pub struct ConfigError {
    field: &'static str,
    problem: String,
}

impl ConfigError {
    /// The error of the setting `field`, which `problem` explains.
    pub fn new(field: &'static str, problem: impl Into<String>) -> Self {
        Self {
            field,
            problem: problem.into(),
        }
    }

    /// Refuses the text setting `field` when it is blank (a prompt or a description the model
    /// would read as nothing).
    pub(crate) fn require_text(field: &'static str, value: &str) -> Result<(), ConfigError> {
        if value.trim().is_empty() {
            return Err(ConfigError::new(field, "is empty"));
        }
        Ok(())
    }

    /// Refuses the list of tool names `field` when one of them is empty.
    pub(crate) fn require_names(field: &'static str, names: &[String]) -> Result<(), ConfigError> {
        if names.iter().any(String::is_empty) {
            return Err(ConfigError::new(field, "a tool name is empty"));
        }
        Ok(())
    }

    /// The setting at fault.
    #[must_use]
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// What is wrong with it.
    #[must_use]
    pub fn problem(&self) -> &str {
        &self.problem
    }
}
