//! The wait between two attempts: exponential, capped, jittered, at least what the provider asked.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::builtin::ConfigError;

/// How the delays of a retry vary around their exponential value: by a random ±25 %, so that
/// clients that failed together do not retry together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Jitter {
    /// ±25 %, from a generator seeded at random when the middleware is built (the default).
    #[default]
    Random,
    /// ±25 %, from a generator seeded with this value: the same seed gives the same delays
    /// (for tests and replays).
    Seeded(u64),
    /// No jitter: the delays are exactly `initial × factor^n`, capped.
    None,
}

/// The delays of a retry: `initial × factor^n` for the `n`-th retry (from 0), capped at
/// `max_delay`, jittered by ±25 % (never below zero), and never shorter than the provider's
/// `Retry-After`.
pub(crate) struct Backoff {
    initial: Duration,
    factor: f64,
    max_delay: Duration,
    jitter: Jitter,
    /// SplitMix64's state: a lock-free generator shared by concurrent calls (tool retries run
    /// concurrently), so no draw needs a lock.
    rng: AtomicU64,
}

impl Backoff {
    pub(crate) const DEFAULT_INITIAL: Duration = Duration::from_millis(500);
    pub(crate) const DEFAULT_FACTOR: f64 = 2.0;
    pub(crate) const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);

    /// Checks the settings: `factor` finite and at least 1, `max_delay` at least `initial`.
    pub(crate) fn new(
        initial: Duration,
        factor: f64,
        max_delay: Duration,
        jitter: Jitter,
    ) -> Result<Self, ConfigError> {
        if !factor.is_finite() || factor < 1.0 {
            return Err(ConfigError::new(
                "factor",
                format!(
                    "must be a finite number of at least 1 (delays never shrink), not {factor}"
                ),
            ));
        }
        if max_delay < initial {
            return Err(ConfigError::new(
                "max_delay",
                format!("must be at least initial_delay ({initial:?}), not {max_delay:?}"),
            ));
        }
        let seed = match jitter {
            Jitter::Seeded(seed) => seed,
            // A random key of the standard library's hasher: random per process, no dependency.
            Jitter::Random => RandomState::new().hash_one(0x5EED_u64),
            Jitter::None => 0,
        };
        Ok(Backoff {
            initial,
            factor,
            max_delay,
            jitter,
            rng: AtomicU64::new(seed),
        })
    }

    /// The wait before retry number `retry` (0 for the first retry) after a failure that asked
    /// for `retry_after`.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let exponential = self.initial.as_nanos() as f64
            * self.factor.powi(i32::try_from(retry).unwrap_or(i32::MAX));
        // `min` also tames an infinite power; the cap is a `Duration`, so the result fits.
        let capped = exponential.min(self.max_delay.as_nanos() as f64);
        let jittered = match self.jitter {
            Jitter::None => capped,
            Jitter::Random | Jitter::Seeded(_) => capped * (0.75 + 0.5 * self.unit()),
        };
        let delay = Duration::from_nanos(jittered.max(0.0).round() as u64);
        delay.max(retry_after.unwrap_or(Duration::ZERO))
    }

    /// A number in `[0, 1)`, from SplitMix64.
    fn unit(&self) -> f64 {
        const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .rng
            .fetch_add(GOLDEN, Ordering::Relaxed)
            .wrapping_add(GOLDEN);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1_u64 << 53) as f64
    }
}

impl fmt::Debug for Backoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backoff")
            .field("initial", &self.initial)
            .field("factor", &self.factor)
            .field("max_delay", &self.max_delay)
            .field("jitter", &self.jitter)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backoff(jitter: Jitter) -> Backoff {
        Backoff::new(
            Duration::from_millis(100),
            2.0,
            Duration::from_millis(500),
            jitter,
        )
        .unwrap()
    }

    #[test]
    fn delays_grow_by_the_factor_up_to_the_cap() {
        let b = backoff(Jitter::None);
        let delays: Vec<_> = (0..5).map(|n| b.delay(n, None).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
        assert_eq!(b.delay(1000, None), Duration::from_millis(500));
    }

    #[test]
    fn jitter_stays_within_a_quarter_and_is_never_negative() {
        let b = backoff(Jitter::Seeded(7));
        for n in 0..200 {
            let base = backoff(Jitter::None).delay(n % 4, None).as_secs_f64();
            let d = b.delay(n % 4, None).as_secs_f64();
            assert!(
                d >= base * 0.75 - 1e-9 && d <= base * 1.25 + 1e-9,
                "{d} vs {base}"
            );
        }
        let zero = Backoff::new(Duration::ZERO, 1.0, Duration::ZERO, Jitter::Seeded(1)).unwrap();
        assert_eq!(zero.delay(3, None), Duration::ZERO);
    }

    #[test]
    fn the_same_seed_gives_the_same_delays() {
        let (a, b, c) = (
            backoff(Jitter::Seeded(42)),
            backoff(Jitter::Seeded(42)),
            backoff(Jitter::Seeded(43)),
        );
        let run = |x: &Backoff| (0..4).map(|n| x.delay(n, None)).collect::<Vec<_>>();
        let first = run(&a);
        assert_eq!(first, run(&b));
        assert_ne!(first, run(&c));
    }

    #[test]
    fn retry_after_is_a_lower_bound() {
        let b = backoff(Jitter::None);
        assert_eq!(
            b.delay(0, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            b.delay(2, Some(Duration::from_millis(10))),
            Duration::from_millis(400)
        );
    }

    #[test]
    fn bad_settings_name_their_field() {
        let err = Backoff::new(Duration::ZERO, 0.5, Duration::ZERO, Jitter::None).unwrap_err();
        assert_eq!(err.field(), "factor");
        let err = Backoff::new(Duration::ZERO, f64::NAN, Duration::ZERO, Jitter::None).unwrap_err();
        assert_eq!(err.field(), "factor");
        let err = Backoff::new(
            Duration::from_secs(2),
            2.0,
            Duration::from_secs(1),
            Jitter::None,
        )
        .unwrap_err();
        assert_eq!(err.field(), "max_delay");
    }
}
