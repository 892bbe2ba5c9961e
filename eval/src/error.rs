//! The errors of this crate: input it cannot read, or cannot compare.

use std::fmt;

/// A trajectory that could not be read from another format
/// ([`Trajectory::from_openai_messages`](crate::Trajectory::from_openai_messages)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrajectoryError {
    /// Where in the input: `"[2].tool_calls[0].function.arguments"`.
    pub at: String,
    /// What is wrong there.
    pub reason: String,
}

impl TrajectoryError {
    pub(crate) fn new(at: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            at: at.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for TrajectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "cannot read the trajectory: {}", self.reason)
        } else {
            write!(
                f,
                "cannot read the trajectory at {}: {}",
                self.at, self.reason
            )
        }
    }
}

impl std::error::Error for TrajectoryError {}
