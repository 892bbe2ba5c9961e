//! [`PrincipalWindows`]: a window of starts per principal, the spent ones dropped in time.

use std::collections::HashMap;

use tokio::time::Instant;

use super::window::{Limit, Starts, give_back};
use crate::context::Principal;

/// Which principal a window is for: its tenant and id, and whether it is the anonymous one
/// (apart from a user whose id happens to be `anonymous`). Its claims are not part of it: they
/// may change from one request of a user to the next.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct PrincipalKey {
    tenant: Option<String>,
    id: String,
    anonymous: bool,
}

impl PrincipalKey {
    pub(super) fn of(principal: &Principal) -> Self {
        PrincipalKey {
            tenant: principal.tenant().map(str::to_owned),
            id: principal.id().to_owned(),
            anonymous: principal.is_anonymous(),
        }
    }
}

/// The windows of starts of the principals, each made at its principal's first call.
///
/// A window whose starts have all left the interval is *spent*: a call would find it as if it
/// were empty, so it can go. Spent windows are dropped by a prune, a pass over the whole map
/// that is due, once it holds [`MIN_PRUNE_LEN`](Self::MIN_PRUNE_LEN) windows, when
///
/// - it holds twice as many as the last prune kept: the pass is paid for by the windows made
///   since, at least as many as it scans; or
/// - an interval has passed since the last prune: a window it keeps is not spent, so it had a
///   call (or a waiting one) less than an interval ago, after the last prune: the pass is paid
///   for by those calls and by the windows it drops. Without it, the windows of a burst of
///   principals who then go quiet would stay until the map doubled again.
///
/// So a call costs amortized O(1), and the map holds at most 64 windows, or twice those of the
/// principals with a call in the last two intervals.
#[derive(Debug)]
pub(super) struct PrincipalWindows {
    windows: HashMap<PrincipalKey, Starts>,
    /// The size at which the next prune is due: twice what the last one kept, at least
    /// [`MIN_PRUNE_LEN`](Self::MIN_PRUNE_LEN).
    prune_at_len: usize,
    /// When the next prune is due (with `MIN_PRUNE_LEN` windows or more): an interval after
    /// the last one; `None` before the first.
    prune_at_time: Option<Instant>,
}

impl PrincipalWindows {
    /// Below this many windows, no prune is due: a pass over a few windows saves little.
    const MIN_PRUNE_LEN: usize = 64;

    /// No window yet (nothing allocated).
    pub(super) fn new() -> Self {
        PrincipalWindows {
            windows: HashMap::new(),
            prune_at_len: Self::MIN_PRUNE_LEN,
            prune_at_time: None,
        }
    }

    /// Takes the next slot of `principal`'s window, asked for at `now`: when the call may
    /// start. Prunes first, if a prune is due.
    pub(super) fn take_slot(
        &mut self,
        principal: &PrincipalKey,
        limit: Limit,
        now: Instant,
    ) -> Instant {
        if self.prune_due(now) {
            self.prune(limit, now);
        }
        if let Some(starts) = self.windows.get_mut(principal) {
            return limit.take_slot(starts, now);
        }
        let mut starts = Starts::new();
        let start = limit.take_slot(&mut starts, now);
        self.windows.insert(principal.clone(), starts);
        start
    }

    /// Gives back the slot taken in `principal`'s window for `start`, by a call that will not
    /// start; a window left empty goes.
    pub(super) fn give_back(&mut self, principal: &PrincipalKey, start: Instant) {
        // A waiting call's start is in its window, so its window was not pruned; if it is
        // gone all the same, there is nothing to give back.
        let Some(starts) = self.windows.get_mut(principal) else {
            return;
        };
        give_back(starts, start);
        if starts.is_empty() {
            self.windows.remove(principal);
        }
    }

    fn prune_due(&self, now: Instant) -> bool {
        let len = self.windows.len();
        len >= self.prune_at_len
            || (len >= Self::MIN_PRUNE_LEN && self.prune_at_time.is_some_and(|at| at <= now))
    }

    /// Drops the spent windows.
    fn prune(&mut self, limit: Limit, now: Instant) {
        self.windows
            .retain(|_, starts| !limit.is_spent(starts, now));
        self.prune_at_len = (2 * self.windows.len()).max(Self::MIN_PRUNE_LEN);
        self.prune_at_time = Some(limit.left_window(now));
    }

    /// The windows held, spent ones not yet dropped included.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.windows.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const INTERVAL: Duration = Duration::from_secs(60);

