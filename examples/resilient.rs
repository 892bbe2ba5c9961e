//! Resilience: an agent whose main model is down, kept running by retries, a timeout, a
//! circuit breaker, a fallback model and a tool retry, within call limits, with a tool-result
//! cache. No network: the models are scripted.
//!
//! ```sh
//! cargo run --example resilient
//! ```
//!
//! The main model hangs. Each call times out (`Timeout`), is retried with backoff
//! (`ModelRetry`), and after three failures the `CircuitBreaker` opens its circuit; the
//! `ModelFallback` then sends the request to the backup model, through the same middleware.
//! The weather tool fails once and `ToolRetry` runs it again. On the second step the main
//! model's circuit is open: the call goes to the backup at once, without waiting.
//!
//! The same question is asked again in the same conversation: the `ToolResultCache` answers
//! the weather call (the service is not called again), and `ModelCallLimit` / `ToolCallLimit`
//! keep each run within its calls (they do not trip here).
//!
//! The built-ins log what they do through `tracing` (shown on stderr).

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookchain::builtin::retry::OnFailure;
use hookchain::builtin::{
    CircuitBreaker, ModelCallLimit, ModelFallback, ModelRetry, RateLimit, Timeout, ToolCallLimit,
    ToolResultCache, ToolRetry,
};
use hookchain::model::ModelRouter;
use hookchain::prelude::*;
use hookchain::{FnTool, Model, ModelError, chain};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The main model, down: it never answers in time.
#[derive(Debug)]
struct Hanging;

impl Model for Hanging {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Err(ModelError::connection("unreachable"))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct City {
    /// The city to look up.
    city: String,
}

/// Calls of the weather service.
static WEATHER_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A weather service that fails its first call.
fn weather() -> impl hookchain::Tool {
    FnTool::new("weather", "The weather in a city.", move |args: City| {
        let first = WEATHER_CALLS.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                Err(std::io::Error::other("weather service: 503"))
            } else {
                Ok::<_, std::io::Error>(format!("{}: 18°C, sunny", args.city))
            }
        }
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let backup = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "call_1",
            "weather",
            json!({ "city": "Paris" }),
        )]),
        ModelResponse::text("It is 18°C and sunny in Paris."),
        ModelResponse::tool_calls([ToolCall::new(
            "call_2",
            "weather",
            json!({ "city": "Paris" }),
        )]),
        ModelResponse::text("Still 18°C and sunny in Paris."),
    ]);
    let router = ModelRouter::new(Hanging).route("backup", backup);

    // Outermost first: see the order in the `hookchain::builtin` docs.
    let chain = chain![
        ModelCallLimit::builder()
            .run_limit(10)
            .thread_limit(40)
            .build()?,
        ToolCallLimit::builder().run_limit(5).build()?,
        ModelFallback::builder().model("backup").build()?,
        ModelRetry::builder()
            .initial_delay(Duration::from_millis(100))
            .max_delay(Duration::from_secs(1))
            .build()?,
        CircuitBreaker::builder()
            .failure_threshold(3)
            .cool_down(Duration::from_secs(60))
            .build()?,
        RateLimit::builder()
            .requests(10)
            .interval(Duration::from_secs(1))
            .build()?,
        Timeout::builder()
            .model_call(Duration::from_millis(300))
            .tool_call(Duration::from_secs(5))
            .build()?,
        // A cached result is served before the retry and the tool: the service is spared.
        ToolResultCache::builder()
            .tool("weather", Duration::from_secs(600))
            .build()?,
        ToolRetry::builder()
            .initial_delay(Duration::from_millis(50))
            .on_failure(OnFailure::Continue)
            .build()?,
    ];
    let agent = Agent::builder(router)
        .tool(weather())
        .chain(chain)
        .build()?;

    let mut thread = agent.thread();
    let start = Instant::now();
    let output = agent
        .run_in(&mut thread, "What is the weather in Paris?")
        .await?;
    let elapsed = start.elapsed();

    let answer = output.text().unwrap_or_default().into_owned();
    println!("answer: {answer}");
    println!(
        "model calls: {} (3 timed out on the main model, 2 answered by the backup), tool calls: {}, {:.1}s",
        output.model_calls,
        output.tool_calls,
        elapsed.as_secs_f64()
    );
    if answer != "It is 18°C and sunny in Paris." || output.model_calls != 5 {
        return Err("the agent did not recover as expected".into());
    }

    let again = agent
        .run_in(&mut thread, "And now, the weather in Paris?")
        .await?;
    let service_calls = WEATHER_CALLS.load(Ordering::SeqCst);
    println!(
        "asked again: {} (model calls: {}, the weather service called {} times in all: the second answer came from the cache)",
        again.text().unwrap_or_default(),
        again.model_calls,
        service_calls
    );
    if service_calls != 2 || again.model_calls != 2 {
        return Err("the cache did not serve the second weather call".into());
    }
    Ok(())
}
