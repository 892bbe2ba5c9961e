//! `ToolRetry`, rule by rule (DESIGN §11), on tokio's paused clock: the delays are exact.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::builtin::retry::{Jitter, OnFailure, ToolRetryBuilder};
use hookchain::builtin::{Timeout, ToolRetry};
use hookchain::prelude::*;
use hookchain::tool::{ToolFailure, ToolFailureKind};
use hookchain::{FnTool, Role, RunOutput, Tool, ToolError, chain};
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// The times (tokio's clock) at which a tool ran.
type Runs = Arc<Mutex<Vec<Instant>>>;

/// A tool named `name` that fails its first `failures` runs, then answers "ok".
fn flaky(name: &'static str, failures: usize, runs: &Runs) -> impl Tool {
    let runs = runs.clone();
    FnTool::new(name, "Fails, then works.", move |_: NoArgs| {
        let n = {
            let mut runs = runs.lock().unwrap();
            runs.push(Instant::now());
            runs.len()
        };
        async move {
            if n <= failures {
                Err(std::io::Error::other("db password=hunter2 refused"))
            } else {
                Ok("ok")
            }
        }
    })
}

/// A tool that takes `time` (on tokio's clock) to answer.
fn slow(time: Duration, runs: &Runs) -> impl Tool {
    let runs = runs.clone();
    FnTool::new("slow", "Takes its time.", move |_: NoArgs| {
        runs.lock().unwrap().push(Instant::now());
        async move {
            tokio::time::sleep(time).await;
            Ok::<_, std::io::Error>("finally")
        }
    })
}

/// A tool that pauses the run for outside input.
fn asking(runs: &Runs) -> impl Tool {
    let runs = runs.clone();
    FnTool::new("ask", "Asks a person.", move |_: NoArgs| {
        runs.lock().unwrap().push(Instant::now());
        async {
            Err::<String, _>(ToolError::Interrupt {
                payload: json!({ "ask": "?" }),
            })
        }
    })
}

/// A model that calls `tool` once (with `arguments`), then answers "done".
fn calling(tool: &str, arguments: serde_json::Value) -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("call_1", tool, arguments)]),
        ModelResponse::text("done"),
    ])
}

/// The one tool result of a run.
fn result(output: &RunOutput) -> Message {
    let results: Vec<_> = output
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .cloned()
        .collect();
    assert_eq!(results.len(), 1, "{results:#?}");
    results[0].clone()
}

fn waits(runs: &Runs) -> Vec<Duration> {
    let runs = runs.lock().unwrap();
    runs.windows(2).map(|w| w[1] - w[0]).collect()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn exact() -> ToolRetryBuilder {
    ToolRetry::builder()
        .jitter(Jitter::None)
        .initial_delay(secs(1))
}

#[tokio::test(start_paused = true)]
async fn a_failed_tool_call_is_retried_after_the_backoff() {
    let runs = Runs::default();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 2, &runs))
        .chain(chain![exact().build().unwrap()])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(waits(&runs), [secs(1), secs(2)]);
    let result = result(&output);
    assert_eq!(result.text(), "ok");
    assert_eq!(output.text().as_deref(), Some("done"));
}

#[tokio::test(start_paused = true)]
async fn max_retries_defaults_to_two_and_the_last_error_result_is_kept() {
    let runs = Runs::default();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 100, &runs))
        .chain(chain![exact().build().unwrap()])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(runs.lock().unwrap().len(), 3);
    let result = result(&output);
    assert_eq!(result.text(), "tool `flaky` failed");
    assert_eq!(output.text().as_deref(), Some("done"), "the run goes on");
}

#[tokio::test(start_paused = true)]
async fn backoff_is_capped_at_max_delay() {
    let runs = Runs::default();
    let retry = exact()
        .max_retries(4)
        .factor(10.0)
        .max_delay(secs(15))
        .build()
        .unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 4, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(waits(&runs), [secs(1), secs(10), secs(15), secs(15)]);
}

/// Counts the attempts that reach it and records the failure kinds it sees.
#[derive(Debug, Default)]
struct Attempts {
    count: AtomicUsize,
    kinds: Mutex<Vec<Option<ToolFailureKind>>>,
}

