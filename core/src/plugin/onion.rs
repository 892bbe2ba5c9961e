//! The plugins' onions (model call, tool call) and their per-event pipeline, built at run time
//! from the plugins that have the hook: first listed outermost, as in a static chain.

use std::any::Any;

use super::adapter::{DynMiddleware, DynModelNext, DynToolNext, has};
use super::state::{Slot, Viewed};
use crate::context::{Context, Raiser, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{Emit, Hook, ModelNext, ToolNext};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};
use crate::tool::ToolFailure;

/// The model-call onion of `plugins` (those with the hook) around `next`.
pub(crate) struct ModelOnion<'o> {
    pub(crate) plugins: &'o [Box<dyn DynMiddleware>],
    pub(crate) states: &'o mut [Slot],
    pub(crate) threads: &'o mut [Slot],
    pub(crate) next: &'o mut (dyn DynModelNext + 'o),
}

impl ModelNext for ModelOnion<'_> {
    async fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> Result<ModelResponse, Error> {
        let hook = Hook::WrapModelCall;
        let Some(k) = self.plugins.iter().position(|plugin| has(&**plugin, hook)) else {
            return self.next.call_boxed(cx, request).await;
        };
        let plugin = &self.plugins[k];
        let (Some((state, states)), Some((thread, threads))) = (
            self.states[k..].split_first_mut(),
            self.threads[k..].split_first_mut(),
        ) else {
            return self.next.call_boxed(cx, request).await;
        };
        let mut inner = ModelOnion {
            plugins: &self.plugins[k + 1..],
            states,
            threads,
            next: &mut *self.next,
        };
        let name = plugin.name();
        let (state, thread) = (state.live(name, hook)?, thread.live(name, hook)?);
        // A plugin's unnamed error is its own: errors from `next` arrive named.
        plugin
            .wrap_model_call(cx, state, thread, request, &mut inner)
            .await
            .map_err(|error| error.attribute(plugin.name(), hook))
    }
}

/// The tool-call onion of `plugins` (those with the hook) around `next`; the plugin at `k`
/// takes the chain's positions from `base + starts[k]`.
pub(crate) struct ToolOnion<'o, 's> {
    pub(crate) plugins: &'o [Box<dyn DynMiddleware>],
    pub(crate) starts: &'o [usize],
    pub(crate) base: usize,
    pub(crate) states: &'o [Viewed<'s>],
    pub(crate) threads: &'o [Viewed<'s>],
    pub(crate) next: &'o mut (dyn DynToolNext + 'o),
}

impl ToolNext for ToolOnion<'_, '_> {
    async fn call(&mut self, cx: ToolContext<'_>, call: ToolCall) -> ToolResult {
        let hook = Hook::WrapToolCall;
        let Some(k) = self.plugins.iter().position(|plugin| has(&**plugin, hook)) else {
            return self.next.call_boxed(cx, call).await;
        };
        let plugin = &self.plugins[k];
        let at = self.base + self.starts[k];
        let mut inner = ToolOnion {
            plugins: &self.plugins[k + 1..],
            starts: &self.starts[k + 1..],
            base: self.base,
            states: &self.states[k + 1..],
            threads: &self.threads[k + 1..],
            next: &mut *self.next,
        };
        // The plugin's own view: its answers, its position (as a static layer's).
        let cx = cx.view(Raiser::Member(at));
        let outcome = plugin
            .wrap_tool_call(
                cx,
                self.states[k].get(),
                self.threads[k].get(),
                call,
                &mut inner,
            )
            .await;
        match outcome {
            Ok(result) => result,
            Err(Error::Interrupted(interruption)) => {
                cx.pause((*interruption).raised_at(at, plugin.name()));
                ToolResult::paused(cx.call_id())
            }
            Err(error) => {
                let error = error.attribute(plugin.name(), hook);
                ToolResult::failed(cx.call_id(), ToolFailure::from_middleware(cx.tool(), error))
            }
        }
    }
}

/// Hands `event` to the last of `plugins` with a per-event hook, whose `out` is the ones listed
/// before it, down to `out`: the order of a static chain.
pub(crate) fn relay(
    plugins: &[Box<dyn DynMiddleware>],
    states: &mut [Option<Box<dyn Any + Send>>],
    event: ModelEvent,
    out: &mut dyn Emit,
) -> Result<(), Error> {
    let hook = Hook::OnModelEvent;
    let Some(k) = plugins.iter().rposition(|plugin| has(&**plugin, hook)) else {
        return out.emit(event);
    };
    let (before, rest) = states.split_at_mut(k);
    let Some(Some(state)) = rest.first_mut() else {
        return out.emit(event);
    };
    let mut inner = Relay {
        plugins: &plugins[..k],
        states: before,
        out,
    };
    plugins[k]
        .on_model_event(&mut **state, event, &mut inner)
        .map_err(|error| error.attribute(plugins[k].name(), hook))
}

/// The plugins listed before one with a per-event hook, as its `out`.
struct Relay<'r> {
    plugins: &'r [Box<dyn DynMiddleware>],
    states: &'r mut [Option<Box<dyn Any + Send>>],
    out: &'r mut dyn Emit,
}

impl Emit for Relay<'_> {
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error> {
        relay(self.plugins, self.states, event, self.out)
    }
}
