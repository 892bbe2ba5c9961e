//! A long conversation: 50 turns in one thread, kept short by `Summarization` (older turns
//! become a summary, in the history) and `ContextEditing` (older tool results become a
//! placeholder, in what the model reads), with `Pii` first in the chain: the e-mail addresses
//! the user gives are redacted in the history, so neither the summarizer nor the model ever
//! reads them. No network: the models are scripted.
//!
//! ```sh
//! cargo run --example long_conversation
//! ```
//!
//! Each turn the user asks about a topic; the model looks it up (two lookups in parallel on
//! every third turn), then answers. The tool's results are long, so the requests grow fast:
//! `ContextEditing` clears all but the last two results from each request once it passes
//! 1,500 tokens, and `Summarization` replaces the older part of the history by a summary once
//! it holds 40 messages or 2,000 tokens, keeping the last 12 messages. Each turn prints the
//! size of the history and what the model read; each summary prints what it replaced.

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use hookchain::builtin::summarization::{Keep, Summarized, Trigger, is_summary};
use hookchain::builtin::tokens::{ApproximateCounter, ModelProfile, TokenCounter};
use hookchain::builtin::{ContextEditing, Pii, PiiStrategy, PiiType, Summarization};
use hookchain::prelude::*;
use hookchain::{FnTool, Role, chain};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema)]
struct Topic {
    /// What to look up.
    topic: String,
}

/// A lookup whose results are long: what makes the requests grow.
fn lookup() -> impl hookchain::Tool {
    FnTool::new("lookup", "Looks a topic up.", |args: Topic| async move {
        let line = format!("{} is documented at length here. ", args.topic);
        Ok::<_, Infallible>(line.repeat(12))
    })
}

/// What the model read in each call: (messages, cleared tool results).
type Reads = Arc<Mutex<Vec<(usize, usize)>>>;

/// The assistant: after a question it looks the topic up, after the results it answers.
fn assistant(reads: Reads) -> ScriptedModel {
    ScriptedModel::from_rule(move |request| {
        let messages = &request.messages;
        let cleared = messages
            .iter()
            .filter(|m| m.metadata.contains_key("cleared"))
            .count();
        reads.lock().unwrap().push((messages.len(), cleared));
        let last = messages.last().expect("a question");
        let question = messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User && !is_summary(m))
            .map(|m| m.text().into_owned())
            .unwrap_or_default();
        let topic = question
            .trim_start_matches("Tell me about ")
            .split('.')
            .next()
            .unwrap_or_default()
            .to_owned();
        Ok(match last.role {
            Role::User => {
                let turn: usize = topic.trim_start_matches("topic ").parse().unwrap_or(1);
                let calls = if turn.is_multiple_of(3) { 2 } else { 1 };
                ModelResponse::tool_calls((0..calls).map(|k| {
                    ToolCall::new(
                        format!("call_{}_{k}", messages.len()),
                        "lookup",
                        json!({ "topic": format!("{topic} (part {k})") }),
                    )
                }))
            }
            _ => ModelResponse::text(format!("Here is what I found about {topic}.")),
        })
    })
}

/// The summarizer: says which topics it summarized (a real one would be a cheaper model).
fn summarizer() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let transcript = request.messages[0].text();
        // "topic 12" in questions, "topics 1 to 9" in an earlier summary.
        let numbers: Vec<u32> = transcript
            .split("topic")
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest
                    .trim_start_matches('s')
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            })
            .collect();
        let (first, last) = (numbers.iter().min(), numbers.iter().max());
        Ok(match (first, last) {
            (Some(first), Some(last)) => ModelResponse::text(format!(
                "The user asked about topics {first} to {last}; each was looked up and answered."
            )),
            _ => ModelResponse::text("The user asked about a few topics."),
        })
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let summaries: Arc<Mutex<Vec<Summarized>>> = Arc::default();
    let sink = summaries.clone();
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(40))
        .trigger(Trigger::tokens(2_000))
        .keep(Keep::Messages(12))
        .profile(ModelProfile::new(8_000))
        .on_summarize(move |summarized| sink.lock().unwrap().push(summarized))
        .build()?;
    let editing = ContextEditing::builder()
        .trigger_tokens(1_500)
        .keep(2)
        .build()?;

    let reads = Reads::default();
    // First: it rewrites the history, so that neither the summarizer nor the model ever reads
    // what it redacts.
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .build()?;
    let chain = chain![pii, summarization, editing,];
    let agent = Agent::builder(assistant(reads.clone()))
        .tool(lookup())
        .chain(chain)
        .build()?;

    let counter = ApproximateCounter::new();
    let mut thread = agent.thread();
    for turn in 1..=50 {
        // Every fifth turn, the user gives an e-mail address.
        let question = if turn % 5 == 0 {
            format!("Tell me about topic {turn}. Mail me at ann{turn}@example.com.")
        } else {
            format!("Tell me about topic {turn}")
        };
        let output = agent.run_in(&mut thread, question).await?;
        let asked = thread
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::User);
        if let Some(asked) = asked.filter(|m| m.text().contains("[REDACTED_EMAIL]")) {
            println!("turn {turn:2}: Pii redacted the question: {}", asked.text());
        }
        for summarized in summaries.lock().unwrap().drain(..) {
            println!(
                "turn {turn:2}: Summarization replaced {} messages ({} -> {} tokens) by: {}",
                summarized.removed.len(),
                summarized.tokens_before,
                summarized.tokens_after,
                summarized.summary.text().lines().last().unwrap_or_default(),
            );
        }
        let read: Vec<(usize, usize)> = reads.lock().unwrap().drain(..).collect();
        let history = thread.messages();
        println!(
            "turn {turn:2}: history {:2} messages, {:4} tokens; the model read {} messages, \
             ContextEditing cleared {} old tool results; {}",
            history.len(),
            counter.count_messages(history),
            listed(read.iter().map(|&(messages, _)| messages)),
            listed(read.iter().map(|&(_, cleared)| cleared)),
            output.text().unwrap_or_default(),
        );
    }
    let history = thread.messages();
    assert!(is_summary(&history[0]), "the oldest turns are a summary");
    assert!(history.len() <= 40, "the history stays bounded");
    assert!(
        history.iter().all(|m| !m.text().contains("@example.com")),
        "no address is left in the history"
    );
    Ok(())
}

/// `3, 5` for the numbers of a turn's model calls.
fn listed(numbers: impl Iterator<Item = usize>) -> String {
    numbers
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" then ")
}
