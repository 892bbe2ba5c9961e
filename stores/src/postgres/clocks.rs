//! The two clocks of a [`PostgresCheckpointer`](super::PostgresCheckpointer): the database's,
//! which judges leases and retention, and the worker's, in which the times it hands back are.

use std::time::{Instant, SystemTime};

use hookchain_core::interrupt::Clock;

/// Whose clock says what. The database's judges: every worker's operation reads it in the
/// same transaction that decides, so workers whose clocks disagree (by any amount) still agree
/// on whether a lease is live. The worker's ([`Clock`], the system's unless given) is only the
/// one the times handed back are translated into, because the worker compares them with its
/// own clock (a run stops when its lease's expiry passes, by the worker's clock).
///
/// A clock given with [`with_clock`](super::PostgresCheckpointer::with_clock) also moves the
/// database's time as this store judges it, by how far that clock has run ahead of real time
/// since it was given (or fallen behind it): its offset counts for nothing (the skew that
/// judging by the database's clock removes), its pace does. A clock that keeps real time's
/// pace (the system's, or one set an hour off) moves nothing; tokio's paused clock
/// (`Clock::tokio` in a test that starts paused) stands still, and so does the judged time,
/// until `tokio::time::advance` moves both: the one way a test can move the database's time.
#[derive(Clone, Debug)]
pub(super) struct Clocks {
    worker: Clock,
    /// Where the worker's clock and real time stood when the clock was given; `None` with
    /// the system's clock by default, so that the judged time is the database's, exactly.
    given: Option<Given>,
}

/// A given clock's reading, and real time's (monotonic), at one moment.
#[derive(Clone, Copy, Debug)]
struct Given {
    clock: SystemTime,
    real: Instant,
}

impl Clocks {
    /// The system's clock for the worker; the database's, unmoved, for judging.
    pub(super) fn system() -> Self {
        Clocks {
            worker: Clock::system(),
            given: None,
        }
    }

    /// `worker` for the worker's clock, its pace moving the judged time from now on.
    pub(super) fn given(worker: Clock) -> Self {
        let given = Given {
            clock: worker.now(),
            real: Instant::now(),
        };
        Clocks {
            worker,
            given: Some(given),
        }
    }

    /// The time by the worker's clock.
    pub(super) fn worker_now(&self) -> SystemTime {
        self.worker.now()
    }

    /// The time leases are judged at while the database's clock reads `database`: that, moved
    /// by how far a given clock has left real time's pace.
    pub(super) fn judged(&self, database: SystemTime) -> SystemTime {
        let Some(given) = &self.given else {
            return database;
        };
        // Where the given clock would be had it kept real time's pace.
        let at_real_pace = given.clock + given.real.elapsed();
        moved(database, at_real_pace, self.worker.now())
    }

    /// `at`, a judged time (an expiry), in the worker's clock: as far from `worker_now` as it
    /// was from `judged_now`. `worker_now` is read before the operation that judged at
    /// `judged_now` began, so a lease's expiry comes out no later, in real time, than the
    /// database has it: a worker counts its lease expired no later than the database does.
    pub(super) fn heard(
        at: SystemTime,
        judged_now: SystemTime,
        worker_now: SystemTime,
    ) -> SystemTime {
        moved(worker_now, judged_now, at)
    }
}

/// `time` moved by as much as `to` is after `from` (or back, before); unmoved where the
/// result could not be represented.
fn moved(time: SystemTime, from: SystemTime, to: SystemTime) -> SystemTime {
    match to.duration_since(from) {
        Ok(ahead) => time.checked_add(ahead),
        Err(behind) => time.checked_sub(behind.duration()),
    }
    .unwrap_or(time)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_000_000 + seconds)
    }

    #[test]
    fn the_system_s_clock_judges_by_the_database_s_time_exactly() {
        assert_eq!(Clocks::system().judged(at(5)), at(5));
    }

    #[test]
    fn a_given_clock_s_offset_does_not_move_the_judged_time() {
        let hour_ahead = Clocks::given(Clock::from_fn(|| {
            SystemTime::now() + Duration::from_secs(3600)
        }));
        let judged = hour_ahead.judged(at(5));
        let off = judged
            .duration_since(at(5))
            .unwrap_or_else(|behind| behind.duration());
        assert!(off < Duration::from_secs(1), "moved by {off:?}");
    }

    #[test]
    fn a_clock_that_stands_still_holds_the_judged_time_back() {
        let still = Clocks::given(Clock::from_fn(|| at(0)));
        std::thread::sleep(Duration::from_millis(20));
        assert!(still.judged(at(5)) <= at(5) - Duration::from_millis(20));
    }

    #[test]
    fn times_are_heard_as_far_from_the_worker_s_now() {
        assert_eq!(Clocks::heard(at(30), at(10), at(100)), at(120));
        assert_eq!(Clocks::heard(at(10), at(30), at(100)), at(80));
    }

    #[test]
    fn a_time_past_what_can_be_represented_is_left_unmoved() {
        // The latest time this platform represents in whole seconds.
        let Some(last) = UNIX_EPOCH.checked_add(Duration::from_secs(i64::MAX.unsigned_abs()))
        else {
            return;
        };
        assert_eq!(moved(last, at(0), at(10)), last);
    }
}
