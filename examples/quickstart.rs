//! A complete agent on the built-in scripted model: no API key, no network.
//!
//! Two questions in one conversation (a `Thread`): each time the model asks for the weather,
//! the tool — a `#[tool]` function — answers, the model replies. Two middleware watch the runs: `log_request`, a
//! `#[hook]` function, prints every model request; `ToolCallCounter`, a `#[middleware]` type,
//! counts tool calls twice over — per run in its run-scoped `state` (starts at zero every run)
//! and per conversation in its `thread_state` (kept across the runs of the thread).
//!
//! Run it with `cargo run --example quickstart`.

use std::sync::atomic::{AtomicU32, Ordering};

use hookchain::prelude::*;
use hookchain::{Role, chain, hook, middleware, tool};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Prints a one-line summary of every model request.
#[hook(before_model)]
fn log_request(cx: &mut Context, request: &mut ModelRequest) {
    println!(
        "  [log_request] step {}: {} messages, {} tools offered",
        cx.step(),
        request.messages.len(),
        request.tools.len()
    );
}

/// The conversation's count (thread-scoped: kept across runs, so `Clone`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Total(u32);

/// Counts the tool calls of each run (`state`: created afresh for every run; on the tool path a
/// state is shared by concurrent calls, hence the atomic) and of the whole conversation
/// (`thread_state`: kept for as long as the thread lives).
struct ToolCallCounter;

#[middleware(state = AtomicU32, thread_state = Total)]
impl ToolCallCounter {
    #[hook(wrap_tool_call)]
    async fn count(
        &self,
        cx: ToolContext<'_>,
        calls: &AtomicU32,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        calls.fetch_add(1, Ordering::Relaxed);
        println!(
            "  [ToolCallCounter] calling `{}` with {}",
            call.name, call.arguments
        );
        Ok(next.call(cx, call).await)
    }

    #[hook(after_agent)]
    fn report(&self, calls: &mut AtomicU32, total: &mut Total) {
        total.0 += *calls.get_mut();
        println!(
            "  [ToolCallCounter] {} tool call(s) this run, {} in this conversation",
            calls.get_mut(),
            total.0
        );
    }
}

// The weather tool: its doc comment is the description the model reads, its parameters (and
// their doc comments) make the JSON schema; `weather::call(..)` still calls the function.
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
    // The scripted model: asked about a city, it calls the tool, then answers with what the
    // tool said.
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last();
        Ok(match last {
            Some(message) if message.role == Role::Tool => {
                ModelResponse::text(format!("It is {} — take an umbrella.", message.content))
            }
            Some(question) => {
                let city = if question.text().contains("Porto") {
                    "Porto"
                } else {
                    "Lisbon"
                };
                ModelResponse::tool_calls([ToolCall::new(
                    format!("call_{}", request.messages.len()),
                    "get_weather",
                    json!({ "city": city }),
                )])
            }
            None => ModelResponse::text("Ask me about the weather."),
        })
    });

    let agent = Agent::builder(model)
        .system_prompt("You are a helpful weather assistant.")
        .tool(weather)
        .chain(chain![log_request, ToolCallCounter])
        .build()?;

    println!("The chain, per hook:\n{}", agent.chain().describe());
    // One conversation, two runs: the thread keeps the history and the thread-scoped state.
    let mut thread = agent.thread();
    println!("Running the agent:");
    agent
        .run_in(&mut thread, "What's the weather in Lisbon?")
        .await?;
    let output = agent.run_in(&mut thread, "And in Porto?").await?;

    println!("\nConversation:");
    for message in &output.messages {
        let role = format!("{:?}", message.role).to_lowercase();
        if message.has_tool_calls() {
            for call in &message.tool_calls {
                println!("  {role:>9}: calls {}({})", call.name, call.arguments);
            }
        } else {
            println!("  {role:>9}: {}", message.content);
        }
    }
    println!(
        "\nlast run: {} steps, {} model calls, {} tool calls; the thread has {} runs",
        output.steps,
        output.model_calls,
        output.tool_calls,
        thread.runs()
    );
    Ok(())
}
