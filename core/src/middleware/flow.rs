//! What a sequential hook tells the agent loop to do next.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::interrupt::Interruption;
use crate::model::ModelResponse;

/// The outcome of a `before_agent`, `before_model` or `after_model` hook.
///
/// | returned from  | `Continue`      | `Respond(r)`                                  | `Jump(..)`              |
/// |----------------|-----------------|-----------------------------------------------|-------------------------|
/// | `before_agent` | next hook       | `r` stands in for the first model call        | see [`Jump`]            |
/// | `before_model` | next hook       | skip later `before_model` hooks and the model; `r` is the response | see [`Jump`] |
/// | `after_model`  | next hook       | replace the response with `r`, go on           | see [`Jump`]            |
///
/// `Interrupt` (from `before_model` and `after_model`) pauses the run; see
/// [`interrupt`](crate::interrupt).
///
/// A response that stands in for the model still passes through every `after_model` hook, so
/// output middleware (redaction, validation) sees it like any model answer.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a Flow tells the agent loop what to do; return it from the hook"]
#[non_exhaustive]
pub enum Flow {
    /// Go on as normal.
    Continue,
    /// Use this response instead of calling the model (see [`Flow::respond`]). Boxed: a `Flow`
    /// stays two words, cheap to return from every hook.
    Respond(Box<ModelResponse>),
    /// Jump elsewhere in the loop. The middleware must declare the target in
    /// [`Middleware::JUMPS`](super::Middleware::JUMPS).
    Jump(Jump),
    /// Pause the run for outside input (from `before_model` and `after_model`); see
    /// [`interrupt`](crate::interrupt).
    Interrupt(Box<Interruption>),
}

impl Flow {
    /// Whether this is [`Flow::Continue`].
    pub fn is_continue(&self) -> bool {
        matches!(self, Flow::Continue)
    }

    /// [`Flow::Jump`] to [`Jump::End`].
    pub const fn end() -> Flow {
        Flow::Jump(Jump::End)
    }

    /// [`Flow::Respond`] with `response`.
    pub fn respond(response: ModelResponse) -> Flow {
        Flow::Respond(Box::new(response))
    }

    /// [`Flow::Interrupt`] with `payload`: the run pauses, and resumes when the interrupt is
    /// answered; the hook then reads the answer with
    /// [`Context::resume_value`](crate::Context::resume_value).
    pub fn interrupt(payload: serde_json::Value) -> Flow {
        Flow::Interrupt(Box::new(Interruption::new(payload)))
    }
}

impl From<()> for Flow {
    fn from((): ()) -> Flow {
        Flow::Continue
    }
}

/// A place in the agent loop a hook can jump to.
///
/// - `Model`: call the model now. From `before_model`, later `before_model` hooks are skipped;
///   from `after_model`, the response is kept in the history, later `after_model` hooks and the
///   response's tool calls are skipped (each skipped call gets an error result), and a new step
///   starts.
/// - `Tools`: run the tool calls still waiting for a result in the history (from `before_model`),
///   or go straight to the tools (from `after_model`, skipping later `after_model` hooks).
/// - `End`: end the run. Every `after_agent` hook still runs (in reverse order), and every tool
///   call left in the history gets an error result, so the history never holds a dangling call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jump {
    /// To the model call.
    Model,
    /// To the tool calls.
    Tools,
    /// To the end of the run.
    End,
}

impl Jump {
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Jump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Jump::Model => "model",
            Jump::Tools => "tools",
            Jump::End => "end",
        })
    }
}

/// The [`Jump`] targets a middleware may use, usable in constants.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JumpSet(u8);

impl JumpSet {
    /// No jumps.
    pub const NONE: JumpSet = JumpSet(0);
    /// Every target.
    pub const ALL: JumpSet = JumpSet(0b111);

    /// The set holding only `target`.
    pub const fn of(target: Jump) -> JumpSet {
        JumpSet(target.bit())
    }

    /// This set plus `target`.
    pub const fn with(self, target: Jump) -> JumpSet {
        JumpSet(self.0 | target.bit())
    }

    /// The targets in either set.
    pub const fn union(self, other: JumpSet) -> JumpSet {
        JumpSet(self.0 | other.0)
    }

    /// Whether `target` is in the set.
    pub const fn contains(self, target: Jump) -> bool {
        self.0 & target.bit() != 0
    }
}

impl fmt::Debug for JumpSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(
                [Jump::Model, Jump::Tools, Jump::End]
                    .into_iter()
                    .filter(|target| self.contains(*target)),
            )
            .finish()
    }
}
