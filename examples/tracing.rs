//! What a run reports to `tracing`, printed by `tracing_subscriber::fmt`: the `invoke_agent`
//! span around a `chat` span per model call and an `execute_tool` span per tool call, with
//! OpenTelemetry's GenAI attributes, and at `TRACE` an event per hook naming the middleware.
//! On the built-in scripted model: no API key, no network.
//!
//! Run it with `cargo run --example tracing`. Each span prints when it closes, with the fields
//! recorded by then (usage, finish reason, `error.type`). The README's *Observability* section
//! and the program `examples/observability/` send the same spans to an OpenTelemetry collector
//! instead, beside a compact log line.

use hookchain::prelude::*;
use hookchain::{ModelError, Role, Usage, chain, hook, middleware, tool};
use serde_json::json;
use tracing_subscriber::fmt::format::FmtSpan;

/// Says in the log which request goes out (an event inside the `invoke_agent` span).
#[hook(before_model)]
fn log_request(cx: &mut Context, request: &mut ModelRequest) {
    tracing::info!(
        step = cx.step(),
        messages = request.messages.len(),
        "sending a request"
    );
}

/// Retries a failed model call once: each attempt the model answers is a `chat` span of its own.
struct RetryOnce;

#[middleware]
impl RetryOnce {
    #[hook(wrap_model_call)]
    async fn retry(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        match next.call(cx, request.clone()).await {
            Ok(response) => Ok(response),
            Err(_) => next.call(cx, request).await,
        }
    }
}

/// Current weather for a city.
#[tool(name = "get_weather")]
async fn weather(
    /// The city to look up.
    city: String,
) -> String {
    format!("{city}: 18°C, light rain")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .init();

    // The first call is rate limited (the retry calls again), then the model asks for the
    // weather, then it answers with what the tool said.
    let first = std::sync::atomic::AtomicBool::new(true);
    let model = ScriptedModel::from_rule(move |request| {
        if first.swap(false, std::sync::atomic::Ordering::Relaxed) {
            return Err(ModelError::rate_limited("try again"));
        }
        let last = request.messages.last();
        Ok(match last {
            Some(message) if message.role == Role::Tool => {
                ModelResponse::text(format!("It is {}.", message.content))
                    .with_usage(Usage::new(42, 9))
            }
            _ => ModelResponse::tool_calls([ToolCall::new(
                "call_1",
                "get_weather",
                json!({ "city": "Lisbon" }),
            )])
            .with_usage(Usage::new(30, 12)),
        })
    });

    let agent = Agent::builder(model)
        .name("weather")
        .tool(weather)
        .chain(chain![log_request, RetryOnce])
        .build()?;
    let mut thread = agent.thread();
    let output = agent
        .run_in(&mut thread, "What's the weather in Lisbon?")
        .await?;
    println!(
        "\nanswer: {}\nusage: {} in, {} out",
        output.text().unwrap_or_default(),
        output.usage.input_tokens,
        output.usage.output_tokens
    );
    Ok(())
}
