//! `#[tool(blocking)]`: a synchronous tool body on one of tokio's blocking threads. It no longer
//! stalls the runtime (on a current-thread runtime, everything else); its arguments and result
//! round-trip as an async tool's do, a panic in it is the tool's failure, its schema is the
//! async form's, and a cancelled call leaves the body to finish. Each test is named after its
//! rule.

#![cfg(feature = "tokio")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::prelude::*;
use hookchain::{Role, Tool, ToolError, ToolRegistry, tool};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// How long the slow tools block their thread.
const BLOCK: Duration = Duration::from_millis(200);

/// Waits for a slow payment provider.
#[tool(blocking)]
fn pay_slowly(
    /// The amount, in cents.
    cents: u64,
) -> String {
    std::thread::sleep(BLOCK);
    format!("paid {cents}")
}

/// Waits for a slow payment provider, on the run's thread.
#[tool]
fn pay_inline(
    /// The amount, in cents.
    cents: u64,
) -> String {
    std::thread::sleep(BLOCK);
    format!("paid {cents}")
}

/// Runs an agent whose model calls `tool` once, on this (current-thread) runtime, while a task
/// of the same runtime ticks every 10 ms; returns the tool's result and the ticks during the run.
async fn ticks_during(tool: impl Tool, name: &str) -> (String, usize) {
    let ticks = Arc::new(AtomicUsize::new(0));
    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    // The ticker's first poll, so that it is waiting on its timer.
    tokio::task::yield_now().await;
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", name, json!({ "cents": 250 }))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let before = ticks.load(Ordering::SeqCst);
    let output = agent.run("pay").await.unwrap();
    let during = ticks.load(Ordering::SeqCst) - before;
    ticker.abort();
    let result = output
        .messages
        .iter()
        .find(|message| message.role == Role::Tool)
        .expect("the tool's result");
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(output.text().as_deref(), Some("done"));
    (result.text().into_owned(), during)
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_tool_leaves_a_current_thread_runtime_free_while_it_runs() {
    let (result, ticks) = ticks_during(pay_slowly, "pay_slowly").await;
    assert_eq!(result, "paid 250");
    // 200 ms of body, a tick every 10 ms: about 20, unless the body held the runtime's thread.
    assert!(ticks > 5, "the ticker ticked {ticks} times during the call");
}

#[tokio::test(flavor = "current_thread")]
async fn without_blocking_the_same_body_stops_every_task_of_the_runtime() {
    let (result, ticks) = ticks_during(pay_inline, "pay_inline").await;
    assert_eq!(result, "paid 250");
    // The body held the only thread: the ticker ran at most once it was over.
    assert!(
        ticks <= 2,
        "the ticker ticked {ticks} times during the call"
    );
}

/// A line of an order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
struct Line {
    /// The item.
    item: String,
    /// How many.
    quantity: u32,
}

/// The total of an order.
#[derive(Debug, Serialize)]
struct Total {
    items: u32,
    cents: u64,
    note: Option<String>,
}

/// Totals an order.
#[tool(blocking)]
fn total(
    /// The order's lines.
    lines: Vec<Line>,
    /// The price of one item, in cents.
    unit_cents: u64,
    /// A note for the receipt.
    note: Option<String>,
) -> Result<Total, ToolError> {
    if lines.is_empty() {
        return Err(ToolError::for_model("total", "the order is empty"));
    }
    let items = lines.iter().map(|line| line.quantity).sum::<u32>();
    Ok(Total {
        items,
        cents: u64::from(items) * unit_cents,
        note,
    })
}

#[tokio::test]
async fn arguments_and_results_round_trip_through_the_blocking_thread() {
    let registry = ToolRegistry::new().with(total);
    let lines = json!([{ "item": "tea", "quantity": 2 }, { "item": "cake", "quantity": 3 }]);
    let result = registry
        .execute(&ToolCall::new(
            "c1",
            "total",
            json!({ "lines": lines, "unit_cents": 150, "note": "thanks" }),
        ))
        .await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&result.text()).unwrap(),
        json!({ "items": 5, "cents": 750, "note": "thanks" })
    );

    // The function's own error: the model reads it, as from an async tool.
    let empty = registry
        .execute(&ToolCall::new(
            "c2",
            "total",
            json!({ "lines": [], "unit_cents": 1 }),
        ))
        .await;
    assert!(empty.is_error);
    assert_eq!(empty.content, "the order is empty");

    // Arguments that do not match are refused before any thread is taken.
    let error = registry
        .try_execute(&ToolCall::new("c3", "total", json!({ "lines": "tea" })))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { .. }),
        "{error:?}"
    );

    // And the function stays a plain function.
    let line = Line {
        item: "tea".into(),
        quantity: 1,
    };
    assert_eq!(total::call(vec![line], 90, None).unwrap().cents, 90);
}

/// Charges a card through a synchronous client.
#[derive(Clone, Default)]
struct Payments {
    /// The client's handle, shared by the clones each call gets.
    charged: Arc<AtomicUsize>,
}

