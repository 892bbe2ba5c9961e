//! What can go wrong with plugins.

use std::sync::Arc;

use crate::error::BoxError;

/// An error of the [`Plugins`](super::Plugins) member or of one of its plugins' states; a run
/// fails with it as the cause of an [`Error::Middleware`](crate::Error::Middleware).
///
/// An optional factory's failure is not among them: it is logged and the plugin left out (see
/// [`PluginRegistry::build`](super::PluginRegistry::build)); [`FactoryError`] is what the log
/// says. A required one's is: [`Required`](Self::Required).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The states saved in a checkpoint (or kept by a thread) are of other plugins than this
    /// agent's, or in another order: a run resumes only with the plugins it paused with.
    #[error(
        "the plugins changed: the checkpoint (or thread) was saved with [{}], this agent has [{}]",
        .saved.join(", "),
        .current.join(", ")
    )]
    Changed {
        /// The plugins the states were saved with, in order.
        saved: Vec<String>,
        /// This agent's plugins, in order.
        current: Vec<String>,
    },
    /// A plugin's saved state does not decode as its state type (its type changed since).
    #[error("the saved state of the plugin `{plugin}` does not decode")]
    State {
        /// The plugin.
        plugin: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A plugin was handed a state of another type (a bug in hookchain).
    #[error("the plugin `{plugin}` was handed a state of another type")]
    StateMismatch {
        /// The plugin.
        plugin: &'static str,
    },
    /// A [required](super::PluginRegistry::register_required) plugin could not be made when
    /// the member was [built](super::PluginRegistry::build): the member refuses to run
    /// without it.
    #[error(
        "the required plugin of the factory `{factory}` could not be made: the plugins do not \
         run without it"
    )]
    Required {
        /// The factory's name, as registered.
        factory: String,
        /// Why it could not be made.
        #[source]
        source: Arc<FactoryError>,
    },
}

/// Why a factory made no plugin: as [`PluginRegistry::build`](super::PluginRegistry::build)
/// logs it (at `WARN`) before going on without an optional plugin, and as
/// [`try_build`](super::PluginRegistry::try_build) returns it for a
/// [required](super::PluginRegistry::register_required) one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FactoryError {
    /// The factory returned an error.
    #[error("the plugin factory `{factory}` failed")]
    Failed {
        /// The factory's name, as registered.
        factory: String,
        /// Its error.
        #[source]
        source: BoxError,
    },
    /// The factory panicked.
    #[error("the plugin factory `{factory}` panicked: {message}")]
    Panicked {
        /// The factory's name, as registered.
        factory: String,
        /// The panic's message.
        message: String,
    },
    /// The plugin has a per-event hook and the member is a
    /// [`PluginsWithoutEvents`](super::PluginsWithoutEvents), which does not run them.
    #[error(
        "the plugin `{plugin}` of the factory `{factory}` has a per-event hook \
         (`on_model_event`), which `PluginsWithoutEvents` does not run"
    )]
    PerEvent {
        /// The factory's name, as registered.
        factory: String,
        /// The plugin it made.
        plugin: &'static str,
    },
    /// The plugins made so far already take every position a [`Plugins`](super::Plugins)
    /// member has ([`Plugins::CAPACITY`](super::Plugins::CAPACITY)).
    #[error(
        "the plugin `{plugin}` of the factory `{factory}` takes {len} position(s) and only \
         {left} of {capacity} are left"
    )]
    Full {
        /// The factory's name, as registered.
        factory: String,
        /// The plugin it made.
        plugin: &'static str,
        /// The positions the plugin takes (1 for a middleware, its members for a chain).
        len: usize,
        /// The positions left.
        left: usize,
        /// All positions of the member.
        capacity: usize,
    },
}

impl FactoryError {
    /// The name of the factory that failed, as registered.
    #[must_use]
    pub fn factory(&self) -> &str {
        match self {
            FactoryError::Failed { factory, .. }
            | FactoryError::Panicked { factory, .. }
            | FactoryError::PerEvent { factory, .. }
            | FactoryError::Full { factory, .. } => factory,
        }
    }
}
