//! One window of starts: when the next call may start, at most `requests` per `interval`.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The starts of the calls that started less than `interval` ago, and of those waiting to
/// start, oldest first (non-decreasing). Older ones may linger until the next slot is taken.
pub(super) type Starts = VecDeque<Instant>;

/// At most `requests` starts in any window of `interval`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limit {
    pub(super) requests: usize,
    pub(super) interval: Duration,
}

impl Limit {
    /// Takes the next slot of `starts`, asked for at `now`: when the call may start.
    pub(super) fn take_slot(self, starts: &mut Starts, now: Instant) -> Instant {
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

    /// Whether no start of `starts` is in the window any more at `now`: a call would find it
    /// as if it were empty.
    pub(super) fn is_spent(self, starts: &Starts, now: Instant) -> bool {
        // The starts are in order: the last one leaves the window last.
        starts
            .back()
            .is_none_or(|&last| self.left_window(last) <= now)
    }

    /// When a call started at `start` has left the window: `interval` later (an interval too
    /// long for the clock: in about a century).
    pub(super) fn left_window(self, start: Instant) -> Instant {
        const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
        start
            .checked_add(self.interval)
            .or_else(|| start.checked_add(CENTURY))
            .unwrap_or(start)
    }
}

/// Gives back the slot taken in `starts` for `start`, by a call that will not start.
pub(super) fn give_back(starts: &mut Starts, start: Instant) {
    // Equal starts are interchangeable: any one of them goes.
    let at = starts.partition_point(|&taken| taken <= start);
    if at > 0 && starts[at - 1] == start {
        starts.remove(at - 1);
    }
}
