//! `RateLimit`, rule by rule (DESIGN §11), on tokio's paused clock.
#![cfg(feature = "tokio")]

use std::sync::Mutex;
use std::time::Duration;

use hookchain::builtin::retry::Jitter;
use hookchain::builtin::{ModelRetry, RateLimit};
use hookchain::prelude::*;
use hookchain::{Model, ModelError, chain};
use tokio::time::Instant;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A model that records when (on tokio's clock) each call reached it, and fails the calls
/// whose numbers are in `failing`.
#[derive(Default)]
struct Clocked {
    calls: Mutex<Vec<Instant>>,
    failing: Vec<usize>,
}

impl Clocked {
    /// The call times, as offsets from `start`.
    fn offsets(&self, start: Instant) -> Vec<Duration> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|t| *t - start)
            .collect()
    }
}

impl Model for Clocked {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(Instant::now());
            calls.len() - 1
        };
        if self.failing.contains(&n) {
            Err(ModelError::overloaded("busy"))
        } else {
            Ok(ModelResponse::text("ok"))
        }
    }
}

fn limit(requests: usize, interval: Duration) -> RateLimit {
    RateLimit::builder()
        .requests(requests)
        .interval(interval)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn at_most_n_requests_start_per_interval_and_the_rest_wait() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(2, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    for _ in 0..5 {
        agent.run("hi").await.unwrap();
    }
    assert_eq!(
        agent.model().offsets(start),
        [secs(0), secs(0), secs(10), secs(10), secs(20)]
    );
}

#[tokio::test(start_paused = true)]
async fn a_slot_frees_when_the_oldest_start_leaves_the_window() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(2, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    agent.run("hi").await.unwrap();
    tokio::time::sleep(secs(4)).await;
    agent.run("hi").await.unwrap();
    // Full: the third waits until the first is 10 s old, the fourth until the second is.
    agent.run("hi").await.unwrap();
    agent.run("hi").await.unwrap();
    // Long after: no wait.
    tokio::time::sleep(secs(60)).await;
    agent.run("hi").await.unwrap();
    assert_eq!(
        agent.model().offsets(start),
        [secs(0), secs(4), secs(10), secs(14), secs(74)]
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_runs_share_the_limit_and_take_slots_in_order() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(1, secs(5))])
        .build()
        .unwrap();
    let start = Instant::now();
    let (a, b, c) = tokio::join!(agent.run("a"), agent.run("b"), agent.run("c"));
    for output in [a, b, c] {
        output.unwrap();
    }
    assert_eq!(agent.model().offsets(start), [secs(0), secs(5), secs(10)]);
}

#[tokio::test(start_paused = true)]
async fn each_attempt_of_a_retry_outside_takes_a_slot() {
    let model = Clocked {
        failing: vec![0, 1],
        ..Clocked::default()
    };
    let retry = ModelRetry::builder()
        .jitter(Jitter::None)
        .initial_delay(Duration::from_millis(100))
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .chain(chain![retry, limit(1, secs(3))])
        .build()
        .unwrap();
    let start = Instant::now();
    agent.run("hi").await.unwrap();
    // Retries after 0.1 s and 0.2 s, but a slot only every 3 s.
    assert_eq!(agent.model().offsets(start), [secs(0), secs(3), secs(6)]);
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    assert_eq!(
        RateLimit::builder()
            .interval(secs(1))
            .build()
            .unwrap_err()
            .field(),
        "requests"
    );
    assert_eq!(
        RateLimit::builder()
            .requests(5)
            .build()
            .unwrap_err()
            .field(),
        "interval"
    );
    assert_eq!(
        RateLimit::builder()
            .requests(usize::MAX)
            .interval(secs(1))
            .build()
            .unwrap_err()
            .field(),
        "requests"
    );
}

#[tokio::test(start_paused = true)]
async fn a_waiter_dropped_gives_its_slot_back() {
    use futures::FutureExt;

    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(1, secs(60))])
        .build()
        .unwrap();
    let start = Instant::now();
    agent.run("first").await.unwrap();
    // 20 calls take the next 20 slots (a minute apart), then are dropped while they wait.
    let mut waiters: Vec<_> = (0..20).map(|_| Box::pin(agent.run("dropped"))).collect();
    for waiter in &mut waiters {
        assert!(waiter.now_or_never().is_none(), "a waiter did not wait");
    }
    drop(waiters);
    // The next call waits for the first call's minute only, not for the dropped ones'.
    agent.run("next").await.unwrap();
    assert_eq!(agent.model().offsets(start), [secs(0), secs(60)]);
}

#[tokio::test(start_paused = true)]
async fn the_calls_waiting_behind_a_dropped_one_keep_their_turn() {
    use futures::FutureExt;

    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(1, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    agent.run("first").await.unwrap();
    let mut dropped = Box::pin(agent.run("dropped"));
    assert!((&mut dropped).now_or_never().is_none());
    let mut kept = Box::pin(agent.run("kept"));
    assert!((&mut kept).now_or_never().is_none());
    drop(dropped);
    // `kept` keeps its slot at 20 s (never earlier); the one at 10 s went back, yet the next
    // call comes a window after `kept`, not in the same one.
    let (kept, next) = tokio::join!(kept, agent.run("next"));
    kept.unwrap();
    next.unwrap();
    assert_eq!(agent.model().offsets(start), [secs(0), secs(20), secs(30)]);
}

#[tokio::test(start_paused = true)]
async fn an_interval_too_long_for_the_clock_does_not_panic() {
    use futures::FutureExt;

    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(1, Duration::MAX)])
        .build()
        .unwrap();
    agent.run("first").await.unwrap();
    // The next slot is out of reach: the call waits, it does not panic.
    assert!(Box::pin(agent.run("second")).now_or_never().is_none());
    assert_eq!(agent.model().offsets(Instant::now()).len(), 1);
}
