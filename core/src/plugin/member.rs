//! [`Plugins`]: the static member that runs the plugins chosen at run time.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;

use super::adapter::{DynMiddleware, has};
use super::error::{FactoryError, PluginError};
use super::onion::{ModelOnion, ToolOnion, relay};
use super::state::{PluginStates, Scope};
use crate::__private::Internal;
use crate::chain::{Description, MemberInfo, MemberList};
use crate::config::ConfigError;
use crate::context::{Context, Enter, Order, ToolContext};
use crate::error::{BoxError, Error};
use crate::interrupt::Answer;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{
    Contributions, Emit, Flow, Hook, HookSet, JumpSet, Middleware, ModelNext, ToolNext, True, phase,
};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

/// A member of a static chain that runs middleware chosen at run time (plugins), in order, at
/// its position in the chain: `chain![Static1, plugins, Static2]`. Name it by its aliases:
/// [`Plugins`] (any plugin) or [`PluginsWithoutEvents`] (no per-event hooks, cheaper).
///
/// `EVENTS` says whether its plugins may have an `on_model_event` hook. A member that may
/// declares the hook, and a chain with a per-event hook has the model stream every answer,
/// also in unstreamed runs (see [`Middleware`]'s docs on streaming): about 15,000 instructions
/// per agent turn of two model calls (`BENCHMARKS.md`), paid even when no plugin has the hook.
/// [`PluginsWithoutEvents`] does not, and refuses plugins with the hook rather than skip them
/// (a redaction on the events skipped would leak what it should have hidden).
///
/// Made by a [`PluginRegistry`](super::PluginRegistry) from its factories, or directly from
/// boxed middleware with [`Plugins::new`]. See the [module docs](super) for how its hooks,
/// states, interrupts and streams behave.
pub struct PluginMember<const EVENTS: bool> {
    plugins: Vec<Box<dyn DynMiddleware>>,
    /// Where each plugin starts among the member's positions in the flattened chain.
    starts: Vec<usize>,
    /// The hooks at least one plugin has: the member's others pass through at once.
    hooks: HookSet,
    /// A required plugin that could not be made: every hook fails with it.
    refused: Option<Arc<FactoryError>>,
}

/// The member running plugins that may have any hook, per-event hooks included (see
/// [`PluginMember`]).
pub type Plugins = PluginMember<true>;

/// The member running plugins without per-event hooks: the model's answers are not streamed
/// because of it (see [`PluginMember`]).
pub type PluginsWithoutEvents = PluginMember<false>;

/// How many positions of the flattened chain a plugin member takes, whatever its plugins (see
/// [`PluginMember::CAPACITY`]).
pub const CAPACITY: usize = 32;

impl<const EVENTS: bool> std::fmt::Debug for PluginMember<EVENTS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.refused {
            Some(failure) => write!(f, "PluginMember(refusing: {failure})"),
            None => f.debug_list().entries(self.names()).finish(),
        }
    }
}

impl<const EVENTS: bool> Default for PluginMember<EVENTS> {
    /// No plugins: every hook passes through.
    fn default() -> Self {
        PluginMember {
            plugins: Vec::new(),
            starts: Vec::new(),
            hooks: HookSet::NONE,
            refused: None,
        }
    }
}

/// Why a plugin was not added to a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It takes more positions than are left.
    Full { left: usize },
    /// It has a per-event hook and the member is [`PluginsWithoutEvents`].
    PerEvent,
}

/// `plugin` (a middleware) boxed, to go into [`Plugins::new`].
pub fn boxed<M: Middleware + 'static>(plugin: M) -> Box<dyn DynMiddleware> {
    Box::new(plugin)
}

impl<const EVENTS: bool> PluginMember<EVENTS> {
    /// How many positions of the flattened chain the member takes, whatever its plugins: a
    /// checkpoint records positions, so they cannot depend on the plugins of the run. A plugin
    /// takes one (a chain boxed as one plugin, one per member).
    pub const CAPACITY: usize = CAPACITY;

    /// The member's name: what `describe()` and errors call the member itself (its plugins
    /// are named after themselves).
    pub const NAME: &'static str = "plugins";

