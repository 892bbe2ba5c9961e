//! [`CacheScope`]: which calls share a cached result.

use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::context::{Context, Principal};

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
    /// The calls of runs for one [`Principal`] (read from the run's context): the same tenant
    /// and id, whatever the claims. The anonymous principal is one principal (one per tenant),
    /// apart from a user whose id is `anonymous`. A run without a principal caches nothing
    /// (neither served nor kept).
    Principal,
    /// The calls of runs for principals of one tenant (the [`Principal`]'s
    /// [`tenant`](Principal::tenant), read from the run's context). A run without a principal,
    /// or for a principal without a tenant, caches nothing (neither served nor kept).
    Tenant,
    /// Every call, whatever its run, thread or tenant: for tools whose result depends on their
    /// arguments only (public data), never on their context.
    Shared,
    /// The calls of runs whose context gives the same key (see [`CacheScope::by`]).
    By(ScopeFn),
}

impl CacheScope {
    /// The calls of runs for which `key` gives the same key share results (a value of your
    /// own read from the run context, say); a run for which it gives `None` caches nothing
    /// (neither served nor kept).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hookchain::builtin::ToolResultCache;
    /// use hookchain::builtin::tool_result_cache::CacheScope;
    ///
    /// /// The region a run serves, given in its run context.
    /// struct Region(String);
    ///
    /// let cache = ToolResultCache::builder()
    ///     .tool("weather", Duration::from_secs(60))
    ///     .scope(CacheScope::by(|cx| cx.get::<Region>().map(|region| region.0.clone())))
    ///     .build()?;
    /// # let _ = hookchain::chain![cache];
    /// # Ok::<(), hookchain::builtin::ConfigError>(())
    /// ```
    pub fn by(key: impl Fn(&Context) -> Option<String> + Send + Sync + 'static) -> Self {
        CacheScope::By(Arc::new(key))
    }

    /// The scope of the calls of `cx`'s run, as the start of their keys; `None` for none.
    pub(super) fn key(&self, cx: &Context) -> Option<String> {
        // Each variable part is prefixed by its length, so that no two scopes write one key.
        let (kind, part) = match self {
            CacheScope::Shared => return Some("shared".to_owned()),
            CacheScope::Principal => return cx.get::<Principal>().map(principal_key),
            CacheScope::Thread => match cx.thread_id() {
                Some(thread) => ("thread", thread.as_str().to_owned()),
                None => ("run", cx.run_id().to_owned()),
            },
            CacheScope::Tenant => ("tenant", cx.get::<Principal>()?.tenant()?.to_owned()),
            CacheScope::By(key) => ("key", key(cx)?),
        };
        let mut scope = String::with_capacity(kind.len() + part.len() + 8);
        let _ = write!(scope, "{kind}:{}:{part}", part.len());
        Some(scope)
    }
}

/// The scope of `principal`'s runs: `principal:`, its tenant (`<len>:<tenant>`, or `-` for
/// none), `:`, then `anonymous` for the anonymous principal or `<len>:<id>`. What follows
/// `principal:` starts with a digit or `-`, then with a digit or `a`: each form reads back one
/// way only.
fn principal_key(principal: &Principal) -> String {
    let parts = principal.tenant().map_or(0, str::len) + principal.id().len();
    let mut scope = String::with_capacity(32 + parts);
    scope.push_str("principal:");
    match principal.tenant() {
        Some(tenant) => {
            let _ = write!(scope, "{}:{tenant}", tenant.len());
        }
        None => scope.push('-'),
    }
    scope.push(':');
    if principal.is_anonymous() {
        scope.push_str("anonymous");
    } else {
        let id = principal.id();
        let _ = write!(scope, "{}:{id}", id.len());
    }
    scope
}

impl fmt::Debug for CacheScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheScope::Thread => "Thread",
            CacheScope::Principal => "Principal",
            CacheScope::Tenant => "Tenant",
            CacheScope::Shared => "Shared",
            CacheScope::By(_) => "By(..)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_keys_tell_tenants_ids_and_the_anonymous_principal_apart() {
        let alice = Principal::new("alice");
        let keys = [
            principal_key(&alice),
            principal_key(&alice.clone().with_tenant("acme")),
            principal_key(&Principal::new("acme:5:alice")),
            principal_key(&Principal::new("5:alice").with_tenant("acme")),
            principal_key(&Principal::anonymous()),
            principal_key(&Principal::anonymous().with_tenant("acme")),
            principal_key(&Principal::new("anonymous")),
            // A tenant that is empty is not one that is absent (the server refuses it, the
            // cache need not rely on that).
            principal_key(&alice.clone().with_tenant("")),
        ];
        assert_eq!(keys[0], "principal:-:5:alice");
        assert_eq!(keys[1], "principal:4:acme:5:alice");
        assert_eq!(keys[4], "principal:-:anonymous");
        assert_eq!(keys[7], "principal:0::5:alice");
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // The claims are not part of it.
        assert_eq!(
            principal_key(&alice.clone().with_claim("role", "admin")),
            keys[0]
        );
    }
}
