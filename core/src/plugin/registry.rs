//! [`PluginRegistry`]: factories that make plugins from a configuration read at run time.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

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
/// that runs their middleware at its position of a static chain. What happens to a factory
/// that fails (an error, a panic, or a plugin the member cannot run) depends on how it was
/// registered:
///
/// - **Optional** ([`register`](Self::register), [`register_fallible`](Self::register_fallible)):
///   its plugin is left out and the failure logged at `WARN` (a [`FactoryError`]): a broken
///   optional plugin never stops the agent.
/// - **Required** ([`register_required`](Self::register_required)), for a plugin the agent
///   must not run without (a redaction, an approval): its failure is an error.
///   [`try_build`](Self::try_build) returns it; [`build`](Self::build) logs it at `ERROR` and
///   returns a member that fails every run at its first hook
///   ([`PluginError::Required`](super::PluginError::Required)), before any model or tool is
///   called: it fails closed, never silently without the plugin.
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
    factories: Vec<Registered<C>>,
}

/// A factory, its name, and whether its plugin is required.
struct Registered<C: ?Sized> {
    name: String,
    factory: Factory<C>,
    required: bool,
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
            .entries(self.factories.iter().map(|registered| &registered.name))
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
        self.push(name.into(), factory, false)
    }

    /// Registers the factory of a plugin the agent must not run without (a redaction, an
    /// approval): if it fails (an error, a panic, or a plugin the member cannot run), the
    /// plugins are not made — [`try_build`](Self::try_build) returns the error, and
    /// [`build`](Self::build) a member that fails every run. `Ok(None)` still opts out: the
    /// configuration turned the plugin off, which is no failure.
    ///
    /// ```
    /// use hookchain::plugin::{FactoryError, PluginRegistry};
    /// # use hookchain::prelude::*;
    /// # use hookchain::hook;
    /// # #[hook(before_model)]
    /// # fn redact(_request: &mut ModelRequest) {}
    ///
    /// struct Settings {
    ///     licence: Option<String>,
    /// }
    ///
    /// let mut registry = PluginRegistry::<Settings>::new();
    /// registry.register_required("redact", |settings| match &settings.licence {
    ///     Some(_) => Ok(Some(redact)),
    ///     None => Err("no licence for the redaction plugin"),
    /// });
    ///
    /// let plugins = registry.try_build(&Settings { licence: Some("key".into()) })?;
    /// assert_eq!(plugins.names().collect::<Vec<_>>(), ["redact"]);
    ///
    /// let error = registry.try_build(&Settings { licence: None }).unwrap_err();
    /// assert!(matches!(error, FactoryError::Failed { .. }));
    /// # Ok::<(), FactoryError>(())
    /// ```
    pub fn register_required<M, E, F>(&mut self, name: impl Into<String>, factory: F) -> &mut Self
    where
        M: Middleware + 'static,
        E: Into<BoxError>,
        F: Fn(&C) -> Result<Option<M>, E> + Send + Sync + 'static,
    {
        self.push(name.into(), factory, true)
    }

    fn push<M, E, F>(&mut self, name: String, factory: F, required: bool) -> &mut Self
    where
        M: Middleware + 'static,
        E: Into<BoxError>,
        F: Fn(&C) -> Result<Option<M>, E> + Send + Sync + 'static,
    {
        let factory: Factory<C> = Box::new(move |config: &C| match factory(config) {
            Ok(plugin) => Ok(plugin.map(|plugin| Box::new(plugin) as Box<dyn DynMiddleware>)),
            Err(error) => Err(error.into()),
        });
        self.factories.push(Registered {
            name,
            factory,
            required,
        });
        self
    }

    /// The names of the registered factories, in order.
    pub fn factories(&self) -> impl Iterator<Item = &str> {
        self.factories
            .iter()
            .map(|registered| registered.name.as_str())
    }

    /// Runs every factory on `config`, in registration order, and makes the member running
    /// their plugins in that order. A factory returning `None` is left out (logged at
    /// `DEBUG`); an optional one that fails or panics, or whose plugin does not fit in the
    /// member ([`Plugins::CAPACITY`]), is left out and logged at `WARN`.
    ///
    /// A [required](Self::register_required) one that fails is logged at `ERROR`, and the
    /// member returned fails every run at its first hook with
    /// [`PluginError::Required`](super::PluginError::Required) (no model or tool is called
    /// through it); [`try_build`](Self::try_build) returns the failure instead.
    pub fn build(&self, config: &C) -> Plugins {
        self.build_member(config)
    }

    /// [`build`](Self::build), or the failure of the first [required](Self::register_required)
    /// factory that fails (the factories after it are not run). Optional factories that fail
    /// are left out and logged, as by `build`.
    pub fn try_build(&self, config: &C) -> Result<Plugins, FactoryError> {
        self.try_build_member(config)
    }

    /// [`build`](Self::build), for a member whose plugins have no per-event hook (the model's
    /// answers are then not streamed because of it, see [`PluginMember`]): a plugin with one
    /// is left out and logged at `WARN` too (a required one is a failure).
    pub fn build_without_events(&self, config: &C) -> PluginsWithoutEvents {
        self.build_member(config)
    }

    /// [`try_build`](Self::try_build), for a member whose plugins have no per-event hook (see
    /// [`build_without_events`](Self::build_without_events)).
    pub fn try_build_without_events(
        &self,
        config: &C,
    ) -> Result<PluginsWithoutEvents, FactoryError> {
        self.try_build_member(config)
    }

    fn build_member<const EVENTS: bool>(&self, config: &C) -> PluginMember<EVENTS> {
        self.try_build_member(config).unwrap_or_else(|failure| {
            tracing::error!(
                factory = failure.factory(),
                error = %Report(&failure),
                "a required plugin could not be made: every run through these plugins fails"
            );
            PluginMember::refusing(Arc::new(failure))
        })
    }

    fn try_build_member<const EVENTS: bool>(
        &self,
        config: &C,
    ) -> Result<PluginMember<EVENTS>, FactoryError> {
        let mut plugins = PluginMember::<EVENTS>::default();
        for registered in &self.factories {
            let (name, factory) = (&registered.name, &registered.factory);
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
            if registered.required {
                return Err(failure);
            }
            tracing::warn!(
                factory = %name,
                error = %Report(&failure),
                "plugin left out"
            );
        }
        Ok(plugins)
    }
}