    /// A member running `plugins`, first listed first (outermost for the wrap hooks); a
    /// [`ConfigError`] (field `plugins`) if they take more than [`CAPACITY`](Self::CAPACITY)
    /// positions, or if one has a per-event hook and the member is [`PluginsWithoutEvents`].
    pub fn new(plugins: Vec<Box<dyn DynMiddleware>>) -> Result<Self, ConfigError> {
        let mut member = Self::default();
        for plugin in plugins {
            let (name, len) = (plugin.name(), plugin.positions());
            match member.push(plugin) {
                Ok(()) => {}
                Err(Refused::Full { .. }) => {
                    return Err(ConfigError::new(
                        "plugins",
                        format!(
                            "they take more than the {CAPACITY} positions of a plugin member \
                             (`{name}` takes {len})"
                        ),
                    ));
                }
                Err(Refused::PerEvent) => {
                    return Err(ConfigError::new(
                        "plugins",
                        format!(
                            "`{name}` has a per-event hook (`on_model_event`), which \
                             `PluginsWithoutEvents` does not run: use `Plugins`"
                        ),
                    ));
                }
            }
        }
        Ok(member)
    }

    /// A member without plugins that fails every run at its first hook with `failure`, the
    /// failure of a required plugin.
    pub(crate) fn refusing(failure: Arc<FactoryError>) -> Self {
        PluginMember {
            refused: Some(failure),
            ..Self::default()
        }
    }

    /// Whether it refuses every run: a [required](super::PluginRegistry::register_required)
    /// plugin could not be made when it was built.
    #[must_use]
    pub fn is_refusing(&self) -> bool {
        self.refused.is_some()
    }

    /// Fails `hook` if a required plugin is missing.
    fn check_required(&self, hook: Hook) -> Result<(), Error> {
        match &self.refused {
            None => Ok(()),
            Some(failure) => Err(Error::middleware(
                Self::NAME,
                hook,
                PluginError::Required {
                    factory: failure.factory().to_owned(),
                    source: Arc::clone(failure),
                },
            )),
        }
    }

    /// Adds `plugin` last, if the member can run it; nothing added if not.
    pub(crate) fn push(&mut self, plugin: Box<dyn DynMiddleware>) -> Result<(), Refused> {
        if !EVENTS && has(&*plugin, Hook::OnModelEvent) {
            return Err(Refused::PerEvent);
        }
        let start = self.taken();
        if start + plugin.positions() > CAPACITY {
            return Err(Refused::Full {
                left: CAPACITY - start,
            });
        }
        self.hooks = self.hooks.union(plugin.hooks());
        self.starts.push(start);
        self.plugins.push(plugin);
        Ok(())
    }

    /// The positions taken so far.
    pub(crate) fn taken(&self) -> usize {
        self.plugins
            .last()
            .zip(self.starts.last())
            .map_or(0, |(plugin, start)| start + plugin.positions())
    }

    /// The plugins' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|plugin| plugin.name())
    }

    /// How many plugins it runs.
    #[must_use]
    pub fn len(&self) -> usize {
        self.plugins.len()
    }

    /// Whether it runs none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty()
    }

    /// Runs one plugin's sequential hook if the run is not resuming past it; `Some(flow)` to
    /// return at once (a jump, a response, an interrupt), `None` to go on.
    fn outcome(
        &self,
        k: usize,
        hook: Hook,
        entered: Enter,
        cx: &mut Context,
        result: Result<Flow, Error>,
    ) -> Result<Option<Flow>, Error> {
        let plugin = &self.plugins[k];
        let flow = result.map_err(|error| error.attribute(plugin.name(), hook))?;
        if entered == Enter::Resumed {
            cx.leave();
        }
        match flow {
            Flow::Continue => Ok(None),
            Flow::Jump(target) if !plugin.jumps().contains(hook, target) => {
                Err(Error::UndeclaredJump {
                    middleware: plugin.name(),
                    hook,
                    target,
                })
            }
            Flow::Interrupt(interruption) => Ok(Some(Flow::Interrupt(
                interruption.leaving_member(self.starts[k], plugin.name()),
            ))),
            flow => Ok(Some(flow)),
        }
    }

    /// Whether plugin `k` runs `hook` now (and, on a resumed step, where).
    fn enter(&self, k: usize, hook: Hook, order: Order, cx: &mut Context) -> Option<Enter> {
        let plugin = &self.plugins[k];
        if !has(&**plugin, hook) {
            return None;
        }
        let entered = cx.enter(self.starts[k], plugin.positions(), order);
        if entered == Enter::Skip {
            return None;
        }
        cx.running = Some(plugin.name());
        Some(entered)
    }
}