#[tool(blocking, name = "charge")]
impl Payments {
    /// Charges an amount, and returns how many charges there were.
    fn charge(
        &self,
        /// The amount, in cents.
        cents: u64,
    ) -> String {
        std::thread::sleep(Duration::from_millis(20));
        let count = self.charged.fetch_add(1, Ordering::SeqCst) + 1;
        format!("charged {cents} ({count})")
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_method_runs_with_a_clone_of_its_tool() {
    let payments = Payments::default();
    let charged = payments.charged.clone();
    let registry = ToolRegistry::new().with(payments);
    for (id, expected) in [("c1", "charged 5 (1)"), ("c2", "charged 7 (2)")] {
        let cents = if id == "c1" { 5 } else { 7 };
        let result = registry
            .execute(&ToolCall::new(id, "charge", json!({ "cents": cents })))
            .await;
        assert_eq!(result.content, expected);
    }
    assert_eq!(charged.load(Ordering::SeqCst), 2);
}

/// Breaks on the word "glass".
#[tool(blocking)]
fn fragile(text: String) -> String {
    if text == "glass" {
        panic!("fragile broke on {text}");
    }
    text
}

#[tokio::test]
async fn a_panic_in_the_blocking_body_is_the_tools_failure_and_the_run_goes_on() {
    let registry = ToolRegistry::new().with(fragile);
    let error = registry
        .try_execute(&ToolCall::new("c1", "fragile", json!({ "text": "glass" })))
        .await
        .unwrap_err();
    match &error {
        ToolError::Panicked { tool, message } => {
            assert_eq!(tool, "fragile");
            assert_eq!(message, "fragile broke on glass");
        }
        other => panic!("expected Panicked, got {other:?}"),
    }

    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "fragile", json!({ "text": "glass" })),
            ToolCall::new("c2", "fragile", json!({ "text": "steel" })),
        ]),
        ModelResponse::text("recovered"),
    ]);
    let agent = Agent::builder(model).tool(fragile).build().unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("recovered"));
    let results: Vec<&Message> = output
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_error);
    assert_eq!(
        results[0].content,
        "tool `fragile` failed unexpectedly (it crashed)"
    );
    assert!(!results[1].is_error);
    assert_eq!(results[1].content, "steel");
    let failure = hookchain::error::Report(output.tool_failures[0].error()).to_string();
    assert!(failure.contains("fragile broke on glass"), "{failure}");
}

/// Converts an amount between currencies.
#[tool(blocking, name = "convert")]
fn convert_blocking(
    /// The amount.
    amount: f64,
    /// The currency to convert to, such as "EUR".
    to: String,
    /// The rate's date; today if left out.
    date: Option<String>,
    /// The order's lines, for the receipt.
    lines: Vec<Line>,
) -> String {
    format!("{amount} {to} {date:?} {}", lines.len())
}

/// Converts an amount between currencies.
#[tool(name = "convert")]
async fn convert_async(
    /// The amount.
    amount: f64,
    /// The currency to convert to, such as "EUR".
    to: String,
    /// The rate's date; today if left out.
    date: Option<String>,
    /// The order's lines, for the receipt.
    lines: Vec<Line>,
) -> String {
    format!("{amount} {to} {date:?} {}", lines.len())
}

#[test]
fn a_blocking_tools_spec_is_the_async_forms() {
    let spec = convert_blocking.spec();
    assert_eq!(spec, convert_async.spec());
    assert_eq!(
        spec.parameters["required"],
        json!(["amount", "to", "lines"])
    );
    assert_eq!(
        spec.parameters["properties"]["to"]["description"],
        "The currency to convert to, such as \"EUR\"."
    );
}

/// Sets its flag once it has slept.
#[derive(Clone, Default)]
struct Slow {
    finished: Arc<AtomicBool>,
}

#[tool(blocking)]
impl Slow {
    /// Sleeps, then sets the flag.
    fn slow(&self) -> &'static str {
        std::thread::sleep(BLOCK);
        self.finished.store(true, Ordering::SeqCst);
        "slept"
    }
}

#[tokio::test]
async fn a_cancelled_call_leaves_the_blocking_body_to_finish_on_its_thread() {
    let slow = Slow::default();
    let finished = slow.finished.clone();
    let registry = ToolRegistry::new().with(slow);
    let call = ToolCall::new("c1", "slow", json!({}));
    // The call's future is dropped long before the body is done...
    let cancelled = tokio::time::timeout(Duration::from_millis(20), registry.execute(&call)).await;
    assert!(cancelled.is_err());
    assert!(!finished.load(Ordering::SeqCst));
    // ...and the body still runs to its end: a thread cannot be interrupted.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !finished.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(finished.load(Ordering::SeqCst));
}

#[test]
fn outside_any_tokio_runtime_the_body_runs_in_the_callers_thread() {
    let registry = ToolRegistry::new().with(total);
    let result = futures::executor::block_on(registry.execute(&ToolCall::new(
        "c1",
        "total",
        json!({ "lines": [{ "item": "tea", "quantity": 4 }], "unit_cents": 25 }),
    )));
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.text().contains("\"cents\":100"),
        "{}",
        result.content
    );
}
