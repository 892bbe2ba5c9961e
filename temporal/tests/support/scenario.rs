//! The scenario of a test: a dev server, a worker on it, a client; and waiting for a run.

use std::{
    future::Future,
    time::{Duration, Instant},
};

use hookchain_temporal::{RunClient, RunStatus, StepHandler, StepPolicy, StepWorker, connect};

use super::{DevServer, start_server};

/// How long a scenario may take, server start aside.
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);

/// A policy for tests: short timeouts, quick retries.
pub fn quick_policy() -> StepPolicy {
    StepPolicy {
        start_to_close: Duration::from_secs(10),
        heartbeat_timeout: Some(Duration::from_secs(5)),
        maximum_attempts: 3,
        initial_interval: Duration::from_millis(100),
        backoff_coefficient: 2.0,
        maximum_interval: Some(Duration::from_secs(1)),
        max_steps: 100,
    }
}

/// Starts a server, a worker on a task queue of its own with `handler`, and runs `scenario`
/// with a client of that queue; then stops the worker and the server.
pub async fn with_worker<H, F, Fut>(handler: H, scenario: F)
where
    H: StepHandler,
    F: FnOnce(RunClient) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = start_server();
    let client = connect(server.address(), server.namespace())
        .await
        .expect("a client of the dev server");
    let worker = StepWorker::new(client.clone(), "steps", handler).expect("a worker");
    let stop = worker.shutdown_handle();
    let runs = RunClient::new(client, "steps");
    let worker_run = worker.run();
    tokio::pin!(worker_run);
    let started = Instant::now();
    tokio::select! {
        result = &mut worker_run => panic!(
            "the worker stopped before the scenario ended: {result:?}\nthe server's log ends:\n{}",
            log_tail(&server)
        ),
        finished = tokio::time::timeout(SCENARIO_TIMEOUT, scenario(runs)) => {
            finished.expect("the scenario timed out");
        }
    }
    eprintln!("scenario took {:?}", started.elapsed());
    let stopping = Instant::now();
    // From a thread outside the runtime, as a signal handler or a supervisor would.
    std::thread::spawn(move || stop.shutdown())
        .join()
        .expect("the shutdown from another thread");
    tokio::time::timeout(Duration::from_secs(30), worker_run)
        .await
        .expect("the worker shut down in time")
        .expect("the worker shut down cleanly");
    eprintln!("worker shut down in {:?}", stopping.elapsed());
    drop(server);
}

/// The last lines of the server's log: why it went away, when it did.
fn log_tail(server: &DevServer) -> String {
    let log = std::fs::read_to_string(server.log()).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Queries the run's status until `pred` holds (or panics after a while).
pub async fn wait_for_status(
    runs: &RunClient,
    key: &str,
    pred: impl Fn(&RunStatus) -> bool,
) -> RunStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match runs.status(key).await {
            Ok(status) if pred(&status) => return status,
            Ok(_) => {}
            Err(e) => eprintln!("status of {key}: {e}"),
        }
        assert!(
            Instant::now() < deadline,
            "the run {key} never reached the status"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