/// The per-model-call states of the plugins' `on_model_event` hooks (created at a call's first
/// event, for the plugins with the hook).
#[derive(Default)]
pub struct PluginStreamStates(pub(crate) Vec<Option<Box<dyn Any + Send>>>);

impl std::fmt::Debug for PluginStreamStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginStreamStates").finish_non_exhaustive()
    }
}

// Not recommended: a type that is not a middleware must not be told that this one is.
#[diagnostic::do_not_recommend]
impl<const EVENTS: bool> Middleware for PluginMember<EVENTS> {
    type State = PluginStates;
    type ThreadState = PluginStates;
    type StreamState = PluginStreamStates;
    type Phase = phase::Wrap;
    // The plugins are not known when the chain is built: the member is a layer of both onions
    // (a plugin without the wrap hook is skipped inside it).
    type WrapsModel = True;
    type WrapsTool = True;
    const NAME: &'static str = Self::NAME;
    // Every hook a plugin may have; each plugin's own `HOOKS` is read at run time.
    const HOOKS: HookSet = if EVENTS {
        HookSet::ALL
    } else {
        HookSet::ALL.difference(HookSet::of(Hook::OnModelEvent))
    };
    // Checked per plugin, against its own `JUMPS`.
    const JUMPS: JumpSet = JumpSet::ALL;
    // A plugin may edit the answer in `wrap_model_call` or `after_model`: held back.
    const LIVE_STREAM: bool = false;
    // The member takes `CAPACITY` positions of the flattened chain, whatever its plugins: a
    // checkpoint records positions, which must not depend on the plugins of a run.
    const MEMBERS: MemberList = MemberList::reserving(MemberInfo::of::<Self>(), CAPACITY);

    async fn before_agent(
        &self,
        cx: &mut Context,
        state: &mut PluginStates,
        thread: &mut PluginStates,
    ) -> Result<Flow, Error> {
        let hook = Hook::BeforeAgent;
        self.check_required(hook)?;
        if !self.hooks.contains(hook) {
            return Ok(Flow::Continue);
        }
        let states = state.prepare(&self.plugins, Scope::Run, hook)?;
        let threads = thread.prepare(&self.plugins, Scope::Thread, hook)?;
        for k in 0..self.plugins.len() {
            let Some(entered) = self.enter(k, hook, Order::Listed, cx) else {
                continue;
            };
            let name = self.plugins[k].name();
            let result = self.plugins[k]
                .before_agent(
                    cx,
                    states[k].live(name, hook)?,
                    threads[k].live(name, hook)?,
                )
                .await;
            if let Some(flow) = self.outcome(k, hook, entered, cx, result)? {
                return Ok(flow);
            }
        }
        Ok(Flow::Continue)
    }

