//! [`CacheScope`]: which calls share a cached result.

use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::context::Context;

/// A scope key read from a run's [`Context`] (see [`CacheScope::by`]).
pub type ScopeFn = Arc<dyn Fn(&Context) -> Option<String> + Send + Sync>;

/// Which calls a [`ToolResultCache`](super::ToolResultCache) serves a result to: only calls in
/// the scope it was made in. A tool may read who it runs for from its context, so a result
/// shared too widely is one tenant's data served to another: the default is the narrowest
/// scope that still makes a cache useful, the thread.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum CacheScope {
    /// The calls of one [`Thread`](crate::Thread); a run outside a thread is a scope of its
    /// own (its resumes included). The default.
    ///
    /// Thread ids made by the agent are unique; ids of your own given to
    /// [`ThreadId::new`](crate::ThreadId::new) must be unique across the tenants of a store
    /// shared by several agents.
    #[default]
    Thread,
    /// Every call, whatever its run, thread or tenant: for tools whose result depends on their
    /// arguments only (public data), never on their context.
    Shared,
    /// The calls of runs whose context gives the same key (see [`CacheScope::by`]).
    By(ScopeFn),
}

impl CacheScope {
    /// The calls of runs for which `key` gives the same key share results (a tenant id read
    /// from the run context, say); a run for which it gives `None` caches nothing (neither
    /// served nor kept).
    pub fn by(key: impl Fn(&Context) -> Option<String> + Send + Sync + 'static) -> Self {
        CacheScope::By(Arc::new(key))
    }

    /// The scope of the calls of `cx`'s run, as the start of their keys; `None` for none.
    pub(super) fn key(&self, cx: &Context) -> Option<String> {
        // Each variable part is prefixed by its length, so that no two scopes write one key.
        let (kind, part) = match self {
            CacheScope::Shared => return Some("shared".to_owned()),
            CacheScope::Thread => match cx.thread_id() {
                Some(thread) => ("thread", thread.as_str().to_owned()),
                None => ("run", cx.run_id().to_owned()),
            },
            CacheScope::By(key) => ("key", key(cx)?),
        };
        let mut scope = String::with_capacity(kind.len() + part.len() + 8);
        let _ = write!(scope, "{kind}:{}:{part}", part.len());
        Some(scope)
    }
}

impl fmt::Debug for CacheScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheScope::Thread => "Thread",
            CacheScope::Shared => "Shared",
            CacheScope::By(_) => "By(..)",
        })
    }
}
