//! Unique ids for runs, threads and checkpoints.

use std::fmt::Write;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh id: 32 hex digits, unique across processes and machines for practical purposes
/// (two keyed hashes of the time, the process and a counter). Not a secret: never use it as
/// one.
pub(crate) fn fresh() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let half = |salt: u64| {
        // `RandomState` is seeded per instance from the OS's randomness.
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(salt);
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.write_u64(count);
        hasher.finish()
    };
    // One allocation whatever the digits: `format!` would grow the string once more for each
    // run of leading zeros it pads.
    let mut id = String::with_capacity(32);
    let _ = write!(id, "{:016x}{:016x}", half(1), half(2));
    id
}

#[cfg(test)]
mod tests {
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
