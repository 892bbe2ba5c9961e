//! A complete agent on the built-in scripted model: no API key, no network.
//!
//! The model asks for the weather, the tool answers, the model replies. Two middleware watch the
//! run: `RequestLogger` prints every model request, `ToolCallCounter` counts tool calls in its
//! per-run state and reports the total at the end.
//!
//! Run it with `cargo run --example quickstart`.

use hookchain::middleware::{False, HookSet, True, phase};
use hookchain::prelude::*;
use hookchain::{FnTool, Role};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Prints a one-line summary of every model request.
#[derive(Debug)]
struct RequestLogger;

impl Middleware for RequestLogger {
    type State = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "RequestLogger";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);

    async fn before_model(
        &self,
        cx: &mut Context,
        _state: &mut (),
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        println!(
            "  [RequestLogger] step {}: {} messages, {} tools offered",
            cx.step(),
            request.messages.len(),
            request.tools.len()
        );
        Ok(Flow::Continue)
    }
}

/// Counts the tool calls of a run (in its state, so runs never share a count).
#[derive(Debug)]
struct ToolCallCounter;

impl Middleware for ToolCallCounter {
    type State = u32;
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = True;
    const NAME: &'static str = "ToolCallCounter";
    const HOOKS: HookSet = HookSet::of(Hook::WrapToolCall).with(Hook::AfterAgent);

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: &Context,
        _state: &u32,
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        println!(
            "  [ToolCallCounter] calling `{}` with {}",
            call.name, call.arguments
        );
        next.call(cx, call).await
    }

    async fn after_agent(&self, cx: &mut Context, count: &mut u32) -> Result<(), Error> {
        let calls = cx
            .messages()
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count();
        *count = u32::try_from(calls).unwrap_or(u32::MAX);
        println!("  [ToolCallCounter] {count} tool call(s) this run");
        Ok(())
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
        .chain((RequestLogger, ToolCallCounter))
        .build();

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
