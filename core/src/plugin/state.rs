//! The states of a [`Plugins`](super::Plugins) member: one per plugin, type-erased, saved in
//! checkpoints as JSON under the plugin's name.
//!
//! A fresh run (or thread) creates each plugin's state with `Default`. A state read back from a
//! checkpoint is JSON until the member's first hook on the model path decodes it, once, with
//! the plugin's own type (the tool path, whose state is read-only, decodes a copy if it comes
//! first). The plugins' names are saved beside their states: a checkpoint or thread whose
//! plugins were not these, in this order, is refused ([`PluginError::Changed`]).

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use serde::ser::{Error as _, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::adapter::DynMiddleware;
use super::error::PluginError;
use crate::error::Error;
use crate::middleware::{Hook, MiddlewareState};

/// A plugin's run or thread state, its type erased: what the plugin downcasts to its own, and
/// what a checkpoint serializes.
#[doc(hidden)]
pub trait ErasedState: Send + Sync {
    /// As `Any`, for the plugin to downcast.
    fn as_any(&self) -> &dyn Any;
    /// As `Any`, for the plugin to downcast.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The state as JSON (for a checkpoint).
    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error>;
    /// A copy, for thread states (a run works on a copy of the thread's); `None` for run
    /// states, which need not be `Clone`.
    fn clone_boxed(&self) -> Option<Box<dyn ErasedState>>;
}

/// A plugin's run-scoped state, boxed.
pub(crate) struct RunScoped<T>(pub(crate) T);

/// A plugin's thread-scoped state, boxed (copied with its `Clone`).
pub(crate) struct ThreadScoped<T>(pub(crate) T);

impl<T: MiddlewareState> ErasedState for RunScoped<T> {
    fn as_any(&self) -> &dyn Any {
        &self.0
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        &mut self.0
    }

    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(&self.0)
    }

    fn clone_boxed(&self) -> Option<Box<dyn ErasedState>> {
        None
    }
}

impl<T: MiddlewareState + Clone> ErasedState for ThreadScoped<T> {
    fn as_any(&self) -> &dyn Any {
        &self.0
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        &mut self.0
    }

    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(&self.0)
    }

    fn clone_boxed(&self) -> Option<Box<dyn ErasedState>> {
        Some(Box::new(ThreadScoped(self.0.clone())))
    }
}

/// Which of a plugin's states a [`PluginStates`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Run,
    Thread,
}

impl Scope {
    fn fresh(self, plugin: &dyn DynMiddleware) -> Box<dyn ErasedState> {
        match self {
            Scope::Run => plugin.new_state(),
            Scope::Thread => plugin.new_thread_state(),
        }
    }

    fn decode(
        self,
        plugin: &dyn DynMiddleware,
        saved: serde_json::Value,
    ) -> Result<Box<dyn ErasedState>, serde_json::Error> {
        match self {
            Scope::Run => plugin.decode_state(saved),
            Scope::Thread => plugin.decode_thread_state(saved),
        }
    }
}

/// The run-scoped or thread-scoped states of the plugins of a [`Plugins`](super::Plugins)
/// member, in the plugins' order. Serialized as `null` before the plugins' first hook, then as
/// `[{"plugin": name, "state": ..}, ..]`.
#[derive(Default)]
pub struct PluginStates {
    slots: Option<Vec<Slot>>,
    /// Whether the slots are known to be the plugins' and all live: set by the first
    /// [`prepare`](Self::prepare), after which it costs nothing (the plugins of a member never
    /// change). Not saved: states read back are checked again.
    ready: bool,
}

pub(crate) struct Slot {
    plugin: Cow<'static, str>,
    state: Held,
}

impl Slot {
    /// The plugin's state, once [`PluginStates::prepare`] made it live; an error (never a
    /// panic) otherwise.
    pub(crate) fn live(
        &mut self,
        plugin: &'static str,
        hook: Hook,
    ) -> Result<&mut dyn ErasedState, Error> {
        match &mut self.state {
            Held::Live(state) => Ok(&mut **state),
            Held::Saved(_) => Err(state_mismatch(plugin, hook)),
        }
    }
}

enum Held {
    /// Decoded (or created), ready for the plugin's hooks.
    Live(Box<dyn ErasedState>),
    /// As read from a checkpoint, not decoded yet.
    Saved(serde_json::Value),
}

impl Clone for PluginStates {
    fn clone(&self) -> Self {
        let slots = self.slots.as_ref().map(|slots| {
            slots
                .iter()
                .map(|slot| Slot {
                    plugin: slot.plugin.clone(),
                    state: match &slot.state {
                        Held::Live(state) => match state.clone_boxed() {
                            Some(copy) => Held::Live(copy),
                            // A run state is never copied by the agent; should one be, its
                            // JSON form is an exact copy, decoded when next used.
                            None => Held::Saved(state.to_json().unwrap_or_default()),
                        },
                        Held::Saved(saved) => Held::Saved(saved.clone()),
                    },
                })
                .collect()
        });
        PluginStates {
            slots,
            ready: false,
        }
    }
}

impl fmt::Debug for PluginStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.slots {
            None => f.write_str("PluginStates(fresh)"),
            Some(slots) => f
                .debug_list()
                .entries(slots.iter().map(|slot| &slot.plugin))
                .finish(),
        }
    }
}

#[derive(Serialize)]
struct SlotOut<'a> {
    plugin: &'a str,
    state: serde_json::Value,
}

