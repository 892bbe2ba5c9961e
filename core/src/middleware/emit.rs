//! Where a per-event hook sends the events it lets through.
//!
//! The per-event hooks of a chain form a pipeline in reverse chain order (the last listed sees
//! the model's events first, as for `after_model`): each member's [`EventRelay`] hands an event
//! to the member's `on_model_event`, whose `out` is the relay of the member listed before it,
//! and the first member's `out` is the run itself (the answer being assembled, and the consumer
//! of a streamed run). All of it is static: a member without the hook is a relay that passes
//! the event on, which inlines to nothing.

use super::{Hook, Middleware};
use crate::error::Error;
use crate::model::ModelEvent;

/// The rest of the per-event pipeline, as seen by an `on_model_event` hook: what it emits goes
/// to the hooks of the members listed before it, then into the answer.
///
/// A hook may emit each event it gets (the usual case, edited or not), none (it drops it or
/// holds it back in its stream state, to emit later), or several (it releases what it held
/// back, or injects events of its own). An error from `emit` comes from a hook further out (or
/// from an event that contradicts the answer so far): return it.
pub trait Emit {
    /// Sends `event` on.
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error>;
}

impl<E: Emit + ?Sized> Emit for &mut E {
    #[inline]
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error> {
        (**self).emit(event)
    }
}

/// One member's place in the per-event pipeline: calls `M::on_model_event` with `M`'s stream
/// state and the members listed before it as `out`.
#[derive(Debug)]
pub struct EventRelay<'a, M: Middleware, E> {
    middleware: &'a M,
    state: &'a mut M::StreamState,
    out: E,
}

impl<'a, M: Middleware, E> EventRelay<'a, M, E> {
    #[doc(hidden)]
    #[inline]
    pub fn new(middleware: &'a M, state: &'a mut M::StreamState, out: E) -> Self {
        Self {
            middleware,
            state,
            out,
        }
    }
}

impl<M: Middleware, E: Emit> Emit for EventRelay<'_, M, E> {
    #[inline]
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error> {
        if M::HOOKS.contains(Hook::OnModelEvent) {
            self.middleware
                .on_model_event(self.state, event, &mut self.out)
                .map_err(|error| error.attribute(M::NAME, Hook::OnModelEvent))
        } else {
            self.out.emit(event)
        }
    }
}
