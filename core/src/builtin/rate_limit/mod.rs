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
//! - **Scope: the middleware value, or each principal.** The starts are kept in the middleware
//!   behind a mutex (held only to take a slot, never across a wait). By default they are one
//!   window, shared by every run and thread of an agent built with it: a provider's rate limit
//!   is per key, not per conversation. Built [`per_principal`](RateLimitBuilder::per_principal),
//!   each [`Principal`] a run is for (read from its context: the same tenant and id are one
//!   principal, the anonymous principal is one) has a window of its own, of `requests` per
//!   `interval`, and the runs without a principal share one more. A principal's window whose
//!   starts have all left the interval is dropped, in passes whose cost is amortized over the
//!   calls: the windows kept are at most 64, or twice those of the principals with a call in
//!   the last two intervals, however many principals came before.
//! - **A call dropped while it waits gives its slot back** (a timeout around it, a cancelled
//!   run), in its own window: the calls that ask after it do not wait for it. The calls
//!   already waiting behind it keep the turn they were given (never earlier: the limit still
//!   holds).
//! - The starts still in the shared window and those to come are kept in a buffer of
//!   `requests` entries made when the limit is built: taking a slot allocates nothing unless
//!   more calls are waiting than `requests`. A principal's window grows with its calls (and
//!   taking a slot in it copies the principal's id and tenant). A wait is a `tracing` debug
//!   event.
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

mod builder;
mod principal_windows;
mod window;

use std::sync::Mutex;

use hookchain_macros::middleware;
use tokio::time::Instant;

pub use builder::RateLimitBuilder;
use principal_windows::{PrincipalKey, PrincipalWindows};
use window::{Limit, Starts, give_back};

use crate::context::{Context, Principal};
use crate::error::Error;
use crate::lock::lock;
use crate::middleware::ModelNext;
use crate::model::{ModelRequest, ModelResponse};

/// Lets at most `requests` model calls start per `interval`, in all or per principal (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct RateLimit {
    limit: Limit,
    /// Whether each principal has a window of its own.
    per_principal: bool,
    windows: Mutex<Windows>,
}

/// The windows of starts of a [`RateLimit`].
#[derive(Debug)]
struct Windows {
    /// The window of every call; built per principal, of the calls of runs without one.
    shared: Starts,
    /// The principals' windows: empty unless built per principal.
    by_principal: PrincipalWindows,
}

impl RateLimit {
    /// A builder with no limit set yet.
    #[must_use]
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder::new()
    }

    /// The window a call of `cx`'s run counts in: its principal's, or `None` for the shared
    /// one.
    fn window_of(&self, cx: &Context) -> Option<PrincipalKey> {
        if !self.per_principal {
            return None;
        }
        cx.get::<Principal>().map(PrincipalKey::of)
    }

    /// Takes the next slot in `window` (`None`: the shared one): when the call may start.
    fn take_slot(&self, window: Option<&PrincipalKey>) -> Instant {
        let mut windows = lock(&self.windows);
        let now = Instant::now();
        match window {
            None => self.limit.take_slot(&mut windows.shared, now),
            Some(principal) => windows.by_principal.take_slot(principal, self.limit, now),
        }
    }

    /// Gives back the slot taken in `window` for `start`, by a call that will not start.
    fn give_back(&self, window: Option<&PrincipalKey>, start: Instant) {
        let mut windows = lock(&self.windows);
        match window {
            None => give_back(&mut windows.shared, start),
            Some(principal) => windows.by_principal.give_back(principal, start),
        }
    }
}

/// A slot taken and not used yet: dropped before [`used`](Slot::used), it goes back to its
/// window.
struct Slot<'a> {
    limit: &'a RateLimit,
    window: Option<PrincipalKey>,
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
            self.limit.give_back(self.window.as_ref(), self.start);
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
        let window = self.window_of(cx);
        let start = self.take_slot(window.as_ref());
        if start > Instant::now() {
            tracing::debug!(
                wait = ?(start - Instant::now()),
                requests = self.limit.requests,
                interval = ?self.limit.interval,
                principal_window = window.is_some(),
                "RateLimit: waiting for a slot"
            );
            // Dropped during the wait (this future cancelled), the slot goes back.
            let slot = Slot {
                limit: self,
                window,
                start,
                used: false,
            };
            tokio::time::sleep_until(start).await;
            slot.used();
        }
        next.call(cx, request).await
    }
}