    async fn before_model(
        &self,
        cx: &mut Context,
        state: &mut PluginStates,
        thread: &mut PluginStates,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        let hook = Hook::BeforeModel;
        self.check_required(hook)?;
        if !self.hooks.contains(hook) {
            return Ok(Flow::Continue);
        }
        let states = state.prepare(&self.plugins, Scope::Run, hook)?;
        let threads = thread.prepare(&self.plugins, Scope::Thread, hook)?;
        for k in 0..self.plugins.len() {
            let Some(entered) = self.enter(k, hook, Order::Listed, cx) else {
                continue;
            };
            let name = self.plugins[k].name();
            let result = self.plugins[k]
                .before_model(
                    cx,
                    states[k].live(name, hook)?,
                    threads[k].live(name, hook)?,
                    request,
                )
                .await;
            if let Some(flow) = self.outcome(k, hook, entered, cx, result)? {
                return Ok(flow);
            }
        }
        Ok(Flow::Continue)
    }

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        state: &mut PluginStates,
        thread: &mut PluginStates,
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        let hook = Hook::WrapModelCall;
        self.check_required(hook)?;
        if !self.hooks.contains(hook) {
            return next.call(cx, request).await;
        }
        let states = state.prepare(&self.plugins, Scope::Run, hook)?;
        let threads = thread.prepare(&self.plugins, Scope::Thread, hook)?;
        let mut onion = ModelOnion {
            plugins: &self.plugins,
            states,
            threads,
            next: &mut next,
        };
        onion.call(cx, request).await
    }

    fn on_model_event<E: Emit>(
        &self,
        state: &mut PluginStreamStates,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        self.check_required(Hook::OnModelEvent)?;
        if !self.hooks.contains(Hook::OnModelEvent) {
            return out.emit(event);
        }
        if state.0.len() != self.plugins.len() {
            state.0 = self
                .plugins
                .iter()
                .map(|plugin| has(&**plugin, Hook::OnModelEvent).then(|| plugin.new_stream_state()))
                .collect();
        }
        relay(&self.plugins, &mut state.0, event, out)
    }

    async fn after_model(
        &self,
        cx: &mut Context,
        state: &mut PluginStates,
        thread: &mut PluginStates,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        let hook = Hook::AfterModel;
        self.check_required(hook)?;
        if !self.hooks.contains(hook) {
            return Ok(Flow::Continue);
        }
        let states = state.prepare(&self.plugins, Scope::Run, hook)?;
        let threads = thread.prepare(&self.plugins, Scope::Thread, hook)?;
        for k in (0..self.plugins.len()).rev() {
            let Some(entered) = self.enter(k, hook, Order::Reversed, cx) else {
                continue;
            };
            let name = self.plugins[k].name();
            let result = self.plugins[k]
                .after_model(
                    cx,
                    states[k].live(name, hook)?,
                    threads[k].live(name, hook)?,
                    response,
                )
                .await;
            match self.outcome(k, hook, entered, cx, result)? {
                None => {}
                // As in a static chain: a replacement goes on through the remaining hooks.
                Some(Flow::Respond(replacement)) => *response = *replacement,
                Some(flow) => return Ok(flow),
            }
        }
        Ok(Flow::Continue)
    }

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        state: &PluginStates,
        thread: &PluginStates,
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        self.check_required(Hook::WrapToolCall)?;
        if !self.hooks.contains(Hook::WrapToolCall) {
            return Ok(next.call(cx, call).await);
        }
        let states = state.view(&self.plugins, Scope::Run)?;
        let threads = thread.view(&self.plugins, Scope::Thread)?;
        let mut onion = ToolOnion {
            plugins: &self.plugins,
            starts: &self.starts,
            base: cx.member(),
            states: &states,
            threads: &threads,
            next: &mut next,
        };
        Ok(onion.call(cx, call).await)
    }

    async fn after_agent(
        &self,
        cx: &mut Context,
        state: &mut PluginStates,
        thread: &mut PluginStates,
    ) -> Result<(), Error> {
        let hook = Hook::AfterAgent;
        if !self.hooks.contains(hook) {
            return Ok(());
        }
        let states = state.prepare(&self.plugins, Scope::Run, hook)?;
        let threads = thread.prepare(&self.plugins, Scope::Thread, hook)?;
        // As in a static chain: every plugin's after_agent runs, even after one fails or
        // panics; the first error wins.
        let mut result = Ok(());
        for k in (0..self.plugins.len()).rev() {
            let plugin = &self.plugins[k];
            if !has(&**plugin, hook) {
                continue;
            }
            cx.running = Some(plugin.name());
            let (state, thread) = match (
                states[k].live(plugin.name(), hook),
                threads[k].live(plugin.name(), hook),
            ) {
                (Ok(state), Ok(thread)) => (state, thread),
                (Err(error), _) | (_, Err(error)) => {
                    if result.is_ok() {
                        result = Err(error);
                    }
                    continue;
                }
            };
            let outcome = AssertUnwindSafe(plugin.after_agent(cx, state, thread))
                .catch_unwind()
                .await
                .unwrap_or_else(|payload| {
                    Err(Error::panicked(Some(plugin.name()), hook, payload.as_ref()))
                })
                .map_err(|error| error.attribute(plugin.name(), hook));
            if result.is_ok() {
                result = outcome;
            }
        }
        result
    }

    fn check_answer_at(&self, at: usize, answer: &Answer<'_>, _: Internal) -> Result<(), BoxError> {
        let holder = self
            .plugins
            .iter()
            .zip(&self.starts)
            .find(|(plugin, start)| (**start..**start + plugin.positions()).contains(&at));
        match holder {
            Some((plugin, start)) => plugin.check_answer_at(at - start, answer),
            None => Ok(()),
        }
    }

    fn contribute(&self, to: &mut Contributions) {
        for plugin in &self.plugins {
            plugin.contribute(to);
        }
    }

    fn describe_into(&self, description: &mut Description) {
        for plugin in &self.plugins {
            plugin.describe_into(description);
        }
    }
}
