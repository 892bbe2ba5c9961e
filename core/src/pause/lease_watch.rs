//! [`LeaseWatch`]: what a run knows of its lease while it goes — how long since the store last
//! granted or renewed it — so that no tool call starts on a lease about to run out.
//!
//! It is judged by this process's monotonic clock (tokio's, so that tests can pause it), from
//! the moment each renewal was answered: never by comparing this machine's wall clock with the
//! store's, which may differ.

use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "tokio")]
use std::time::Duration;

use super::Lease;

/// A run's lease as its renewals last heard of it, shared by the run and the task that renews
/// it.
#[derive(Debug)]
pub(crate) struct LeaseWatch {
    /// How long the lease lasts from a grant or a renewal.
    #[cfg(feature = "tokio")]
    ttl: Duration,
    /// When the store last granted or renewed it.
    #[cfg(feature = "tokio")]
    heard: std::sync::Mutex<tokio::time::Instant>,
    /// Whether a task renews the lease (without one — no tokio runtime — writes renew it, and
    /// nothing is judged here).
    watched: AtomicBool,
    /// Whether a tool call was kept from starting for want of lease.
    ran_short: AtomicBool,
    /// Whether the run is writing its end (a pause, a tombstone, its key let go): the renewals
    /// stop, and a renewal refused from then on is the end's doing, not a lost lease.
    settling: AtomicBool,
}

impl LeaseWatch {
    /// The watch of `lease`, granted now.
    pub(crate) fn new(lease: &Lease) -> Self {
        #[cfg(not(feature = "tokio"))]
        let _ = lease;
        LeaseWatch {
            #[cfg(feature = "tokio")]
            ttl: lease.ttl(),
            #[cfg(feature = "tokio")]
            heard: std::sync::Mutex::new(tokio::time::Instant::now()),
            watched: AtomicBool::new(false),
            ran_short: AtomicBool::new(false),
            settling: AtomicBool::new(false),
        }
    }

    /// The run writes its end from now on.
    pub(crate) fn settle(&self) {
        self.settling.store(true, Ordering::Release);
    }

    /// Whether the run is writing its end.
    #[cfg(feature = "tokio")]
    pub(crate) fn settling(&self) -> bool {
        self.settling.load(Ordering::Acquire)
    }

    /// A task renews the lease from now on.
    #[cfg(feature = "tokio")]
    pub(crate) fn watched(&self) {
        self.watched.store(true, Ordering::Release);
    }

    /// The store renewed the lease just now.
    #[cfg(feature = "tokio")]
    pub(crate) fn renewed(&self) {
        *crate::lock::lock(&self.heard) = tokio::time::Instant::now();
    }

    /// Whether a tool call may start now: at least a third of the lease left since the store
    /// last renewed it (renewals come every third, so a healthy lease has less only when its
    /// renewals are late or failing), always when no task renews it.
    pub(crate) fn has_margin(&self) -> bool {
        if !self.watched.load(Ordering::Acquire) {
            return true;
        }
        #[cfg(feature = "tokio")]
        {
            let since = crate::lock::lock(&self.heard).elapsed();
            if since + self.ttl / 3 > self.ttl {
                return false;
            }
        }
        true
    }

    /// Whether the whole lease passed since the store last granted or renewed it (its renewals
    /// were held up: a frozen process, a starved runtime): another worker may have taken the
    /// key by now, and a run that finds it so stops rather than renew it late.
    #[cfg(feature = "tokio")]
    pub(crate) fn expired(&self) -> bool {
        crate::lock::lock(&self.heard).elapsed() >= self.ttl
    }

    /// A tool call was kept from starting for want of lease: the run stops after its step.
    pub(crate) fn ran_short_now(&self) {
        self.ran_short.store(true, Ordering::Release);
    }

    /// Whether a tool call was kept from starting for want of lease.
    pub(crate) fn ran_short(&self) -> bool {
        self.ran_short.load(Ordering::Acquire)
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_call_starts_only_with_a_third_of_the_lease_left_once_a_task_renews_it() {
        let lease = Lease::new(
            "w",
            1,
            Duration::from_secs(30),
            std::time::SystemTime::now(),
        );
        let watch = LeaseWatch::new(&lease);
        tokio::time::advance(Duration::from_secs(60)).await;
        // Unwatched: writes renew it, nothing is judged.
        assert!(watch.has_margin());
        watch.watched();
        watch.renewed();
        tokio::time::advance(Duration::from_secs(20)).await;
        assert!(watch.has_margin());
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(!watch.has_margin());
        assert!(!watch.ran_short());
        watch.ran_short_now();
        assert!(watch.ran_short());
        watch.renewed();
        assert!(watch.has_margin());
    }
}
