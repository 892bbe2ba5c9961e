//! Loop detection: the same tool call (same tool, same arguments) made again and again.
//!
//! ```
//! use hookchain::builtin::LoopDetection;
//! use hookchain::{Agent, ModelResponse, ScriptedModel, ToolCall};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let detection = LoopDetection::builder().window(10).warn_at(2).block_at(3).build()?;
//! let same = |id: &str| ToolCall::new(id, "missing_tool", serde_json::json!({ "q": "x" }));
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls([same("a")]),
//!     ModelResponse::tool_calls([same("b")]),
//!     ModelResponse::tool_calls([same("c")]),
//!     ModelResponse::text("done"),
//! ]);
//! let agent = Agent::builder(model).chain(detection).build()?;
//! let output = agent.run("Hi").await.unwrap();
//! assert!(output.messages[4].text().contains("2nd time"));
//! assert!(output.messages[6].text().contains("Stop repeating it"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Two calls are the same when they call the same tool with the same arguments, compared as
//!   canonical JSON (object keys sorted: the order the model wrote them in does not matter).
//! - Each call of a model answer is numbered by how many times the same call appears among the
//!   run's last `window` tool calls (default 20), itself included, the earlier calls of the
//!   same answer included.
//! - At `warn_at` (default 2) the call runs, and its result carries a note telling the model it
//!   repeats itself. At `block_at` (default 3) and beyond, the call does not run: it gets an
//!   error result telling the model to stop repeating it.
//! - Blocked calls stay in the window (a model that insists stays blocked). The window is
//!   run-scoped state: a new run starts afresh.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

use super::ConfigError;
use super::canonical::call_key;
use crate::context::{Context, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::ToolNext;
use crate::model::ModelResponse;

/// Warns about, then blocks, repeated tool calls (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDetection {
    window: usize,
    warn_at: u32,
    block_at: u32,
}

/// Builds a [`LoopDetection`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
#[must_use]
pub struct LoopDetectionBuilder {
    window: usize,
    warn_at: u32,
    block_at: u32,
}

impl Default for LoopDetectionBuilder {
    fn default() -> Self {
        Self {
            window: 20,
            warn_at: 2,
            block_at: 3,
        }
    }
}

/// The run's recent tool calls (run-scoped state of [`LoopDetection`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentCalls {
    /// The keys of the last `window` calls, oldest first.
    keys: VecDeque<String>,
    /// The calls of the current answer whose results get a warning, with their number.
    warned: Vec<(String, u32)>,
}

impl LoopDetection {
    /// A builder with the defaults: a window of 20 calls, a warning at the 2nd same call, a
    /// block from the 3rd.
    pub fn builder() -> LoopDetectionBuilder {
        LoopDetectionBuilder::default()
    }
}

impl Default for LoopDetection {
    fn default() -> Self {
        let LoopDetectionBuilder {
            window,
            warn_at,
            block_at,
        } = LoopDetectionBuilder::default();
        LoopDetection {
            window,
            warn_at,
            block_at,
        }
    }
}

impl LoopDetectionBuilder {
    /// How many of the run's last tool calls are remembered.
    pub fn window(mut self, calls: usize) -> Self {
        self.window = calls;
        self
    }

    /// The same call's number at which its result carries a warning.
    pub fn warn_at(mut self, repeats: u32) -> Self {
        self.warn_at = repeats;
        self
    }

    /// The same call's number from which it is blocked.
    pub fn block_at(mut self, repeats: u32) -> Self {
        self.block_at = repeats;
        self
    }

    /// The middleware; an error names a setting that cannot work: `block_at` below 2 (a first
    /// call is no repeat), `warn_at` below 2 or not below `block_at`, or a `window` too short
    /// to see `block_at` calls.
    pub fn build(self) -> Result<LoopDetection, ConfigError> {
        if self.block_at < 2 {
            return Err(ConfigError::new(
                "block_at",
                "must be at least 2 (a first call is no repeat)",
            ));
        }
        if self.warn_at < 2 || self.warn_at >= self.block_at {
            return Err(ConfigError::new(
                "warn_at",
                format!(
                    "must be at least 2 and below `block_at` ({}), not {}",
                    self.block_at, self.warn_at
                ),
            ));
        }
        let needed = usize::try_from(self.block_at - 1).unwrap_or(usize::MAX);
        if self.window < needed {
            return Err(ConfigError::new(
                "window",
                format!(
                    "must hold at least `block_at` - 1 = {needed} earlier calls, not {}",
                    self.window
                ),
            ));
        }
        Ok(LoopDetection {
            window: self.window,
            warn_at: self.warn_at,
            block_at: self.block_at,
        })
    }
}

#[middleware(crate = crate, live_stream, state = RecentCalls)]
impl LoopDetection {
    /// Numbers the answer's calls; blocks those repeated too often, marks those to warn about.
    #[hook(after_model)]
    fn detect(&self, cx: &mut Context, recent: &mut RecentCalls, response: &mut ModelResponse) {
        recent.warned.clear();
        for call in &response.message.tool_calls {
            let key = call_key(&call.name, &call.arguments);
            let earlier = recent.keys.iter().filter(|seen| **seen == key).count();
            let number = u32::try_from(earlier + 1).unwrap_or(u32::MAX);
            recent.keys.push_back(key);
            if recent.keys.len() > self.window {
                recent.keys.pop_front();
            }
            if number >= self.block_at {
                tracing::warn!(tool = %call.name, call_id = %call.id, number, "repeated tool call blocked");
                cx.answer_tool_call(ToolResult::error(
                    &call.id,
                    format!(
                        "This call of `{}` was not run: it is the {} time you make exactly this \
                         call, with the same arguments. Stop repeating it: use the results you \
                         already have, change the arguments, or answer.",
                        call.name,
                        ordinal(number),
                    ),
                ));
            } else if number >= self.warn_at {
                tracing::debug!(tool = %call.name, call_id = %call.id, number, "repeated tool call");
                recent.warned.push((call.id.clone(), number));
            }
        }
    }

    /// Adds the warning to the result of a repeated call.
    #[hook(wrap_tool_call)]
    async fn warn(
        &self,
        cx: ToolContext<'_>,
        recent: &RecentCalls,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let number = recent
            .warned
            .iter()
            .find(|(id, _)| *id == call.id)
            .map(|&(_, number)| number);
        let name = number.map(|_| call.name.clone());
        let mut result = next.call(cx, call).await;
        if let (Some(number), Some(name)) = (number, name)
            && !result.is_paused()
        {
            result.content.push_text(format!(
                "\n\n[Note: this is the {} time you made exactly this call of `{name}` with the \
                 same arguments. Do not repeat it: use this result, change the arguments, or \
                 answer.]",
                ordinal(number),
            ));
        }
        Ok(result)
    }
}

/// `2nd`, `3rd`, `11th`…
fn ordinal(number: u32) -> String {
    let suffix = match (number % 10, number % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{number}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::ordinal;

    #[test]
    fn ordinals() {
        let all = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal);
        assert_eq!(
            all,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }
}
