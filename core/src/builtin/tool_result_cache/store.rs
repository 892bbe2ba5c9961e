//! Where [`ToolResultCache`](super::ToolResultCache) keeps results.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::lock::lock;
use crate::message::Content;

/// Keeps cached tool results by key, each for a time. Implement it for a shared store (Redis,
/// a database: [`Content`] is `Serialize`, and its serialized text is a JSON string when it is
/// one piece of text); [`InMemoryCache`] is the default. An `Arc` of a store is a store too, so one
/// store can serve several caches (or agents) and still be read by the application.
///
/// A key is the call's scope (see [`CacheScope`](super::CacheScope)), a NUL, the tool's name,
/// a NUL, then the arguments as canonical JSON (object keys sorted): stable across processes,
/// so a shared store can serve several agents. The scope is written `thread:<len>:<id>`,
/// `run:<len>:<id>`, `tenant:<len>:<tenant>`, `key:<len>:<key>` (the length of what follows,
/// in bytes), `shared`, or for a principal `principal:<len>:<tenant>:<len>:<id>`, with `-` for
/// no tenant (`principal:-:<len>:<id>`) and `anonymous` for the anonymous principal's
/// `<len>:<id>` (`principal:-:anonymous`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a store of tool results",
    label = "not a cache store",
    note = "a store is an `InMemoryCache` (`InMemoryCache::new()`), an `Arc` of a store (one \
            store shared by several caches or read by your code), or a type with a hand-written \
            `impl CacheStore` (`get` and `put`)"
)]
// `where Self: Sync` on each method returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of a hand-written impl assumes it, so a type that
// is not `Sync` is one error, at the impl, rather than one more per method.
pub trait CacheStore: Send + Sync {
    /// The result stored under `key`, unless none is or it has expired.
    fn get(&self, key: &str) -> impl Future<Output = Option<Content>> + Send
    where
        Self: Sync;

    /// Stores `content` under `key` for `ttl`.
    fn put(&self, key: String, content: Content, ttl: Duration) -> impl Future<Output = ()> + Send
    where
        Self: Sync;
}

#[diagnostic::do_not_recommend]
impl<T: CacheStore> CacheStore for Arc<T> {
    fn get(&self, key: &str) -> impl Future<Output = Option<Content>> + Send {
        (**self).get(key)
    }

    fn put(&self, key: String, content: Content, ttl: Duration) -> impl Future<Output = ()> + Send {
        (**self).put(key, content, ttl)
    }
}

/// A [`CacheStore`] in this process's memory, timed by tokio's clock (so a test on a paused
/// clock controls expiry), holding at most [`capacity`](Self::capacity) entries (1,024 by
/// default): a write to a full cache evicts the least recently used entry (read or written).
/// An expired entry is dropped when it is read, or evicted in its turn.
///
/// The bound is in entries, not bytes: a cache of tools with large results wants a smaller
/// one ([`with_capacity`](Self::with_capacity)).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use hookchain::builtin::ToolResultCache;
/// use hookchain::builtin::tool_result_cache::InMemoryCache;
///
/// # use hookchain::builtin::ConfigError;
/// // At most 100 results, shared with the application (which can read how many there are).
/// let store = Arc::new(InMemoryCache::with_capacity(100));
/// let cache = ToolResultCache::builder()
///     .tool("search", Duration::from_secs(300))
///     .store(Arc::clone(&store))
///     .build()?;
/// assert_eq!(store.len(), 0);
/// # let _ = hookchain::chain![cache];
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Debug)]
pub struct InMemoryCache {
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<Arc<str>, Entry>,
    /// The keys by their last use, least recent first.
    by_use: BTreeMap<u64, Arc<str>>,
    /// The last use given out.
    tick: u64,
}

#[derive(Debug)]
struct Entry {
    content: Content,
    expires: Instant,
    used: u64,
}

impl Entries {
    /// The next use, later than every use given out before.
    fn next_use(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn remove(&mut self, key: &str) {
        if let Some(entry) = self.by_key.remove(key) {
            self.by_use.remove(&entry.used);
        }
    }
}

impl Default for InMemoryCache {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryCache {
    /// The capacity of [`new`](Self::new): 1,024 entries.
    pub const DEFAULT_CAPACITY: usize = 1024;

