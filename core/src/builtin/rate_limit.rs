//! [`RateLimit`]: at most N model requests per interval; a call over the limit waits for a slot.
//!
//! # The rules
//!
//! - **At most `requests` model calls start in any window of `interval`.** A call that would
//!   exceed it waits (on tokio's timer) until the oldest of the last `requests` starts is
//!   `interval` old; it is never refused. Calls take slots in the order they ask for them.
//! - Each attempt counts: list the limit *inside* a retry or a fallback so that every request
//!   sent is counted and waits, and *outside* a timeout so that the wait is not part of the
//!   model's time.
//! - **Scope: the middleware value.** The starts are kept in the middleware behind a mutex
//!   (held only to take a slot, never across a wait), shared by every run and thread of an
//!   agent built with it: a provider's rate limit is per key, not per conversation.
//! - **A call dropped while it waits gives its slot back** (a timeout around it, a cancelled
//!   run): the calls that ask after it do not wait for it. The calls already waiting behind it
//!   keep the turn they were given (never earlier: the limit still holds).
//! - The starts still in the window and those to come are kept in a buffer of `requests`
//!   entries made when the limit is built: taking a slot allocates nothing unless more calls
//!   are waiting than `requests`. A wait is a `tracing` debug event.
//!
//! ```
//! use std::time::Duration;
//! use hookchain::builtin::RateLimit;
//!
//! let limit = RateLimit::builder()
//!     .requests(50)
//!     .interval(Duration::from_secs(60))
//!     .build()?;
//! # let _ = hookchain::chain![limit];
//! # Ok::<(), hookchain::builtin::ConfigError>(())
//! ```

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use hookchain_macros::middleware;
use tokio::time::Instant;

use crate::builtin::ConfigError;
use crate::context::Context;
use crate::error::Error;
use crate::lock::lock;
use crate::middleware::ModelNext;
use crate::model::{ModelRequest, ModelResponse};

/// Lets at most `requests` model calls start per `interval` (see the [module docs](self)).
#[derive(Debug)]
pub struct RateLimit {
    requests: usize,
    interval: Duration,
    /// The starts of the calls that started less than `interval` ago, and of those waiting
    /// to start, oldest first (non-decreasing). Older ones may linger until the next slot
    /// is taken.
    starts: Mutex<VecDeque<Instant>>,
}

impl RateLimit {
    /// A builder with no limit set yet.
    #[must_use]
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder {
            requests: 0,
            interval: Duration::ZERO,
        }
    }

    /// Takes the next slot: when the call may start.
    fn take_slot(&self) -> Instant {
        let mut starts = lock(&self.starts);
        let now = Instant::now();
        // A start `interval` old or older is in no window of a call starting from now on.
        while starts
            .front()
            .is_some_and(|&oldest| self.left_window(oldest) <= now)
        {
            starts.pop_front();
        }
        // Not before the last start (slots are taken in order), nor before the `requests`-th
        // latest start has left the window.
        let mut start = starts.back().map_or(now, |&last| last.max(now));
        if let Some(&bound) = starts
            .len()
            .checked_sub(self.requests)
            .and_then(|at| starts.get(at))
        {
            start = start.max(self.left_window(bound));
        }
        starts.push_back(start);
        start
    }

    /// When a call started at `start` has left the window: `interval` later (an interval too
    /// long for the clock: in about a century).
    fn left_window(&self, start: Instant) -> Instant {
        const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        start
            .checked_add(self.interval)
            .or_else(|| start.checked_add(CENTURY))
            .unwrap_or(start)
    }

    /// Gives back the slot taken for `start`, by a call that will not start.
    fn give_back(&self, start: Instant) {
        let mut starts = lock(&self.starts);
        // Equal starts are interchangeable: any one of them goes.
        let at = starts.partition_point(|&taken| taken <= start);
        if at > 0 && starts[at - 1] == start {
            starts.remove(at - 1);
        }
    }
}

/// A slot taken and not used yet: dropped before [`used`](Slot::used), it goes back.
struct Slot<'a> {
    limit: &'a RateLimit,
    start: Instant,
    used: bool,
}

impl Slot<'_> {
    fn used(mut self) {
        self.used = true;
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.used {
            self.limit.give_back(self.start);
        }
    }
}

#[middleware(crate = crate, live_stream)]
impl RateLimit {
    /// Waits for a slot, then calls the model.
    #[hook(wrap_model_call)]
    async fn limit(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let start = self.take_slot();
        if start > Instant::now() {
            tracing::debug!(
                wait = ?(start - Instant::now()),
                requests = self.requests,
                interval = ?self.interval,
                "RateLimit: waiting for a slot"
            );
            // Dropped during the wait (this future cancelled), the slot goes back.
            let slot = Slot {
                limit: self,
                start,
                used: false,
            };
            tokio::time::sleep_until(start).await;
            slot.used();
        }
        next.call(cx, request).await
    }
}

/// Builds a [`RateLimit`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
pub struct RateLimitBuilder {
    requests: usize,
    interval: Duration,
}

impl RateLimitBuilder {
    /// The most requests per interval: each is a start kept in memory.
    const MAX_REQUESTS: usize = 1 << 20;

    /// At most this many model calls per interval (at least 1).
    #[must_use]
    pub fn requests(mut self, requests: usize) -> Self {
        self.requests = requests;
        self
    }

    /// The window the count is over (not zero).
    #[must_use]
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The limit, or the first setting that cannot work: no request allowed, a zero interval.
    pub fn build(self) -> Result<RateLimit, ConfigError> {
        if self.requests == 0 {
            return Err(ConfigError::new(
                "requests",
                "is 0 (or unset): no model call could ever start",
            ));
        }
        if self.requests > Self::MAX_REQUESTS {
            return Err(ConfigError::new(
                "requests",
                format!(
                    "is {} (at most {} per interval: the starts are kept in memory; use a \
                     shorter interval)",
                    self.requests,
                    Self::MAX_REQUESTS
                ),
            ));
        }
        if self.interval.is_zero() {
            return Err(ConfigError::new(
                "interval",
                "is zero (or unset): set the window",
            ));
        }
        Ok(RateLimit {
            requests: self.requests,
            interval: self.interval,
            starts: Mutex::new(VecDeque::with_capacity(self.requests)),
        })
    }
}
