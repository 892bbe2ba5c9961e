//! The error of a [`Pii`](super::Pii) that blocks.

use std::fmt;

/// Where [`Pii`](super::Pii) found what it blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PiiPlace {
    /// The run's input (user and system messages).
    Input,
    /// The model's answer.
    Output,
    /// A tool's result.
    ToolResult,
}

impl fmt::Display for PiiPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PiiPlace::Input => "input",
            PiiPlace::Output => "model's answer",
            PiiPlace::ToolResult => "tool result",
        })
    }
}

/// Personal data of a kind whose strategy is [`Block`](super::PiiStrategy::Block) was found:
/// the kinds and how many of each (never the values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("personal data in the {place} is blocked: found {}", counts(.found))]
#[non_exhaustive]
pub struct PiiBlocked {
    /// Where it was found.
    pub place: PiiPlace,
    /// Each blocked kind (`email`, your detector's name) and how many were found, in the order
    /// the detectors were configured.
    pub found: Vec<(String, usize)>,
}

impl PiiBlocked {
    /// How many values of `kind` were found.
    #[must_use]
    pub fn count(&self, kind: &str) -> usize {
        self.found
            .iter()
            .find(|(name, _)| name == kind)
            .map_or(0, |&(_, count)| count)
    }
}

/// `2 × email, 1 × credit_card`.
fn counts(found: &[(String, usize)]) -> String {
    found
        .iter()
        .map(|(kind, count)| format!("{count} × {kind}"))
        .collect::<Vec<_>>()
        .join(", ")
}
