//! Unique ids for runs, threads and checkpoints.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A fresh id: 32 hex digits, unique across processes and machines for practical purposes.
/// Not a secret: never use it as one.
///
/// Within a process, each id is a bijection of a counter (so two are never equal); across
/// processes, the bijection is keyed by 128 bits drawn once per process from the OS's
/// randomness (`RandomState`), the time and the process id, and the process id is mixed in
/// again per id (a forked child keeps its parent's key and counter). One id costs a counter
/// increment, a `getpid`, two 64-bit mixes and 32 table lookups: a run makes one, and the
/// keyed hashes, clock reads and formatting this replaced were a tenth of a turn.
pub(crate) fn fresh() -> String {
    static KEY: OnceLock<[u64; 2]> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let [high_key, low_key] = *KEY.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        // `RandomState` is seeded per instance from the OS's randomness.
        let random = RandomState::new();
        let pid = std::process::id();
        [
            random.hash_one((1_u8, nanos, pid)),
            random.hash_one((2_u8, nanos, pid)),
        ]
    });
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // An odd multiplier, an addition and `mix` are each bijective on u64: distinct counts give
    // distinct high halves.
    let high = mix(high_key.wrapping_add(count.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    let low = mix(low_key ^ high ^ u64::from(std::process::id()));
    let mut digits = [0_u8; 32];
    hex(&mut digits[..16], high);
    hex(&mut digits[16..], low);
    // Hex digits are ASCII: the conversion always succeeds (and allocates once).
    std::str::from_utf8(&digits).map_or_else(|_| String::new(), str::to_owned)
}

/// SplitMix64's finalizer: a bijection of u64 whose every output bit depends on every input
/// bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Writes `value` into `out` as lowercase hex digits, most significant first, leading zeros
/// kept (16 for 16 bytes).
fn hex(out: &mut [u8], value: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (at, digit) in out.iter_mut().rev().enumerate() {
        *digit = DIGITS[((value >> (at * 4)) & 0xF) as usize];
    }
}

/// Identifies a [`Thread`](crate::agent::Thread); a checkpoint of a run in a thread resumes only on that thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadId(String);

impl ThreadId {
    /// An id as written (a conversation id of your application, say).
    pub fn new(id: impl Into<String>) -> Self {
        ThreadId(id.into())
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id `id` in the namespace `namespace` (a tenant): `<namespace>/<id>`. A thread's id
    /// is the key of its entry in a [`ThreadStore`](crate::thread_store::ThreadStore) and of its
    /// runs in a [`Checkpointer`](crate::interrupt::Checkpointer), so the ids of two namespaces
    /// never name one entry, in either store, and one store serves many tenants: a server
    /// (`hookchain::axum`) makes the id of every thread a tenant's principal names this way.
    /// [`ThreadStore::list_namespace`](crate::thread_store::ThreadStore::list_namespace)
    /// lists a namespace's threads.
    ///
    /// `None` when `namespace` is empty or holds `/` (then two namespaces could write one
    /// key). Keep un-namespaced ids of a store shared with namespaced ones free of `/`.
    ///
    /// ```
    /// use hookchain::ThreadId;
    ///
    /// let id = ThreadId::namespaced("acme", "support-42").unwrap();
    /// assert_eq!(id.as_str(), "acme/support-42");
    /// assert_eq!(id.namespace(), Some("acme"));
    /// assert_eq!(id.local(), "support-42");
    /// assert!(ThreadId::namespaced("a/b", "x").is_none());
    /// ```
    #[must_use]
    pub fn namespaced(namespace: &str, id: &str) -> Option<Self> {
        if namespace.is_empty() || namespace.contains('/') {
            return None;
        }
        Some(ThreadId(format!("{namespace}/{id}")))
    }

    /// The namespace of an id made by [`namespaced`](Self::namespaced): the part before its
    /// first `/`, if it has one.
    #[must_use]
    pub fn namespace(&self) -> Option<&str> {
        self.0.split_once('/').map(|(namespace, _)| namespace)
    }

    /// The id within its [`namespace`](Self::namespace): the part after its first `/`, or the
    /// whole id when it has none.
    #[must_use]
    pub fn local(&self) -> &str {
        self.0.split_once('/').map_or(&self.0, |(_, local)| local)
    }

    /// A fresh id, unique for practical purposes.
    pub(crate) fn fresh() -> Self {
        ThreadId(fresh())
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_keeps_leading_zeros() {
        let mut out = [0_u8; 16];
        super::hex(&mut out, 0x00ab_0000_0000_00f1);
        assert_eq!(&out, b"00ab0000000000f1");
    }

    #[test]
    fn ids_are_distinct_and_hex() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| super::fresh()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
}