    fn limit(requests: usize) -> Limit {
        Limit {
            requests,
            interval: INTERVAL,
        }
    }

    fn user(n: usize) -> PrincipalKey {
        PrincipalKey::of(&Principal::new(format!("user-{n}")))
    }

    // The instants are computed, not read from the clock: the rules are about the `now` given.
    #[test]
    fn the_windows_of_principals_gone_quiet_are_dropped() {
        let mut windows = PrincipalWindows::new();
        let t0 = Instant::now();
        for n in 0..1_000 {
            assert_eq!(windows.take_slot(&user(n), limit(1), t0), t0);
        }
        // All in their window: none could be dropped.
        assert_eq!(windows.len(), 1_000);
        // An interval later, one more call (of a principal already seen, or not) and the map
        // holds that call's window only.
        let later = t0 + INTERVAL + Duration::from_millis(1);
        assert_eq!(windows.take_slot(&user(7), limit(1), later), later);
        assert_eq!(windows.len(), 1);
        let mut windows_2 = PrincipalWindows::new();
        for n in 0..1_000 {
            windows_2.take_slot(&user(n), limit(1), t0);
        }
        windows_2.take_slot(&user(5_000), limit(1), later);
        assert_eq!(windows_2.len(), 1);
    }

    #[test]
    fn a_burst_of_new_principals_keeps_the_map_within_twice_the_live_windows() {
        let mut windows = PrincipalWindows::new();
        let t0 = Instant::now();
        // One new principal per second over ten intervals: at most one interval's (60), plus
        // what the last prune kept, are in their window at any time.
        let mut most = 0;
        for n in 0..600 {
            let now = t0 + Duration::from_secs(n as u64);
            windows.take_slot(&user(n), limit(1), now);
            most = most.max(windows.len());
        }
        assert!(
            most <= 2 * 60 + PrincipalWindows::MIN_PRUNE_LEN,
            "{most} windows held"
        );
    }

    #[test]
    fn a_window_with_a_start_in_the_interval_or_waiting_is_kept() {
        let mut windows = PrincipalWindows::new();
        let t0 = Instant::now();
        // `user(0)` has one call started and one waiting a window; the others go quiet.
        windows.take_slot(&user(0), limit(1), t0);
        assert_eq!(windows.take_slot(&user(0), limit(1), t0), t0 + INTERVAL);
        for n in 1..PrincipalWindows::MIN_PRUNE_LEN {
            windows.take_slot(&user(n), limit(1), t0);
        }
        let later = t0 + INTERVAL + Duration::from_secs(1);
        windows.take_slot(&user(1_000), limit(1), later);
        // The waiting call started at `t0 + INTERVAL`: `user(0)`'s window is full until then
        // plus an interval.
        assert_eq!(windows.len(), 2);
        assert_eq!(
            windows.take_slot(&user(0), limit(1), later),
            t0 + 2 * INTERVAL
        );
    }

    #[test]
    fn a_slot_given_back_goes_to_its_principals_window_and_an_empty_window_goes() {
        let mut windows = PrincipalWindows::new();
        let t0 = Instant::now();
        let (alice, bob) = (user(1), user(2));
        windows.take_slot(&alice, limit(1), t0);
        let waiting = windows.take_slot(&alice, limit(1), t0);
        assert_eq!(waiting, t0 + INTERVAL);
        windows.take_slot(&bob, limit(1), t0);
        windows.give_back(&alice, waiting);
        // Alice's next call waits for her first one only; Bob's window is untouched.
        assert_eq!(windows.take_slot(&alice, limit(1), t0), t0 + INTERVAL);
        assert_eq!(windows.take_slot(&bob, limit(1), t0), t0 + INTERVAL);
        windows.give_back(&bob, t0 + INTERVAL);
        windows.give_back(&bob, t0);
        assert_eq!(windows.len(), 1, "Bob's emptied window went");
    }

    #[test]
    fn tenants_and_the_anonymous_principal_are_principals_of_their_own() {
        let alice = Principal::new("alice");
        let keys = [
            PrincipalKey::of(&alice),
            PrincipalKey::of(&alice.clone().with_tenant("acme")),
            PrincipalKey::of(&alice.clone().with_tenant("globex")),
            PrincipalKey::of(&Principal::anonymous()),
            PrincipalKey::of(&Principal::new("anonymous")),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let with_claim = alice.clone().with_claim("role", "admin");
        assert_eq!(PrincipalKey::of(&with_claim), PrincipalKey::of(&alice));
    }
}
