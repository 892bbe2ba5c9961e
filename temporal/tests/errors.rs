//! Errors that need no server: a bad address, no server, a bad policy.

use std::time::{Duration, Instant};

use hookchain_temporal::{Error, MAX_RUN_STEPS, StepPolicy, connect};

#[tokio::test]
async fn bad_addresses_are_refused() {
    for address in ["", "ftp://host:7233", "http://", "http://[::1"] {
        let result = connect(address, "default").await;
        assert!(
            matches!(result, Err(Error::InvalidAddress { .. })),
            "{address}: {result:?}"
        );
    }
}

#[tokio::test]
async fn no_server_is_an_error() {
    // A port that was free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        connect(&format!("127.0.0.1:{port}"), "default"),
    )
    .await
    .expect("connect gives up by itself");
    assert!(matches!(result, Err(Error::Connect { .. })), "{result:?}");
    eprintln!("connect gave up in {:?}", started.elapsed());
}

#[test]
fn policies_the_server_would_refuse() {
    assert!(StepPolicy::default().validate().is_ok());
    let longest = StepPolicy {
        max_steps: MAX_RUN_STEPS,
        ..StepPolicy::default()
    };
    assert!(longest.validate().is_ok());
    let bad = [
        StepPolicy {
            start_to_close: Duration::ZERO,
            ..StepPolicy::default()
        },
        StepPolicy {
            heartbeat_timeout: Some(Duration::ZERO),
            ..StepPolicy::default()
        },
        StepPolicy {
            initial_interval: Duration::ZERO,
            ..StepPolicy::default()
        },
        StepPolicy {
            backoff_coefficient: 0.5,
            ..StepPolicy::default()
        },
        StepPolicy {
            backoff_coefficient: f64::NAN,
            ..StepPolicy::default()
        },
        StepPolicy {
            maximum_interval: Some(Duration::from_millis(1)),
            ..StepPolicy::default()
        },
        // Unbounded, or past what a workflow's history holds.
        StepPolicy {
            max_steps: 0,
            ..StepPolicy::default()
        },
        StepPolicy {
            max_steps: MAX_RUN_STEPS + 1,
            ..StepPolicy::default()
        },
    ];
    for policy in bad {
        assert!(
            matches!(policy.validate(), Err(Error::InvalidPolicy(_))),
            "{policy:?}"
        );
    }
}
