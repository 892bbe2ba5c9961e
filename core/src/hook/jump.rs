//! Where a hook may send the run: the jump targets, and the jumps a middleware declares.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Hook;

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
/// `before_model` end the run, and no other hook. Only the hooks that return a [`Flow`](crate::Flow) can
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

/// The hooks that return a [`Flow`](crate::Flow), in the order their pairs are stored.
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
    /// If `hook` cannot jump (a wrap hook or `after_agent`: they return no [`Flow`](crate::Flow)). In a
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