#[hookchain::middleware]
impl Attempts {
    #[hook(wrap_tool_call)]
    async fn count(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> ToolResult {
        self.count.fetch_add(1, Ordering::SeqCst);
        let result = next.call(cx, call).await;
        let kind = result.failure().map(ToolFailure::kind);
        self.kinds.lock().unwrap().push(kind);
        result
    }
}

#[tokio::test(start_paused = true)]
async fn retry_on_defaults_to_failed_and_timed_out_calls() {
    // Bad arguments: not retried.
    let runs = Runs::default();
    let agent = Agent::builder(calling("flaky", json!("not an object")))
        .tool(flaky("flaky", 0, &runs))
        .chain(chain![exact().build().unwrap(), Attempts::default()])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let attempts = &agent.chain().1;
    assert_eq!(attempts.count.load(Ordering::SeqCst), 1);
    assert_eq!(
        *attempts.kinds.lock().unwrap(),
        [Some(ToolFailureKind::InvalidArguments)]
    );
    assert!(result(&output).text().contains("invalid arguments"));

    // A timed-out call: retried, each attempt with the full time.
    let runs = Runs::default();
    let agent = Agent::builder(calling("slow", json!({})))
        .tool(slow(secs(60), &runs))
        .chain(chain![
            exact().max_retries(1).build().unwrap(),
            Timeout::builder().tool_call(secs(5)).build().unwrap(),
        ])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(waits(&runs), [secs(5) + secs(1)]);
    assert_eq!(result(&output).text(), "tool `slow` timed out after 5s");
}

#[tokio::test(start_paused = true)]
async fn retry_on_is_a_predicate_over_the_classified_failure() {
    let runs = Runs::default();
    let retry = exact()
        .retry_on(|failure| {
            failure.tool() == "flaky" && failure.kind() == ToolFailureKind::InvalidArguments
        })
        .build()
        .unwrap();
    let agent = Agent::builder(calling("flaky", json!("not an object")))
        .tool(flaky("flaky", 0, &runs))
        .chain(chain![retry, Attempts::default()])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(agent.chain().1.count.load(Ordering::SeqCst), 3);

    let runs = Runs::default();
    let retry = exact().retry_on(|_| false).build().unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 1, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(runs.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn tool_retry_filters_by_tool() {
    let runs = Runs::default();
    let retry = exact().tools(["other"]).build().unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 1, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(runs.lock().unwrap().len(), 1, "not a listed tool");

    let runs = Runs::default();
    let retry = exact().tools(["other", "flaky"]).build().unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 1, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    assert_eq!(runs.lock().unwrap().len(), 2, "a listed tool");
}

#[tokio::test(start_paused = true)]
async fn a_paused_call_is_never_retried() {
    let runs = Runs::default();
    let agent = Agent::builder(calling("ask", json!({})))
        .tool(asking(&runs))
        .chain(chain![exact().build().unwrap()])
        .build()
        .unwrap();
    let start = Instant::now();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.interrupts().len(), 1, "the run paused");
    assert_eq!(runs.lock().unwrap().len(), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn on_failure_continue_says_what_failed_and_nothing_internal() {
    let runs = Runs::default();
    let retry = exact().on_failure(OnFailure::Continue).build().unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 100, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let result = result(&output);
    assert_eq!(
        result.text(),
        "tool `flaky` failed (gave up after 3 attempts)"
    );
    assert!(!result.text().contains("hunter2"));
}

#[tokio::test(start_paused = true)]
async fn on_failure_format_writes_the_result() {
    let runs = Runs::default();
    let retry = exact()
        .max_retries(1)
        .on_failure(OnFailure::format(|failure: &ToolFailure, attempts| {
            format!(
                "{} is down ({attempts} tries); use another tool",
                failure.tool()
            )
        }))
        .build()
        .unwrap();
    let agent = Agent::builder(calling("flaky", json!({})))
        .tool(flaky("flaky", 100, &runs))
        .chain(chain![retry])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(
        result(&output).text(),
        "flaky is down (2 tries); use another tool"
    );
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    let none: [&str; 0] = [];
    assert_eq!(
        ToolRetry::builder()
            .tools(none)
            .build()
            .unwrap_err()
            .field(),
        "tools"
    );
    assert_eq!(
        ToolRetry::builder()
            .tools([""])
            .build()
            .unwrap_err()
            .field(),
        "tools"
    );
    assert_eq!(
        ToolRetry::builder()
            .factor(f64::INFINITY)
            .build()
            .unwrap_err()
            .field(),
        "factor"
    );
}
