//! The error of a built-in's builder: a setting that cannot work.

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
