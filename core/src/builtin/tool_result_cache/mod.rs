//! Tool result cache: the result of a call kept for a time, and given again to the same call
//! instead of running the tool.
//!
//! ```
//! use std::time::Duration;
//!
//! use hookchain::builtin::ToolResultCache;
//!
//! # use hookchain::builtin::ConfigError;
//! // Results served again within the thread that made them.
//! let cache = ToolResultCache::builder()
//!     .tool("search", Duration::from_secs(300))
//!     .tool("weather", Duration::from_secs(60))
//!     .build()?;
//! let chain = hookchain::chain![cache];
//! # Ok::<(), ConfigError>(())
//! ```
//!
//! Shared by the runs of each user ([`Principal`](crate::Principal), which a server puts into
//! the run's context), never across users (a run without a principal caches nothing):
//!
//! ```
//! use std::time::Duration;
//!
//! use hookchain::builtin::ToolResultCache;
//! use hookchain::builtin::tool_result_cache::CacheScope;
//!
//! # use hookchain::builtin::ConfigError;
//! let cache = ToolResultCache::builder()
//!     .tool("crm_lookup", Duration::from_secs(300))
//!     .scope(CacheScope::Principal)
//!     .build()?;
//! # let _ = hookchain::chain![cache];
//! # Ok::<(), ConfigError>(())
//! ```
//!
//! # Rules
//!
//! - Per-tool opt-in: only the tools given to [`tool`](ToolResultCacheBuilder::tool) are
//!   cached, each for its own time to live (TTL).
//! - **Scoped per thread by default.** A tool may read who it runs for from its context (a
//!   tenant, a user, a database handle): the same call can mean another result in another
//!   run. So a result is served again only within its [`CacheScope`]: by default the thread
//!   it was made in (for a run outside a thread, that run, resumes included). Sharing results
//!   further is an explicit choice: [`CacheScope::Principal`] (the runs for one principal of
//!   the run's context: the same tenant and id; the anonymous principal is one),
//!   [`CacheScope::Tenant`] (the runs for the principals of one tenant),
//!   [`CacheScope::Shared`] (every run, thread and tenant: for tools whose result depends on
//!   their arguments only) or [`CacheScope::by`], a key of your own read from the run's
//!   context.
//! - **A run with no scope caches nothing**: a run without a principal, under
//!   [`CacheScope::Principal`]; without a principal or a tenant, under [`CacheScope::Tenant`];
//!   for which the key is `None`, under [`CacheScope::by`]. Its calls are neither served nor
//!   kept.
//! - Within its scope, the key is the tool's name and its arguments as canonical JSON (object
//!   keys sorted): two calls with the same arguments in a different order share their result.
//! - A hit does not run the tool (nor the wraps inside this one): the call gets the cached
//!   content as its result.
//! - Error results (a failed tool, a refused call) and a call that paused the run are never
//!   cached.
//! - A result is kept for its tool's TTL, timed by tokio's clock (this built-in needs the
//!   `tokio` feature); where, is the [`CacheStore`]'s business: [`InMemoryCache`] by default,
//!   which holds at most 1,024 results (the least recently used go first).
//! - Where it sits matters: listed before (outside) a retry, it caches the retried outcome;
//!   after (inside) a wrap that edits results, it caches the unedited result.

mod scope;
mod store;

use std::collections::BTreeMap;
use std::time::Duration;

use hookchain_macros::middleware;

pub use scope::{CacheScope, ScopeFn};
pub use store::{CacheStore, InMemoryCache};

use super::ConfigError;
use super::canonical::call_key;
use crate::context::ToolContext;
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::ToolNext;

/// Caches the results of chosen tools (see the [module docs](self)).
#[derive(Debug)]
pub struct ToolResultCache<S = InMemoryCache> {
    /// The cached tools and their TTLs.
    ttls: BTreeMap<String, Duration>,
    scope: CacheScope,
    store: S,
}

/// Builds a [`ToolResultCache`]; [`build`](Self::build) checks the settings.
#[derive(Debug)]
#[must_use]
pub struct ToolResultCacheBuilder<S = InMemoryCache> {
    ttls: BTreeMap<String, Duration>,
    scope: CacheScope,
    store: S,
}

impl ToolResultCache {
    /// A builder with no tool cached yet (at least one is needed), in an [`InMemoryCache`].
    pub fn builder() -> ToolResultCacheBuilder {
        ToolResultCacheBuilder {
            ttls: BTreeMap::new(),
            scope: CacheScope::Thread,
            store: InMemoryCache::new(),
        }
    }
}

impl<S> ToolResultCache<S> {
    /// Where the results are kept.
    #[must_use]
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Which calls share results.
    #[must_use]
    pub fn scope(&self) -> &CacheScope {
        &self.scope
    }
}

impl<S> ToolResultCacheBuilder<S> {
    /// Caches the results of `tool` for `ttl`.
    pub fn tool(mut self, tool: impl Into<String>, ttl: Duration) -> Self {
        self.ttls.insert(tool.into(), ttl);
        self
    }

    /// Which calls share results (default [`CacheScope::Thread`]: the calls of one thread).
    pub fn scope(mut self, scope: CacheScope) -> Self {
        self.scope = scope;
        self
    }

    /// Keeps the results in `store` instead of an [`InMemoryCache`].
    pub fn store<T: CacheStore>(self, store: T) -> ToolResultCacheBuilder<T> {
        ToolResultCacheBuilder {
            ttls: self.ttls,
            scope: self.scope,
            store,
        }
    }

    /// The middleware; an error names a setting that cannot work: no tool, an empty tool
    /// name, or a TTL of zero.
    pub fn build(self) -> Result<ToolResultCache<S>, ConfigError> {
        if self.ttls.is_empty() {
            return Err(ConfigError::new(
                "tool",
                "no tool to cache: name each tool to cache, with its TTL",
            ));
        }
        for (tool, ttl) in &self.ttls {
            if tool.trim().is_empty() {
                return Err(ConfigError::new("tool", "a tool's name is empty"));
            }
            if ttl.is_zero() {
                return Err(ConfigError::new(
                    "ttl",
                    format!("the TTL of `{tool}` is zero: nothing would ever be served"),
                ));
            }
        }
        Ok(ToolResultCache {
            ttls: self.ttls,
            scope: self.scope,
            store: self.store,
        })
    }
}

#[middleware(crate = crate)]
impl<S: CacheStore + 'static> ToolResultCache<S> {
    /// Serves a cached result, or runs the call and keeps its result.
    #[hook(wrap_tool_call)]
    async fn cached(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let Some(&ttl) = self.ttls.get(&call.name) else {
            return Ok(next.call(cx, call).await);
        };
        let Some(mut key) = self.scope.key(cx.run()) else {
            tracing::debug!(tool = %call.name, call_id = %call.id, "no cache scope for this run: not cached");
            return Ok(next.call(cx, call).await);
        };
        key.push('\0');
        key.push_str(&call_key(&call.name, &call.arguments));
        if let Some(content) = self.store.get(&key).await {
            tracing::debug!(tool = %call.name, call_id = %call.id, "tool result served from the cache");
            return Ok(ToolResult::ok(call.id, content));
        }
        let result = next.call(cx, call).await;
        if !result.is_error && !result.is_paused() {
            self.store.put(key, result.content.clone(), ttl).await;
        }
        Ok(result)
    }
}