#[derive(Deserialize)]
struct SlotIn {
    plugin: String,
    state: serde_json::Value,
}

impl Serialize for PluginStates {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(slots) = &self.slots else {
            return serializer.serialize_none();
        };
        let mut seq = serializer.serialize_seq(Some(slots.len()))?;
        for slot in slots {
            let state = match &slot.state {
                Held::Live(state) => state.to_json().map_err(S::Error::custom)?,
                Held::Saved(saved) => saved.clone(),
            };
            seq.serialize_element(&SlotOut {
                plugin: &slot.plugin,
                state,
            })?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for PluginStates {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let slots = Option::<Vec<SlotIn>>::deserialize(deserializer)?;
        Ok(PluginStates {
            slots: slots.map(|slots| {
                slots
                    .into_iter()
                    .map(|slot| Slot {
                        plugin: Cow::Owned(slot.plugin),
                        state: Held::Saved(slot.state),
                    })
                    .collect()
            }),
            ready: false,
        })
    }
}

/// A plugin's state as a hook on the tool path reads it: the live one, or a copy decoded for
/// this call.
pub(crate) enum Viewed<'a> {
    Borrowed(&'a dyn ErasedState),
    Owned(Box<dyn ErasedState>),
}

impl Viewed<'_> {
    pub(crate) fn get(&self) -> &dyn ErasedState {
        match self {
            Viewed::Borrowed(state) => *state,
            Viewed::Owned(state) => &**state,
        }
    }
}

impl PluginStates {
    /// The states, one per plugin of `plugins`, ready for their hooks: created on the first
    /// hook of a run (or thread), decoded on the first after a resume.
    pub(crate) fn prepare(
        &mut self,
        plugins: &[Box<dyn DynMiddleware>],
        scope: Scope,
        hook: Hook,
    ) -> Result<&mut [Slot], Error> {
        if !self.ready {
            self.make_ready(plugins, scope, hook)?;
        }
        match &mut self.slots {
            Some(slots) => Ok(slots),
            None => Err(state_mismatch(super::Plugins::NAME, hook)),
        }
    }

    /// Creates the states (a fresh run or thread), or checks and decodes those read back.
    fn make_ready(
        &mut self,
        plugins: &[Box<dyn DynMiddleware>],
        scope: Scope,
        hook: Hook,
    ) -> Result<(), Error> {
        let slots = self.slots.get_or_insert_with(|| {
            plugins
                .iter()
                .map(|plugin| Slot {
                    plugin: Cow::Borrowed(plugin.name()),
                    state: Held::Live(scope.fresh(&**plugin)),
                })
                .collect()
        });
        same_plugins(slots, plugins, hook)?;
        for (slot, plugin) in slots.iter_mut().zip(plugins) {
            if let Held::Saved(saved) = &mut slot.state {
                let saved = std::mem::take(saved);
                slot.state = Held::Live(decoded(scope, &**plugin, saved, hook)?);
            }
        }
        self.ready = true;
        Ok(())
    }

    /// The states for a hook on the tool path (read-only): the live ones, or copies created or
    /// decoded for this call when the tool path comes first after a resume.
    pub(crate) fn view(
        &self,
        plugins: &[Box<dyn DynMiddleware>],
        scope: Scope,
    ) -> Result<Vec<Viewed<'_>>, Error> {
        let Some(slots) = &self.slots else {
            return Ok(plugins
                .iter()
                .map(|plugin| Viewed::Owned(scope.fresh(&**plugin)))
                .collect());
        };
        if !self.ready {
            same_plugins(slots, plugins, Hook::WrapToolCall)?;
        }
        slots
            .iter()
            .zip(plugins)
            .map(|(slot, plugin)| match &slot.state {
                Held::Live(state) => Ok(Viewed::Borrowed(&**state)),
                Held::Saved(saved) => {
                    decoded(scope, &**plugin, saved.clone(), Hook::WrapToolCall).map(Viewed::Owned)
                }
            })
            .collect()
    }
}

/// A saved state decoded by its plugin; an error naming the plugin if it does not decode.
fn decoded(
    scope: Scope,
    plugin: &dyn DynMiddleware,
    saved: serde_json::Value,
    hook: Hook,
) -> Result<Box<dyn ErasedState>, Error> {
    scope.decode(plugin, saved).map_err(|source| {
        Error::middleware(
            plugin.name(),
            hook,
            PluginError::State {
                plugin: plugin.name(),
                source,
            },
        )
    })
}

/// Refuses states saved by other plugins than `plugins` (another set, or another order).
fn same_plugins(
    slots: &[Slot],
    plugins: &[Box<dyn DynMiddleware>],
    hook: Hook,
) -> Result<(), Error> {
    let same = slots.len() == plugins.len()
        && slots
            .iter()
            .zip(plugins)
            .all(|(slot, plugin)| slot.plugin == plugin.name());
    if same {
        return Ok(());
    }
    Err(Error::middleware(
        super::Plugins::NAME,
        hook,
        PluginError::Changed {
            saved: slots.iter().map(|slot| slot.plugin.to_string()).collect(),
            current: plugins
                .iter()
                .map(|plugin| plugin.name().to_owned())
                .collect(),
        },
    ))
}

/// The error of a state that is not the plugin's own type (a bug, reported rather than a panic).
pub(crate) fn state_mismatch(plugin: &'static str, hook: Hook) -> Error {
    Error::middleware(plugin, hook, PluginError::StateMismatch { plugin })
}
