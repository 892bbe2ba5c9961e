//! The names of the middleware's vocabulary: the seven hooks, the set of hooks a middleware
//! implements, and where a hook may jump. Plain values, below every layer that names them (the
//! run's error names a hook and a jump; an interrupt, the hook that raised it).

mod jump;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use jump::{Jump, JumpSet};

/// One of the seven hooks of a [`Middleware`](crate::Middleware).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Hook {
    /// Once per run, before the first model call (chain order).
    BeforeAgent,
    /// Before every model call (chain order).
    BeforeModel,
    /// Around every model call (first listed = outermost).
    WrapModelCall,
    /// On every event of a model call's answer, as it arrives (reverse chain order: the last
    /// listed sees the model's events first).
    OnModelEvent,
    /// After every model call (reverse chain order).
    AfterModel,
    /// Around every tool call (first listed = outermost).
    WrapToolCall,
    /// Once per run, at its end (reverse chain order).
    AfterAgent,
}

impl Hook {
    /// Every hook, in the order they first run in a step.
    pub const ALL: [Hook; 7] = [
        Hook::BeforeAgent,
        Hook::BeforeModel,
        Hook::WrapModelCall,
        Hook::OnModelEvent,
        Hook::AfterModel,
        Hook::WrapToolCall,
        Hook::AfterAgent,
    ];

    /// The hook's name as written in `#[hook(..)]`, e.g. `"before_model"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Hook::BeforeAgent => "before_agent",
            Hook::BeforeModel => "before_model",
            Hook::WrapModelCall => "wrap_model_call",
            Hook::OnModelEvent => "on_model_event",
            Hook::AfterModel => "after_model",
            Hook::WrapToolCall => "wrap_tool_call",
            Hook::AfterAgent => "after_agent",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Hook`]s, usable in constants.
///
/// [`Middleware::HOOKS`](crate::Middleware::HOOKS) tells the chain which hooks a middleware
/// implements; the chain does not call the others, so an absent hook costs nothing.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HookSet(u8);

impl HookSet {
    /// No hook.
    pub const NONE: HookSet = HookSet(0);
    /// Every hook.
    pub const ALL: HookSet = HookSet(0b111_1111);

    /// The set holding only `hook`.
    #[must_use]
    pub const fn of(hook: Hook) -> HookSet {
        HookSet(hook.bit())
    }

    /// This set plus `hook`.
    #[must_use]
    pub const fn with(self, hook: Hook) -> HookSet {
        HookSet(self.0 | hook.bit())
    }

    /// The hooks in either set.
    #[must_use]
    pub const fn union(self, other: HookSet) -> HookSet {
        HookSet(self.0 | other.0)
    }

    /// The hooks in both sets.
    #[must_use]
    pub const fn intersection(self, other: HookSet) -> HookSet {
        HookSet(self.0 & other.0)
    }

    /// The hooks in this set and not in `other`.
    #[must_use]
    pub const fn difference(self, other: HookSet) -> HookSet {
        HookSet(self.0 & !other.0)
    }

    /// Whether `hook` is in the set.
    #[must_use]
    pub const fn contains(self, hook: Hook) -> bool {
        self.0 & hook.bit() != 0
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The hooks in the set, in [`Hook::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Hook> {
        Hook::ALL
            .into_iter()
            .filter(move |hook| self.contains(*hook))
    }
}

impl fmt::Debug for HookSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
