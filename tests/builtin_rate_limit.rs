//! `RateLimit`, rule by rule (DESIGN §11), on tokio's paused clock.
#![cfg(feature = "tokio")]

use std::sync::Mutex;
use std::time::Duration;

use hookchain::builtin::retry::Jitter;
use hookchain::builtin::{ModelRetry, RateLimit};
use hookchain::prelude::*;
use hookchain::{Model, ModelError, Principal, RunContext, chain};
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

fn per_principal(requests: usize, interval: Duration) -> RateLimit {
    RateLimit::builder()
        .requests(requests)
        .interval(interval)
        .per_principal()
        .build()
        .unwrap()
}

/// Runs `agent` once for `principal` (none: no principal in its run context); when the run
/// ended, as an offset from `start`.
async fn run_for<C: Middleware>(
    agent: &Agent<Clocked, C>,
    principal: Option<&str>,
    start: Instant,
) -> Duration {
    let context = match principal {
        Some(id) => RunContext::new().with(Principal::new(id)),
        None => RunContext::new(),
    };
    agent.with_context(context).run("hi").await.unwrap();
    Instant::now() - start
}

#[tokio::test(start_paused = true)]
async fn per_principal_each_principal_has_a_window_of_its_own() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![per_principal(2, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    let alice = Some("alice");
    let bob = Some("bob");
    // Alice's third call waits for her own window; Bob's two do not wait behind hers.
    let ends = tokio::join!(
        run_for(&agent, alice, start),
        run_for(&agent, alice, start),
        run_for(&agent, alice, start),
        run_for(&agent, bob, start),
        run_for(&agent, bob, start),
    );
    assert_eq!(ends, (secs(0), secs(0), secs(10), secs(0), secs(0)));
    // Bob's third waits for his own window only: 10 s after his first two.
    assert_eq!(run_for(&agent, bob, start).await, secs(10));
}

#[tokio::test(start_paused = true)]
async fn per_principal_the_runs_without_a_principal_share_one_window_of_their_own() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![per_principal(1, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    assert_eq!(run_for(&agent, None, start).await, secs(0));
    // Alice, and the anonymous principal, do not wait behind the run without a principal.
    assert_eq!(run_for(&agent, Some("alice"), start).await, secs(0));
    let anonymous = RunContext::new().with(Principal::anonymous());
    agent.with_context(anonymous).run("hi").await.unwrap();
    assert_eq!(Instant::now() - start, secs(0));
    // The next run without a principal waits for the first one's window.
    assert_eq!(run_for(&agent, None, start).await, secs(10));
}

#[tokio::test(start_paused = true)]
async fn by_default_every_principal_shares_one_window() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![limit(1, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    assert_eq!(run_for(&agent, Some("alice"), start).await, secs(0));
    assert_eq!(run_for(&agent, Some("bob"), start).await, secs(10));
    assert_eq!(run_for(&agent, None, start).await, secs(20));
}

#[tokio::test(start_paused = true)]
async fn per_principal_a_dropped_waiter_gives_its_slot_back_to_its_principals_window() {
    use futures::FutureExt;

    let agent = Agent::builder(Clocked::default())
        .chain(chain![per_principal(1, secs(60))])
        .build()
        .unwrap();
    let start = Instant::now();
    let alice = agent.with_context(RunContext::new().with(Principal::new("alice")));
    alice.run("first").await.unwrap();
    // 20 calls of Alice's take her next 20 slots, then are dropped while they wait.
    let mut waiters: Vec<_> = (0..20).map(|_| Box::pin(alice.run("dropped"))).collect();
    for waiter in &mut waiters {
        assert!(waiter.now_or_never().is_none(), "a waiter did not wait");
    }
    drop(waiters);
    // Her next call waits for her first call's minute only.
    assert_eq!(run_for(&agent, Some("alice"), start).await, secs(60));
}

#[tokio::test(start_paused = true)]
async fn per_principal_many_principals_over_time_each_get_their_slots() {
    let agent = Agent::builder(Clocked::default())
        .chain(chain![per_principal(1, secs(10))])
        .build()
        .unwrap();
    let start = Instant::now();
    // 1,000 principals, one call each: none waits (their windows are pruned past 64, 128, …,
    // and none in its interval is dropped).
    for n in 0..1_000 {
        let id = format!("user-{n}");
        assert_eq!(run_for(&agent, Some(&id), start).await, secs(0));
    }
    // A second call of each of the first ones waits for its own window.
    assert_eq!(run_for(&agent, Some("user-0"), start).await, secs(10));
    // Past the interval (the spent windows dropped), a call of any principal does not wait.
    tokio::time::sleep(secs(30)).await;
    assert_eq!(run_for(&agent, Some("user-999"), start).await, secs(40));
    assert_eq!(run_for(&agent, Some("user-0"), start).await, secs(40));
    assert_eq!(run_for(&agent, Some("user-0"), start).await, secs(50));
}