    /// An empty cache of [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) entries.
    #[must_use]
    pub fn new() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// An empty cache of at most `capacity` entries (0 keeps nothing).
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        InMemoryCache {
            capacity,
            inner: Mutex::default(),
        }
    }

    /// The most entries it holds.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries held, expired ones not yet dropped included.
    #[must_use]
    pub fn len(&self) -> usize {
        lock(&self.inner).by_key.len()
    }

    /// Whether it holds no entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// A panic while the lock was held cannot leave the maps out of step (no user code runs under
// it): `lock` recovers a poisoned mutex.
// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl CacheStore for InMemoryCache {
    async fn get(&self, key: &str) -> Option<Content> {
        let mut entries = lock(&self.inner);
        let entry = entries.by_key.get(key)?;
        let (expired, last_used) = (Instant::now() >= entry.expires, entry.used);
        if expired {
            entries.remove(key);
            return None;
        }
        // Now the most recently used: its key moves to the end of the order.
        let used = entries.next_use();
        if let Some(shared_key) = entries.by_use.remove(&last_used) {
            entries.by_use.insert(used, shared_key);
        }
        let entry = entries.by_key.get_mut(key)?;
        entry.used = used;
        Some(entry.content.clone())
    }

    async fn put(&self, key: String, content: Content, ttl: Duration) {
        if self.capacity == 0 {
            return;
        }
        let now = Instant::now();
        // A TTL too long for the clock means "for good".
        let expires = now
            .checked_add(ttl)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut entries = lock(&self.inner);
        entries.remove(&key);
        while entries.by_key.len() >= self.capacity {
            let Some((_, oldest)) = entries.by_use.pop_first() else {
                break;
            };
            entries.by_key.remove(&oldest);
        }
        let used = entries.next_use();
        let key: Arc<str> = Arc::from(key);
        entries.by_use.insert(used, Arc::clone(&key));
        entries.by_key.insert(
            key,
            Entry {
                content,
                expires,
                used,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    // No timer involved: the TTLs are far longer than the tests.
    #[tokio::test]
    async fn the_least_recently_used_entry_goes_first() {
        let cache = InMemoryCache::with_capacity(2);
        cache.put("a".into(), "1".into(), TTL).await;
        cache.put("b".into(), "2".into(), TTL).await;
        // Reading `a` makes `b` the least recently used.
        assert_eq!(
            cache.get("a").await.as_ref().and_then(Content::as_text),
            Some("1")
        );
        cache.put("c".into(), "3".into(), TTL).await;
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("b").await, None);
        assert_eq!(
            cache.get("a").await.as_ref().and_then(Content::as_text),
            Some("1")
        );
        assert_eq!(
            cache.get("c").await.as_ref().and_then(Content::as_text),
            Some("3")
        );
        // Writing a key again replaces it, and makes it the most recent.
        cache.put("a".into(), "4".into(), TTL).await;
        cache.put("d".into(), "5".into(), TTL).await;
        assert_eq!(cache.get("c").await, None);
        assert_eq!(
            cache.get("a").await.as_ref().and_then(Content::as_text),
            Some("4")
        );
        let entries = lock(&cache.inner);
        assert_eq!(entries.by_key.len(), entries.by_use.len());
    }

    #[tokio::test]
    async fn the_default_holds_1024_and_zero_holds_nothing() {
        let cache = InMemoryCache::new();
        for n in 0..2000 {
            cache.put(format!("k{n}"), "v".into(), TTL).await;
        }
        assert_eq!(cache.len(), InMemoryCache::DEFAULT_CAPACITY);
        assert_eq!(cache.get("k0").await, None);
        assert_eq!(
            cache.get("k1999").await.as_ref().and_then(Content::as_text),
            Some("v")
        );

        let none = InMemoryCache::with_capacity(0);
        none.put("k".into(), "v".into(), TTL).await;
        assert!(none.is_empty());
        assert_eq!(none.get("k").await, None);
    }
}
