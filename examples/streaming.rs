//! Tokens printed as they arrive, through a chain that redacts them on the way.
//!
//! The scripted model streams its answers a few characters at a time (with a pause between
//! them, so you can watch); one step calls a tool. `hide_digits`, a per-event hook, masks the
//! digits of what the model says as it streams — holding nothing back, since a digit is one
//! character — so neither the terminal nor the history ever sees them (the tool's own result
//! is not the model's text: a tool-result redaction would be a `wrap_tool_call`). `ModelRetry` is in the chain too: it lets the
//! stream through live (it does not change what the model says), and when the first attempt
//! fails half-way, the terminal is told to drop what it showed.
//!
//! Run it with `cargo run --example streaming`.

use std::io::Write;
use std::time::Duration;

use futures::TryStreamExt;
use hookchain::builtin::ModelRetry;
use hookchain::model::{ModelEvent, StreamStep};
use hookchain::prelude::*;
use hookchain::{ModelError, StopReason, chain, hook, tool};
use serde_json::json;

/// Masks every digit of the answer's text as it streams: in the terminal, in the history.
#[hook(on_model_event, phase = output)]
fn hide_digits(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    match event {
        ModelEvent::TextDelta { index, text } => out.emit(ModelEvent::TextDelta {
            index,
            text: text
                .chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect(),
        }),
        other => out.emit(other),
    }
}

/// The balance of an account.
#[tool]
async fn balance(
    /// The account's name.
    account: String,
) -> String {
    format!("{account}: 1234.56 EUR")
}

/// An answer streamed a few characters at a time, with a pause before each piece.
fn streamed(text: &str) -> Vec<StreamStep> {
    let mut steps = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(4) {
        steps.push(StreamStep::Delay(Duration::from_millis(30)));
        steps.push(StreamStep::Event(ModelEvent::TextDelta {
            index: 0,
            text: piece.iter().collect(),
        }));
    }
    steps.push(StreamStep::Event(ModelEvent::Finish {
        stop_reason: StopReason::EndTurn,
    }));
    steps
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let mut first_attempt = streamed("Let me look that up for y");
    first_attempt.push(StreamStep::Fail(ModelError::overloaded(
        "the model is busy",
    )));
    let model = ScriptedModel::new([])
        .then_stream(first_attempt)
        .then(ModelResponse::tool_calls([ToolCall::new(
            "call_1",
            "balance",
            json!({"account": "savings"}),
        )]))
        .then_stream(streamed(
            "Your savings account holds 1234.56 EUR; your card ends in 4242.",
        ))
        .with_sleep(tokio::time::sleep);
    let agent = Agent::builder(model)
        .tool(balance)
        .chain(chain![
            ModelRetry::builder()
                .initial_delay(Duration::from_millis(50))
                .build()
                .expect("a valid retry"),
            hide_digits
        ])
        .build()?;

    println!("> What is in my savings account?");
    let mut stream = agent.stream("What is in my savings account?");
    let mut stdout = std::io::stdout();
    while let Some(event) = stream.try_next().await? {
        match &event {
            AgentEvent::Model(ModelEvent::TextDelta { text, .. }) => print!("{text}"),
            AgentEvent::ModelOutputVoided => println!("  [the model failed; retrying]"),
            AgentEvent::ToolCallStarted(call) => {
                println!("[calling `{}` with {}]", call.name, call.arguments);
            }
            AgentEvent::ToolCallFinished(result) => println!("[the tool says: {}]", result.content),
            AgentEvent::MessageAdded(message)
                if message.role == hookchain::Role::Assistant && message.tool_calls.is_empty() =>
            {
                println!();
            }
            AgentEvent::Output(output) => {
                let answer = output.text().unwrap_or_default().into_owned();
                assert!(!answer.contains("1234"), "the history has no digits");
                println!(
                    "(done: {} model calls, {} tool call; the history says {answer:?})",
                    output.model_calls, output.tool_calls
                );
            }
            _ => {}
        }
        stdout.flush().ok();
    }
    Ok(())
}
