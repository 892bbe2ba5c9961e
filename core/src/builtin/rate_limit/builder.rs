//! [`RateLimitBuilder`]: the settings of a [`RateLimit`], checked.

use std::sync::Mutex;
use std::time::Duration;

use super::principal_windows::PrincipalWindows;
use super::window::{Limit, Starts};
use super::{RateLimit, Windows};
use crate::builtin::ConfigError;

/// Builds a [`RateLimit`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
pub struct RateLimitBuilder {
    requests: usize,
    interval: Duration,
    per_principal: bool,
}

impl RateLimitBuilder {
    /// The most requests per interval: each is a start kept in memory.
    const MAX_REQUESTS: usize = 1 << 20;

    /// No limit set yet, one window for all.
    pub(super) fn new() -> Self {
        RateLimitBuilder {
            requests: 0,
            interval: Duration::ZERO,
            per_principal: false,
        }
    }

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

    /// Gives each [`Principal`](crate::Principal) a run is for (read from its context; the
    /// same tenant and id are one principal, the anonymous principal is one) a window of its
    /// own: `requests` per `interval` each, and as many for the runs without a principal,
    /// together. By default, one window is shared by every run.
    ///
    /// A limit per principal keeps one user from taking another's turns; a provider's limit
    /// is per key still: list a shared limit too, *after* (inside) this one, so that a call
    /// takes one of the key's slots only once its principal's turn has come.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hookchain::builtin::RateLimit;
    ///
    /// let per_user = RateLimit::builder()
    ///     .requests(5)
    ///     .interval(Duration::from_secs(60))
    ///     .per_principal()
    ///     .build()?;
    /// let per_key = RateLimit::builder()
    ///     .requests(500)
    ///     .interval(Duration::from_secs(60))
    ///     .build()?;
    /// let chain = hookchain::chain![per_user, per_key];
    /// # Ok::<(), hookchain::builtin::ConfigError>(())
    /// ```
    #[must_use]
    pub fn per_principal(mut self) -> Self {
        self.per_principal = true;
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
            limit: Limit {
                requests: self.requests,
                interval: self.interval,
            },
            per_principal: self.per_principal,
            windows: Mutex::new(Windows {
                shared: Starts::with_capacity(self.requests),
                by_principal: PrincipalWindows::new(),
            }),
        })
    }
}
