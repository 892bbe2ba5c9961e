//! One line per step, for the failures of matchers: short enough to put two side by side.

use std::fmt;

use super::{Step, ToolCallStep};

/// The longest a text is shown before it is cut: a failure shows steps side by side.
const MAX_TEXT: usize = 48;

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::System { text } => write!(f, "system {}", Short(text)),
            Step::User { text } => write!(f, "user {}", Short(text)),
            Step::Model(model) => {
                f.write_str("model")?;
                if let Some(agent) = &model.agent {
                    write!(f, " ({agent})")?;
                }
                if !model.text.is_empty() {
                    write!(f, " {}", Short(&model.text))?;
                }
                for (i, call) in model.tool_calls.iter().enumerate() {
                    f.write_str(if i == 0 { " → " } else { ", " })?;
                    write!(f, "{call}")?;
                }
                Ok(())
            }
            Step::ToolResult(result) => {
                f.write_str(if result.is_error {
                    "tool error"
                } else {
                    "tool"
                })?;
                if let Some(name) = &result.name {
                    write!(f, " {name}")?;
                }
                write!(f, ": {}", Short(&result.text))
            }
            Step::Interrupt(interrupt) => write!(f, "interrupt by {}", interrupt.source),
            Step::SubAgent(sub) => write!(
                f,
                "sub-agent {} ({} steps)",
                sub.agent,
                sub.trajectory.len()
            ),
        }
    }
}

impl fmt::Display for ToolCallStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name, self.arguments)
    }
}

/// A text quoted, on one line, cut at [`MAX_TEXT`] characters.
struct Short<'a>(&'a str);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one_line = self.0.replace('\n', " ");
        let mut chars = one_line.chars();
        let head: String = chars.by_ref().take(MAX_TEXT).collect();
        let cut = if chars.next().is_some() { "…" } else { "" };
        write!(f, "{:?}", format!("{head}{cut}"))
    }
}
