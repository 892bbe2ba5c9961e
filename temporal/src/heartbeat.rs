//! The heartbeats of a step, sent from a task of their own for as long as the step runs.
//!
//! A heartbeat sent from the step's own task stops whenever that task stops being polled: a
//! tool whose body blocks its thread (a synchronous payment SDK, CPU work) silences it, the
//! server times the attempt out, and retries the step while the first attempt still runs. From
//! a task of their own, on a runtime of several threads, the heartbeats go on on another
//! thread while the tool blocks; on a current-thread runtime nothing can send them then.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::task::AbortHandle;

use crate::StepContext;

/// How often a step tells the server it is alive, at most: the SDK holds heartbeats back and
/// sends the last one (its throttle, see [`StepHandler::heartbeat_throttle`]), so recording
/// them more often costs nothing on the wire.
///
/// [`StepHandler::heartbeat_throttle`]: crate::StepHandler::heartbeat_throttle
const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

/// How many heartbeats are recorded within one heartbeat timeout, at least: a short timeout
/// (a test's) is still beaten well within.
const BEATS_PER_TIMEOUT: u32 = 8;

/// What a heartbeat says: the tool calls this attempt completed (for the server's UI; the
/// store, not the heartbeat, is what the next attempt goes on from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Progress {
    pub(crate) tool_calls_done: usize,
}

/// The heartbeats of one attempt of a step, going in a task of their own until this is
/// dropped (when the step ends, or is dropped itself: its attempt cancelled).
///
/// The step only counts its completed tool calls here: it never wakes the task, so the task is
/// woken by its timer alone, on whichever thread is free — never left waiting behind a thread
/// that a tool blocks.
#[derive(Debug)]
pub(crate) struct Heartbeats {
    tool_calls_done: Arc<AtomicUsize>,
    task: AbortHandle,
}

impl Heartbeats {
    /// Starts the heartbeats of the attempt `ctx` is of, recorded as often as its heartbeat
    /// timeout wants.
    pub(crate) async fn start(ctx: &StepContext) -> Self {
        let every = beat_interval(ctx.heartbeat_timeout());
        let ctx = ctx.clone();
        Self::start_with(every, move |progress| {
            let ctx = ctx.clone();
            async move {
                // A count always serializes; a heartbeat the SDK could not take is made up for
                // by the next one.
                let _ = ctx.heartbeat(progress).await;
            }
        })
        .await
    }

    /// Starts a task that calls `beat` with the progress every `every`, the first at once.
    pub(crate) async fn start_with<F, Fut>(every: Duration, beat: F) -> Self
    where
        F: Fn(Progress) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let tool_calls_done = Arc::new(AtomicUsize::new(0));
        let done = Arc::clone(&tool_calls_done);
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let progress = Progress {
                    tool_calls_done: done.load(Ordering::Relaxed),
                };
                beat(progress).await;
            }
        })
        .abort_handle();
        // Give way once, so that the task is polled (and arms its timer) before the step goes
        // on: a task spawned from a worker thread waits in that thread's LIFO slot, which the
        // other threads do not steal from, and a step that went straight into a blocking tool
        // would keep it there for as long as the tool blocks.
        tokio::task::yield_now().await;
        Self {
            tool_calls_done,
            task,
        }
    }

    /// The step completed one more tool call: the next heartbeat says so.
    pub(crate) fn tool_call_done(&self) {
        self.tool_calls_done.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How often to record a heartbeat for an attempt whose heartbeat timeout is `timeout`.
fn beat_interval(timeout: Option<Duration>) -> Duration {
    let within = timeout.map_or(HEARTBEAT_EVERY, |timeout| timeout / BEATS_PER_TIMEOUT);
    within.min(HEARTBEAT_EVERY).max(Duration::from_millis(10))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;

    /// Heartbeats that record when each beat came, and what it said.
    async fn recorded(every: Duration) -> (Heartbeats, Arc<Mutex<Vec<(Instant, Progress)>>>) {
        let beats = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&beats);
        let heartbeats = Heartbeats::start_with(every, move |progress| {
            log.lock().unwrap().push((Instant::now(), progress));
            async {}
        })
        .await;
        (heartbeats, beats)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn heartbeats_go_on_while_the_step_blocks_its_thread() {
        // In a task of its own on the pool, as the SDK runs a step.
        let step = tokio::spawn(async {
            let (heartbeats, beats) = recorded(Duration::from_millis(20)).await;
            let blocked = Instant::now();
            // A synchronous SDK's call, on the step's own thread, right after the start.
            std::thread::sleep(Duration::from_millis(400));
            let during = beats
                .lock()
                .unwrap()
                .iter()
                .filter(|(at, _)| *at > blocked)
                .count();
            drop(heartbeats);
            during
        });
        let during = step.await.unwrap();
        assert!(
            during >= 5,
            "{during} heartbeats while the step blocked 400 ms"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn heartbeats_carry_the_completed_calls_and_stop_when_dropped() {
        let (heartbeats, beats) = recorded(Duration::from_millis(10)).await;
        while beats.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(beats.lock().unwrap()[0].1.tool_calls_done, 0);
        heartbeats.tool_call_done();
        heartbeats.tool_call_done();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(beats.lock().unwrap().last().unwrap().1.tool_calls_done, 2);
        drop(heartbeats);
        // The abort lands at the task's next await at the latest.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let stopped = beats.lock().unwrap().len();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(beats.lock().unwrap().len(), stopped);
    }

    /// What the heartbeats do not do: on a current-thread runtime a blocking tool blocks the
    /// only thread, and nothing is sent until it returns.
    #[tokio::test(flavor = "current_thread")]
    async fn a_current_thread_runtime_blocked_sends_nothing() {
        let (heartbeats, beats) = recorded(Duration::from_millis(20)).await;
        let blocked = Instant::now();
        std::thread::sleep(Duration::from_millis(200));
        let during = beats
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, _)| *at > blocked)
            .count();
        assert_eq!(during, 0);
        drop(heartbeats);
    }

    #[test]
    fn beats_come_well_within_the_timeout() {
        assert_eq!(beat_interval(None), HEARTBEAT_EVERY);
        assert_eq!(
            beat_interval(Some(Duration::from_secs(60))),
            HEARTBEAT_EVERY
        );
        assert_eq!(
            beat_interval(Some(Duration::from_secs(2))),
            Duration::from_millis(250)
        );
        assert_eq!(
            beat_interval(Some(Duration::from_millis(1))),
            Duration::from_millis(10)
        );
    }
}
