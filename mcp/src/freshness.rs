//! How long a server's tool list may be reused before it is listed again: the `ttlMs` a
//! 2026-07-28 server puts on its `tools/list` result (SEP-2549).
//!
//! A list without `ttlMs` (every 2025-11-25 server's) is kept until the server says it
//! changed (`notifications/tools/list_changed`) or a new session lists it, as before the
//! hint existed. A list with one is reused until it runs out; at its next use after that — a
//! model call offered the toolset's tools, a call of one of them — it is listed again, in a
//! task of its own, so that neither waits for the listing: the model is offered the new list
//! from its next call on, as after a `list_changed`.
//!
//! The hint's `cacheScope` does not matter here: a listing is kept by its connection, which
//! speaks for one principal, never shared with another.
//!
//! Time is tokio's (`tokio::time::Instant`), so a test moves it with the paused clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Until when a listing may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Freshness {
    /// `None`: no end (no `ttlMs`, or one too far away to be told from none).
    until: Option<Instant>,
}

impl Freshness {
    /// A listing that may be reused until it is said to have changed.
    pub(crate) const UNTIL_CHANGED: Freshness = Freshness { until: None };

    /// The freshness of a page received at `received` with this `ttlMs`.
    pub(crate) fn of_page(ttl_ms: Option<u64>, received: Instant) -> Self {
        Freshness {
            until: ttl_ms.and_then(|ttl| received.checked_add(Duration::from_millis(ttl))),
        }
    }

    /// The freshness of a listing made of pages of freshness `self` and `next`: it runs out
    /// with the first page that does. A page without `ttlMs` makes the listing one without
    /// (rmcp merges pages so too): a server that gives the hint on some pages only is taken
    /// for one that does not give it.
    #[must_use]
    pub(crate) fn and(self, next: Freshness) -> Self {
        Freshness {
            until: self.until.zip(next.until).map(|(a, b)| a.min(b)),
        }
    }

    /// Whether the listing ran out at `now` (a `ttlMs` of 0 is out at once).
    pub(crate) fn is_stale(self, now: Instant) -> bool {
        self.until.is_some_and(|until| until <= now)
    }
}

/// A connection's last listing's freshness, readable without waiting (the registry asks at
/// every model call), and whether a listing for its running out is under way.
#[derive(Debug)]
pub(crate) struct ListingAge {
    freshness: Mutex<Freshness>,
    relisting: AtomicBool,
}

impl Default for ListingAge {
    fn default() -> Self {
        ListingAge {
            freshness: Mutex::new(Freshness::UNTIL_CHANGED),
            relisting: AtomicBool::new(false),
        }
    }
}

impl ListingAge {
    /// A new listing was made, of this freshness.
    pub(crate) fn listed(&self, freshness: Freshness) {
        // A plain value, replaced whole: a panic elsewhere cannot leave it half-written.
        *self
            .freshness
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = freshness;
    }

    /// Whether the listing ran out.
    pub(crate) fn is_stale(&self) -> bool {
        self.freshness
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_stale(Instant::now())
    }

    /// Whether the listing ran out and no listing is under way for it: then one is taken to
    /// be, and the caller starts it (and says [`relisting_done`](Self::relisting_done)).
    /// Every use of a list that ran out would otherwise start a listing of its own.
    pub(crate) fn start_relisting(&self) -> bool {
        self.is_stale()
            && self
                .relisting
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// The listing started by [`start_relisting`](Self::start_relisting) ended (whether it
    /// succeeded or not: a failed one is tried again at the next use).
    pub(crate) fn relisting_done(&self) {
        self.relisting.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_listing_runs_out_with_its_first_page_to_run_out() {
        let now = Instant::now();
        let listing =
            Freshness::of_page(Some(60_000), now).and(Freshness::of_page(Some(30_000), now));
        assert!(!listing.is_stale(now + Duration::from_millis(29_999)));
        assert!(listing.is_stale(now + Duration::from_secs(30)));
        // A ttl of 0: out at once.
        assert!(Freshness::of_page(Some(0), now).is_stale(now));
    }

    #[tokio::test(start_paused = true)]
    async fn a_listing_without_the_hint_never_runs_out() {
        let now = Instant::now();
        let day = Duration::from_secs(86_400);
        assert!(!Freshness::of_page(None, now).is_stale(now + day));
        let mixed = Freshness::of_page(Some(1), now).and(Freshness::of_page(None, now));
        assert!(!mixed.is_stale(now + day));
        // A ttl too long to add to the clock is none rather than a panic.
        assert!(!Freshness::of_page(Some(u64::MAX), now).is_stale(now + day));
    }

    #[tokio::test(start_paused = true)]
    async fn one_relisting_at_a_time_for_a_listing_that_ran_out() {
        let age = ListingAge::default();
        assert!(!age.start_relisting(), "no hint: never out");
        age.listed(Freshness::of_page(Some(1_000), Instant::now()));
        assert!(!age.start_relisting(), "still fresh");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(age.start_relisting());
        assert!(!age.start_relisting(), "one is under way");
        age.relisting_done();
        assert!(age.start_relisting(), "it failed: tried again");
        age.relisting_done();
        age.listed(Freshness::of_page(Some(1_000), Instant::now()));
        assert!(!age.start_relisting(), "listed again: fresh");
    }
}
