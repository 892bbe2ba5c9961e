//! What a sequential hook tells the agent loop to do next.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Hook;
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
    /// Jump elsewhere in the loop. The middleware must declare the target for the hook that
    /// returns the jump, in [`Middleware::JUMPS`](super::Middleware::JUMPS) (with the macros:
    /// `#[hook(before_model, jumps = [end])]`); else the run fails with
    /// [`Error::UndeclaredJump`](crate::Error::UndeclaredJump).
    Jump(Jump),
    /// Pause the run for outside input (from `before_model` and `after_model`); see
    /// [`interrupt`](crate::interrupt).
    Interrupt(Box<Interruption>),
}

impl Flow {
    /// Whether this is [`Flow::Continue`].
    #[must_use]
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
#[non_exhaustive]
pub enum Jump {
    /// To the model call.
    Model,
    /// To the tool calls.
    Tools,
    /// To the end of the run.
    End,
}

impl Jump {
    /// Every target.
    pub const ALL: [Jump; 3] = [Jump::Model, Jump::Tools, Jump::End];
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

/// The jumps a middleware may make, as (hook, target) pairs, usable in constants.
///
/// A declaration belongs to one hook: `JumpSet::of(Hook::BeforeModel, Jump::End)` lets
/// `before_model` end the run, and no other hook. Only the hooks that return a [`Flow`] can
/// jump — `before_agent`, `before_model` and `after_model` — so the set holds at most nine pairs.
///
/// ```
/// use hookchain::middleware::{Hook, Jump, JumpSet};
///
/// const JUMPS: JumpSet = JumpSet::of(Hook::BeforeModel, Jump::End).with(Hook::AfterModel, Jump::Model);
/// assert!(JUMPS.contains(Hook::BeforeModel, Jump::End));
/// assert!(!JUMPS.contains(Hook::AfterModel, Jump::End));
/// assert_eq!(format!("{JUMPS:?}"), "{before_model -> end, after_model -> model}");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JumpSet(u16);

/// The hooks that return a [`Flow`], in the order their pairs are stored.
const JUMPING_HOOKS: [Hook; 3] = [Hook::BeforeAgent, Hook::BeforeModel, Hook::AfterModel];

impl JumpSet {
    /// No jumps.
    pub const NONE: JumpSet = JumpSet(0);
    /// Every target, from every hook that can jump.
    pub const ALL: JumpSet = JumpSet(0b1_1111_1111);

    /// The bit of the pair, or `None` for a hook that cannot jump (it returns no `Flow`).
    const fn bit(hook: Hook, target: Jump) -> Option<u16> {
        let row = match hook {
            Hook::BeforeAgent => 0,
            Hook::BeforeModel => 1,
            Hook::AfterModel => 2,
            Hook::WrapModelCall | Hook::OnModelEvent | Hook::WrapToolCall | Hook::AfterAgent => {
                return None;
            }
        };
        Some(1 << (row * 3 + target as u16))
    }

    /// The set holding only `target` from `hook`.
    ///
    /// # Panics
    ///
    /// If `hook` cannot jump (a wrap hook or `after_agent`: they return no [`Flow`]). In a
    /// constant, as jump sets are meant to be written, that is a compile error.
    #[must_use]
    pub const fn of(hook: Hook, target: Jump) -> JumpSet {
        JumpSet::NONE.with(hook, target)
    }

    /// This set plus `target` from `hook`.
    ///
    /// # Panics
    ///
    /// If `hook` cannot jump, as for [`JumpSet::of`].
    #[must_use]
    pub const fn with(self, hook: Hook, target: Jump) -> JumpSet {
        match JumpSet::bit(hook, target) {
            Some(bit) => JumpSet(self.0 | bit),
            // A declaration that can never be used is a mistake, not something to ignore.
            None => panic!(
                "only `before_agent`, `before_model` and `after_model` return a `Flow`, so only \
                 they can jump"
            ),
        }
    }

    /// The pairs in either set.
    #[must_use]
    pub const fn union(self, other: JumpSet) -> JumpSet {
        JumpSet(self.0 | other.0)
    }

    /// Whether `hook` may jump to `target` (always `false` for a hook that cannot jump).
    #[must_use]
    pub const fn contains(self, hook: Hook, target: Jump) -> bool {
        match JumpSet::bit(hook, target) {
            Some(bit) => self.0 & bit != 0,
            None => false,
        }
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The pairs in the set, by hook in [`Hook::ALL`] order, then by target in [`Jump::ALL`]
    /// order.
    pub fn iter(self) -> impl Iterator<Item = (Hook, Jump)> {
        JUMPING_HOOKS
            .into_iter()
            .flat_map(|hook| Jump::ALL.into_iter().map(move |target| (hook, target)))
            .filter(move |(hook, target)| self.contains(*hook, *target))
    }
}

impl fmt::Debug for JumpSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// One pair, shown as `before_model -> end`.
        struct Pair(Hook, Jump);
        impl fmt::Debug for Pair {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} -> {}", self.0, self.1)
            }
        }
        f.debug_set()
            .entries(self.iter().map(|(hook, target)| Pair(hook, target)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_holds_every_target_from_every_hook_that_can_jump() {
        assert_eq!(JumpSet::ALL.iter().count(), 9);
        for hook in JUMPING_HOOKS {
            for target in Jump::ALL {
                assert!(JumpSet::ALL.contains(hook, target));
                assert!(!JumpSet::NONE.contains(hook, target));
                assert_eq!(
                    JumpSet::of(hook, target).iter().collect::<Vec<_>>(),
                    [(hook, target)]
                );
            }
        }
    }

    #[test]
    fn hooks_that_return_no_flow_hold_no_jump() {
        for hook in [Hook::WrapModelCall, Hook::WrapToolCall, Hook::AfterAgent] {
            assert!(!JumpSet::ALL.contains(hook, Jump::End));
        }
    }

    #[test]
    #[should_panic(expected = "only `before_agent`, `before_model` and `after_model`")]
    fn declaring_a_jump_for_a_hook_that_cannot_jump_is_a_mistake() {
        let _ = JumpSet::of(Hook::AfterAgent, Jump::End);
    }
}
