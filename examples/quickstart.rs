//! A complete agent on the built-in scripted model: no API key, no network.
//!
//! The model asks for the weather, the tool answers, the model replies. Two middleware watch the
//! run: `log_request`, a `#[hook]` function, prints every model request; `ToolCallCounter`, a
//! `#[middleware]` type, counts tool calls in its per-run state and reports the total at the
//! end.
//!
//! Run it with `cargo run --example quickstart`.

use std::sync::atomic::{AtomicU32, Ordering};

use hookchain::prelude::*;
use hookchain::{FnTool, Role, chain, hook, middleware};
use schemars::JsonSchema;
use serde::Deserialize;
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

/// Counts the tool calls of a run. The count lives in the middleware's state, created afresh
/// for every run; on the tool path the state is shared by concurrent calls, hence the atomic.
struct ToolCallCounter;

#[middleware(state = AtomicU32)]
impl ToolCallCounter {
    #[hook(wrap_tool_call)]
    async fn count(
        &self,
        cx: &Context,
        calls: &AtomicU32,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        calls.fetch_add(1, Ordering::Relaxed);
        println!(
            "  [ToolCallCounter] calling `{}` with {}",
            call.name, call.arguments
        );
        next.call(cx, call).await
    }

    #[hook(after_agent)]
    fn report(&self, calls: &mut AtomicU32) {
        println!(
            "  [ToolCallCounter] {} tool call(s) this run",
            calls.get_mut()
        );
    }
}

/// The weather tool's arguments; the JSON schema the model sees is derived from this type.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    /// The city to look up.
    city: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let weather = FnTool::new(
        "get_weather",
        "Current weather for a city.",
        |args: WeatherArgs| async move {
            Ok::<_, std::convert::Infallible>(format!("{}: 18°C, light rain", args.city))
        },
    );

    // The scripted model: first it calls the tool, then it answers with what the tool said.
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last();
        Ok(match last {
            Some(message) if message.role == Role::Tool => {
                ModelResponse::text(format!("It is {} — take an umbrella.", message.content))
            }
            _ => ModelResponse::tool_calls([ToolCall::new(
                "call_1",
                "get_weather",
                json!({ "city": "Lisbon" }),
            )]),
        })
    });

    let agent = Agent::builder(model)
        .system_prompt("You are a helpful weather assistant.")
        .tool(weather)
        .chain(chain![log_request, ToolCallCounter])
        .build();

    println!("The chain, per hook:\n{}", agent.chain().describe());
    println!("Running the agent:");
    let output = agent.run("What's the weather in Lisbon?").await?;

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
        "\n{} steps, {} model calls, {} tool calls",
        output.steps, output.model_calls, output.tool_calls
    );
    Ok(())
}
