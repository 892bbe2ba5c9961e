//! The store a run is kept in, as its context carries it.

use std::any::Any;
use std::sync::Arc;

/// The store a run is kept in while it holds its key: its agent's, or, for a sub-agent without
/// one, its parent's. The agent's store type lives a layer above the context, so it is held
/// here as `Any` and read back by the agent — once per kept step, never per hook.
#[derive(Clone)]
pub(crate) struct RunStore(Arc<dyn Any + Send + Sync>);

impl RunStore {
    pub(crate) fn new<T: Any + Send + Sync>(store: Arc<T>) -> Self {
        RunStore(store)
    }

    /// The store, if it is a `T`.
    pub(crate) fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }

    /// The store, shared, if it is a `T`.
    pub(crate) fn shared<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        Arc::clone(&self.0).downcast().ok()
    }
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunStore")
    }
}
