//! [`PluginRegistry`]: factories that make plugins from a configuration read at run time.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::adapter::DynMiddleware;
use super::error::FactoryError;
use super::member::{CAPACITY, PluginMember, Plugins, PluginsWithoutEvents, Refused};
use crate::error::{BoxError, Report};
use crate::middleware::Middleware;

/// A registered factory, erased.
type Factory<C> = Box<dyn Fn(&C) -> Result<Option<Box<dyn DynMiddleware>>, BoxError> + Send + Sync>;

/// Factories of plugins (protoLabs ADR 0032's `register_middleware(factory)`): each makes a
/// middleware from a configuration `C` read at run time, or opts out with `None`.
///
/// [`build`](Self::build) runs them in registration order and makes the [`Plugins`] member
/// that runs their middleware at its position of a static chain. A factory that fails (an
/// error, or a panic) is left out and logged at `WARN` (a [`FactoryError`]): a broken plugin
/// never stops the agent from being built.
///
/// ```
/// use hookchain::plugin::PluginRegistry;
/// # use hookchain::prelude::*;
/// # use hookchain::hook;
/// # #[hook(before_model)]
/// # fn audit(_request: &mut ModelRequest) {}
///
/// struct Settings {
///     audit: bool,
/// }
///
/// let mut registry = PluginRegistry::<Settings>::new();
/// registry.register("audit", |settings| settings.audit.then_some(audit));
/// let plugins = registry.build(&Settings { audit: true });
/// assert_eq!(plugins.names().collect::<Vec<_>>(), ["audit"]);
/// ```
pub struct PluginRegistry<C: ?Sized> {
    factories: Vec<(String, Factory<C>)>,
}

impl<C: ?Sized> Default for PluginRegistry<C> {
    fn default() -> Self {
        PluginRegistry {
            factories: Vec::new(),
        }
    }
}

impl<C: ?Sized> std::fmt::Debug for PluginRegistry<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.factories.iter().map(|(name, _)| name))
            .finish()
    }
}

impl<C: ?Sized> PluginRegistry<C> {
    /// A registry with no factories.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `factory` under `name` (what the log calls it): it makes a middleware from
    /// the configuration, or `None` to opt out.
    pub fn register<M, F>(&mut self, name: impl Into<String>, factory: F) -> &mut Self
    where
        M: Middleware + 'static,
        F: Fn(&C) -> Option<M> + Send + Sync + 'static,
    {
        self.register_fallible(name, move |config: &C| {
            Ok::<_, std::convert::Infallible>(factory(config))
        })
    }

    /// Registers a factory that may fail: an error leaves its plugin out, logged at `WARN`.
    pub fn register_fallible<M, E, F>(&mut self, name: impl Into<String>, factory: F) -> &mut Self
    where
        M: Middleware + 'static,
        E: Into<BoxError>,
        F: Fn(&C) -> Result<Option<M>, E> + Send + Sync + 'static,
    {
        let factory: Factory<C> = Box::new(move |config: &C| match factory(config) {
            Ok(plugin) => Ok(plugin.map(|plugin| Box::new(plugin) as Box<dyn DynMiddleware>)),
            Err(error) => Err(error.into()),
        });
        self.factories.push((name.into(), factory));
        self
    }

    /// The names of the registered factories, in order.
    pub fn factories(&self) -> impl Iterator<Item = &str> {
        self.factories.iter().map(|(name, _)| name.as_str())
    }

    /// Runs every factory on `config`, in registration order, and makes the member running
    /// their plugins in that order. A factory returning `None` is left out (logged at
    /// `DEBUG`); one that fails or panics, or whose plugin does not fit in the member
    /// ([`Plugins::CAPACITY`]), is left out and logged at `WARN`.
    pub fn build(&self, config: &C) -> Plugins {
        self.build_member(config)
    }

    /// [`build`](Self::build), for a member whose plugins have no per-event hook (the model's
    /// answers are then not streamed because of it, see [`PluginMember`]): a plugin with one
    /// is left out and logged at `WARN` too.
    pub fn build_without_events(&self, config: &C) -> PluginsWithoutEvents {
        self.build_member(config)
    }

    fn build_member<const EVENTS: bool>(&self, config: &C) -> PluginMember<EVENTS> {
        let mut plugins = PluginMember::<EVENTS>::default();
        for (name, factory) in &self.factories {
            let made = catch_unwind(AssertUnwindSafe(|| factory(config)));
            let failure = match made {
                Ok(Ok(Some(plugin))) => {
                    let (plugin_name, len) = (plugin.name(), plugin.positions());
                    match plugins.push(plugin) {
                        Ok(()) => {
                            tracing::debug!(factory = %name, plugin = plugin_name, "plugin added");
                            continue;
                        }
                        Err(Refused::Full { left }) => FactoryError::Full {
                            factory: name.clone(),
                            plugin: plugin_name,
                            len,
                            left,
                            capacity: CAPACITY,
                        },
                        Err(Refused::PerEvent) => FactoryError::PerEvent {
                            factory: name.clone(),
                            plugin: plugin_name,
                        },
                    }
                }
                Ok(Ok(None)) => {
                    tracing::debug!(factory = %name, "plugin factory opted out");
                    continue;
                }
                Ok(Err(source)) => FactoryError::Failed {
                    factory: name.clone(),
                    source,
                },
                Err(payload) => FactoryError::Panicked {
                    factory: name.clone(),
                    message: crate::tool::panic_message(payload.as_ref()),
                },
            };
            tracing::warn!(
                factory = %name,
                error = %Report(&failure),
                "plugin left out"
            );
        }
        plugins
    }
}
