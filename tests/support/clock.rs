//! A clock a test moves by hand, for stores driven outside tokio (`futures::executor`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use hookchain::interrupt::Clock;

/// The system's time when made, moved on only by [`advance`](Self::advance).
#[derive(Clone)]
pub(crate) struct ManualClock {
    start: SystemTime,
    millis: Arc<AtomicU64>,
}

impl ManualClock {
    pub(crate) fn new() -> Self {
        ManualClock {
            start: SystemTime::now(),
            millis: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The store's clock reading this one.
    pub(crate) fn clock(&self) -> Clock {
        let (start, millis) = (self.start, Arc::clone(&self.millis));
        Clock::from_fn(move || start + Duration::from_millis(millis.load(Ordering::SeqCst)))
    }

    pub(crate) fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.millis.fetch_add(by, Ordering::SeqCst);
    }
}
