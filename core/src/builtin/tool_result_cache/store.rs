//! Where [`ToolResultCache`](super::ToolResultCache) keeps results.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Keeps cached tool results by key, each for a time. Implement it for a shared store (Redis,
/// a database); [`InMemoryCache`] is the default.
///
/// A key is the call's scope (see [`CacheScope`](super::CacheScope)), a NUL, the tool's name,
/// a NUL, then the arguments as canonical JSON (object keys sorted): stable across processes,
/// so a shared store can serve several agents. The scope is written `thread:<len>:<id>`,
/// `run:<len>:<id>`, `key:<len>:<key>` (the length of what follows, in bytes) or `shared`.
pub trait CacheStore: Send + Sync {
    /// The result stored under `key`, unless none is or it has expired.
    fn get(&self, key: &str) -> impl Future<Output = Option<String>> + Send;

    /// Stores `content` under `key` for `ttl`.
    fn put(&self, key: String, content: String, ttl: Duration) -> impl Future<Output = ()> + Send;
}

/// A [`CacheStore`] in this process's memory, timed by tokio's clock (so a test on a paused
/// clock controls expiry). Expired entries are dropped when they are read, and when a write
/// finds the map has doubled since the last sweep.
#[derive(Debug, Default)]
pub struct InMemoryCache {
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<String, (String, Instant)>,
    /// The size after the last sweep of expired entries.
    swept_at: usize,
}

impl InMemoryCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries held, expired ones not yet dropped included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries().by_key.len()
    }

    /// Whether it holds no entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while the lock was held cannot leave the map half-written (each operation is
        // one map call): the data is still good.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl CacheStore for InMemoryCache {
    async fn get(&self, key: &str) -> Option<String> {
        let mut entries = self.entries();
        let (content, expires) = entries.by_key.get(key)?;
        if Instant::now() < *expires {
            return Some(content.clone());
        }
        entries.by_key.remove(key);
        None
    }

    async fn put(&self, key: String, content: String, ttl: Duration) {
        let now = Instant::now();
        let mut entries = self.entries();
        if entries.by_key.len() >= 2 * entries.swept_at.max(32) {
            entries.by_key.retain(|_, (_, expires)| now < *expires);
            entries.swept_at = entries.by_key.len();
        }
        // A TTL too long for the clock means "for good".
        let expires = now
            .checked_add(ttl)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        entries.by_key.insert(key, (content, expires));
    }
}
