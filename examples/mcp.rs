//! Tools from an MCP server, through the agent's middleware.
//!
//! ```sh
//! pip install mcp-server-time                      # the reference MCP time server (Python)
//! cargo run --example mcp --features mcp
//! ```
//!
//! The agent (on the scripted model: no API key, no network) gets its tools from
//! `mcp-server-time`, a server nobody here wrote, run as a child process speaking MCP on stdio:
//! `get_current_time` and `convert_time`. They are hookchain tools like any other, so the
//! chain wraps them: a `#[hook]` logs each call and its time, `ToolRetry` would retry a call
//! whose server crashed (the toolset starts it again), and `HumanInTheLoop` holds
//! `convert_time` for approval — approved here by the program, as a person would in an app.
//!
//! `MCP_TIME_SERVER` overrides the command (default `python3 -m mcp_server_time`), e.g.
//! `uvx mcp-server-time`.

use std::process::ExitCode;
use std::time::Instant;

use hookchain::builtin::ToolRetry;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::mcp::{McpServer, McpToolset};
use hookchain::prelude::*;
use hookchain::{EndReason, Role, chain, hook};
use serde_json::json;

/// Logs each tool call and how long it took (the chain's innermost wrap: the time is the
/// server's).
#[hook(wrap_tool_call)]
async fn timed(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    let started = Instant::now();
    let name = call.name.clone();
    println!("  → {name} {}", call.arguments);
    let result = next.call(cx, call).await;
    println!(
        "  ← {name} in {:.0} ms{}: {}",
        started.elapsed().as_secs_f64() * 1000.0,
        if result.is_error { " (error)" } else { "" },
        compact(&result.content.to_string())
    );
    Ok(result)
}

/// Asks the time in Tokyo, then what 09:00 there is in Lisbon, then says both (reading the
/// tools' answers from the conversation, as a model would).
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let answers: Vec<String> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::Tool)
            .map(|message| message.text().into_owned())
            .collect();
        Ok(match answers.len() {
            0 => ModelResponse::tool_calls([ToolCall::new(
                "now",
                "get_current_time",
                json!({ "timezone": "Asia/Tokyo" }),
            )]),
            1 => ModelResponse::tool_calls([ToolCall::new(
                "meeting",
                "convert_time",
                json!({
                    "source_timezone": "Asia/Tokyo",
                    "time": "09:00",
                    "target_timezone": "Europe/Lisbon"
                }),
            )]),
            _ => ModelResponse::text(format!(
                "In Tokyo: {}. A meeting at 09:00 in Tokyo: {}.",
                field(&answers[0], "/datetime"),
                field(&answers[1], "/target/datetime")
            )),
        })
    })
}

/// A field of a tool's JSON answer (by its JSON pointer), or the answer itself.
fn field(answer: &str, pointer: &str) -> String {
    serde_json::from_str::<serde_json::Value>(answer)
        .ok()
        .and_then(|value| value.pointer(pointer).cloned())
        .map_or_else(|| answer.to_owned(), |value| value.to_string())
}

/// A tool's answer on one line: compact JSON if it is JSON.
fn compact(answer: &str) -> String {
    serde_json::from_str::<serde_json::Value>(answer)
        .map_or_else(|_| answer.to_owned(), |value| value.to_string())
}

/// The time server's command: `MCP_TIME_SERVER`, else `python3 -m mcp_server_time`.
fn time_server() -> McpServer {
    let command = std::env::var("MCP_TIME_SERVER")
        .unwrap_or_else(|_| "python3 -m mcp_server_time".to_owned());
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or("python3");
    McpServer::stdio("time", program)
        .args(words)
        .args(["--local-timezone", "UTC"])
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let toolset = McpToolset::connect([time_server()])
        .await
        .map_err(|error| {
            format!("{error}\n(is the server installed? `pip install mcp-server-time`)")
        })?;
    println!(
        "connected to `time` in {:.0} ms; its tools:",
        started.elapsed().as_secs_f64() * 1000.0
    );
    for tool in &toolset {
        println!(
            "  {} (as `{}` on the server)",
            tool.name(),
            tool.original_name()
        );
    }

    let agent = Agent::builder(model())
        .tools(toolset.registry())
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("convert_time", ToolPolicy::always()),
            ToolRetry::new(),
            timed,
        ])
        .build()?;

    println!("run:");
    let mut output = agent
        .run("What time is it in Tokyo? And 09:00 there is when in Lisbon?")
        .await?;
    while output.end == EndReason::Interrupted {
        let checkpoint = output
            .checkpoint
            .take()
            .ok_or("a paused run has its checkpoint")?;
        let answers = checkpoint
            .interrupts()
            .iter()
            .map(|interrupt| {
                let request =
                    ApprovalRequest::from_interrupt(interrupt).ok_or("the pause is an approval")?;
                for action in &request.actions {
                    println!(
                        "  approval asked for {} {}: approved",
                        action.name, action.arguments
                    );
                }
                Ok(ApprovalResponse::approve_all(&request).answer(interrupt))
            })
            .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
        output = agent.resume(checkpoint, answers).await?;
    }
    println!("answer: {}", output.text().unwrap_or_default());
    toolset.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}
