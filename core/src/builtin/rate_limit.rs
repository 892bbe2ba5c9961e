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
//!   agent built with it: a provider's rate limit is per key, not per conversation. A call
//!   dropped while it waits keeps its slot (the limit errs on the safe side).
//! - The starts are kept in a buffer of `requests` entries made when the limit is built: taking
//!   a slot allocates nothing. A wait is a `tracing` debug event.
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
    /// The starts of the last `requests` calls (some perhaps still to come), oldest first;
    /// never longer than `requests`, and non-decreasing.
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
        // Not before the last start (slots are taken in order), nor before the oldest of a
        // full window has left it.
        let mut start = starts.back().map_or(now, |&last| last.max(now));
        if starts.len() == self.requests
            && let Some(oldest) = starts.pop_front()
        {
            start = start.max(oldest + self.interval);
        }
        starts.push_back(start);
        start
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
            tokio::time::sleep_until(start).await;
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
