//! A tool-using agent on a real model, through any OpenAI-compatible endpoint.
//!
//! Configured by environment variables:
//!
//! - `HOOKCHAIN_BASE_URL`: the server's base URL, up to and including `/v1`;
//! - `HOOKCHAIN_MODEL`: the model name;
//! - `HOOKCHAIN_API_KEY` (optional): the API key; local servers need none.
//!
//! With [Ollama](https://ollama.com) on this machine, no key and no account needed:
//!
//! ```sh
//! ollama pull llama3.2            # any model with tool support: llama3.2, qwen3, mistral-nemo…
//! HOOKCHAIN_BASE_URL=http://localhost:11434/v1 HOOKCHAIN_MODEL=llama3.2 \
//!     cargo run --example chat --features openai -- "What is 1234 times 5678?"
//! ```
//!
//! With OpenAI: `HOOKCHAIN_BASE_URL=https://api.openai.com/v1 HOOKCHAIN_MODEL=gpt-4o-mini
//! HOOKCHAIN_API_KEY=sk-…`. vLLM, llama.cpp's server, Groq and others work the same way.
//!
//! The model gets a `multiply` tool; the example prints each step of the conversation.

use std::convert::Infallible;
use std::process::ExitCode;
use std::time::Duration;

use hookchain::providers::openai::OpenAiModel;
use hookchain::{Agent, FnTool, Role};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of the `multiply` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct MultiplyArgs {
    /// The first factor.
    a: f64,
    /// The second factor.
    b: f64,
}

/// Reads a required variable, or says which one is missing.
fn required(name: &str, example: &str) -> Result<String, String> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(value),
        _ => Err(format!("{name} is not set (for example {name}={example})")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let config = (
        required("HOOKCHAIN_BASE_URL", "http://localhost:11434/v1"),
        required("HOOKCHAIN_MODEL", "llama3.2"),
    );
    let (base_url, model_name) = match config {
        (Ok(base_url), Ok(model)) => (base_url, model),
        (base_url, model) => {
            eprintln!("chat: missing configuration:");
            for problem in [base_url.err(), model.err()].into_iter().flatten() {
                eprintln!("  - {problem}");
            }
            eprintln!("HOOKCHAIN_API_KEY is optional. See the top of examples/chat.rs.");
            return ExitCode::from(2);
        }
    };

    let mut builder = OpenAiModel::builder(model_name)
        .base_url(base_url)
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(300));
    if let Ok(key) = std::env::var("HOOKCHAIN_API_KEY") {
        builder = builder.api_key(key);
    }
    let model = match builder.build() {
        Ok(model) => model,
        Err(error) => {
            eprintln!("chat: {}", hookchain::error::Report(&error));
            return ExitCode::FAILURE;
        }
    };

    let multiply = FnTool::new(
        "multiply",
        "Multiplies two numbers exactly. Use it for any multiplication.",
        |args: MultiplyArgs| async move { Ok::<_, Infallible>(args.a * args.b) },
    );
    let agent = match Agent::builder(model)
        .system_prompt("You are a helpful assistant. Use the tools you are given.")
        .tool(multiply)
        .max_steps(6)
        .build()
    {
        Ok(agent) => agent,
        Err(error) => {
            eprintln!("chat: {}", hookchain::error::Report(&error));
            return ExitCode::FAILURE;
        }
    };

    let question = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let question = if question.is_empty() {
        "What is 1234 times 5678?".to_owned()
    } else {
        question
    };
    println!("user: {question}");
    match agent.run(question.as_str()).await {
        Ok(output) => {
            for message in output.messages.iter().skip(1) {
                match message.role {
                    Role::Assistant if message.has_tool_calls() => {
                        for call in &message.tool_calls {
                            println!("model calls {}({})", call.name, call.arguments);
                        }
                    }
                    Role::Tool => println!("tool answers: {}", message.content),
                    _ => println!("{:?}: {}", message.role, message.content),
                }
            }
            println!(
                "({} input and {} output tokens)",
                output.usage.input_tokens, output.usage.output_tokens
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("chat: {}", hookchain::error::Report(&error));
            ExitCode::FAILURE
        }
    }
}
