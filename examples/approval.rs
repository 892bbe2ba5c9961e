//! Human in the loop: an agent whose dangerous tool needs a person's approval.
//!
//! The (scripted) model lists the files of a folder — a harmless tool that runs freely — then
//! wants to delete one with `delete_file`, which `HumanInTheLoop` gates: the run pauses with an
//! interrupt describing the call, and resumes with your decision.
//!
//! ```sh
//! cargo run --example approval                          # asks you on the terminal
//! cargo run --example approval -- --auto approve        # decides for you (what CI runs)
//! cargo run --example approval -- --auto reject
//!
//! # Durable: pause, save the checkpoint to a directory and exit…
//! cargo run --example approval -- --checkpoint-dir /tmp/approval
//! # …then, in a new process, load it and continue.
//! cargo run --example approval -- --checkpoint-dir /tmp/approval --resume --auto approve
//! ```
//!
//! At the prompt, answer `approve`, `reject [reason]`, `edit <json arguments>` or
//! `respond <text>`. The file tools are fakes: nothing is deleted.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use hookchain::agent::AgentBuildError;
use hookchain::builtin::human_in_the_loop::{
    ActionRequest, ApprovalRequest, ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, FileCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::{Checkpoint, Durability, FnTool, InterruptId, ResumeFrom, Role, chain};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// What the user asks the agent.
const REQUEST: &str = "Please tidy up the logs folder.";

/// The key the checkpoint is saved under in `--checkpoint-dir`.
/// This process, as a worker of the checkpoint store.
const WORKER: &str = "approval-example";

const USAGE: &str = "\
usage: approval [--auto approve|reject] [--checkpoint-dir DIR [--resume]]

  --auto approve|reject  decide every approval without asking (no stdin needed)
  --checkpoint-dir DIR   on a pause, save the checkpoint to DIR and exit
  --resume               load the checkpoint from --checkpoint-dir and continue the run";

type BoxError = Box<dyn std::error::Error>;

/// How decisions are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auto {
    Approve,
    Reject,
}

/// The command line.
#[derive(Debug, Default)]
struct Args {
    auto: Option<Auto>,
    checkpoint_dir: Option<PathBuf>,
    resume: bool,
}

impl Args {
    /// Parses the command line; `Ok(None)` after printing the help.
    fn parse() -> Result<Option<Args>, String> {
        let mut args = Args::default();
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            match word.as_str() {
                "--auto" => {
                    args.auto = Some(match words.next().as_deref() {
                        Some("approve") => Auto::Approve,
                        Some("reject") => Auto::Reject,
                        Some(other) => {
                            return Err(format!(
                                "--auto takes `approve` or `reject`, not `{other}`"
                            ));
                        }
                        None => return Err("--auto takes `approve` or `reject`".to_owned()),
                    });
                }
                "--checkpoint-dir" => {
                    let dir = words.next().ok_or("--checkpoint-dir takes a directory")?;
                    args.checkpoint_dir = Some(PathBuf::from(dir));
                }
                "--resume" => args.resume = true,
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if args.resume && args.checkpoint_dir.is_none() {
            return Err("--resume needs --checkpoint-dir DIR".to_owned());
        }
        Ok(Some(args))
    }
}

/// Arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ListArgs {
    /// The folder.
    folder: String,
}

/// Arguments of `delete_file`.
#[derive(Debug, Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete.
    path: String,
}

/// The model: lists the folder, wants to delete the old log, then reports. It answers from
/// the history (not from a script position), so a run resumed in a new process goes on where
/// the old one stopped.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let results: Vec<&Message> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .collect();
        Ok(match results.as_slice() {
            [] => ModelResponse::tool_calls([ToolCall::new(
                "call_list",
                "list_files",
                json!({ "folder": "logs" }),
            )]),
            [_listing] => ModelResponse::tool_calls([ToolCall::new(
                "call_delete",
                "delete_file",
                json!({ "path": "logs/2019-old.log" }),
            )]),
            [.., outcome] if outcome.is_error => ModelResponse::text(format!(
                "Understood, I did not delete anything. ({})",
                outcome.content
            )),
            [.., outcome] => ModelResponse::text(format!(
                "Done: {}. The logs folder is tidy now.",
                outcome.content
            )),
        })
    })
}

/// The agent: the model, a harmless and a dangerous tool, and the approval gate.
fn agent(
    store: Option<Arc<FileCheckpointer>>,
) -> Result<Agent<ScriptedModel, (HumanInTheLoop,)>, AgentBuildError> {
    let list_files = FnTool::new(
        "list_files",
        "Lists the files of a folder.",
        |args: ListArgs| async move {
            Ok::<_, std::convert::Infallible>(format!(
                "{0}/2019-old.log, {0}/today.log",
                args.folder
            ))
        },
    );
    let delete_file = FnTool::new(
        "delete_file",
        "Deletes a file.",
        |args: DeleteArgs| async move {
            // A fake: it only says what it would do.
            println!("  [delete_file] (pretend) deleting {}", args.path);
            Ok::<_, std::convert::Infallible>(format!("deleted {}", args.path))
        },
    );
    let approval = HumanInTheLoop::new()
        .interrupt_on(
            "delete_file",
            ToolPolicy::always().description("Deletes a file for good"),
        )
        .never("list_files");
    let builder = Agent::builder(model())
        .system_prompt("You keep the user's folders tidy.")
        .tool(list_files)
        .tool(delete_file)
        .chain(chain![approval])
        .worker(WORKER);
    match store {
        Some(store) => builder.checkpointer(store, Durability::Pauses).build(),
        None => builder.build(),
    }
}

/// Shows one action waiting for a decision.
fn show(action: &ActionRequest) {
    println!();
    println!(
        "The agent wants to call `{}` with {}",
        action.name, action.arguments
    );
    if let Some(description) = &action.description {
        println!("  ({description})");
    }
    let allowed: Vec<String> = action
        .allowed_decisions
        .iter()
        .map(|kind| format!("{kind:?}").to_lowercase())
        .collect();
    println!("  allowed: {}", allowed.join(", "));
}

/// Reads a decision from a line: `approve`, `reject [reason]`, `edit <json>`, `respond <text>`.
fn parse_decision(line: &str) -> Result<Decision, String> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    match word {
        "approve" | "a" | "yes" | "y" => Ok(Decision::Approve),
        "reject" | "r" | "no" | "n" => Ok(Decision::Reject {
            message: (!rest.is_empty()).then(|| rest.to_owned()),
        }),
        "edit" | "e" => serde_json::from_str(rest)
            .map(|arguments| Decision::Edit { arguments })
            .map_err(|error| format!("`edit` takes the new arguments as JSON: {error}")),
        "respond" => Ok(Decision::Respond {
            content: rest.to_owned(),
        }),
        _ => Err("answer `approve`, `reject [reason]`, `edit <json>` or `respond <text>`".into()),
    }
}

/// Asks on stdin until the answer is a decision the action allows.
fn ask(action: &ActionRequest) -> Result<Decision, BoxError> {
    let stdin = std::io::stdin();
    loop {
        print!("decision> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            println!();
            return Err(
                "stdin closed before a decision was given; use --auto approve|reject".into(),
            );
        }
        if !stdin.is_terminal() {
            // Piped input: show what was read.
            println!("{}", line.trim_end());
        }
        match parse_decision(&line) {
            Ok(decision) if action.allowed_decisions.contains(&decision.kind()) => {
                return Ok(decision);
            }
            Ok(decision) => println!("  `{:?}` is not allowed here", decision.kind()),
            Err(message) => println!("  {message}"),
        }
    }
}

/// The decision `--auto` takes.
fn auto_decision(auto: Auto) -> Decision {
    match auto {
        Auto::Approve => Decision::Approve,
        Auto::Reject => Decision::Reject {
            message: Some("rejected by --auto reject".to_owned()),
        },
    }
}

/// An answer to each interrupt of `checkpoint`, from `--auto` or from the person at stdin.
fn decide(
    checkpoint: &Checkpoint,
    auto: Option<Auto>,
) -> Result<Vec<(InterruptId, serde_json::Value)>, BoxError> {
    let mut answers = Vec::new();
    for interrupt in checkpoint.interrupts() {
        let request: ApprovalRequest = serde_json::from_value(interrupt.payload.clone())
            .map_err(|error| format!("interrupt `{}` is not an approval: {error}", interrupt.id))?;
        let mut decisions = Vec::new();
        for action in &request.actions {
            show(action);
            let decision = match auto {
                Some(auto) => {
                    let decision = auto_decision(auto);
                    println!("decision> {:?} (--auto)", decision.kind());
                    decision
                }
                None => ask(action)?,
            };
            decisions.push(decision);
        }
        let response = serde_json::to_value(ApprovalResponse::new(decisions))?;
        answers.push((interrupt.id.clone(), response));
    }
    Ok(answers)
}

/// Prints the conversation, one line per message.
fn print_conversation(messages: &[Message]) {
    println!();
    println!("--- conversation ---");
    for message in messages {
        match message.role {
            Role::System => println!("system:    {}", message.content),
            Role::User => println!("user:      {}", message.content),
            Role::Assistant => {
                if !message.content.is_empty() {
                    println!("assistant: {}", message.content);
                }
                for call in &message.tool_calls {
                    println!("assistant: calls {}({})", call.name, call.arguments);
                }
            }
            Role::Tool => {
                let error = if message.is_error { " (error)" } else { "" };
                println!("tool{error}: {}", message.content);
            }
            other => println!("{other:?}: {}", message.content),
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    // With a directory, the agent keeps its paused runs there (each under its run's id).
    let store = args
        .checkpoint_dir
        .as_ref()
        .map(|dir| Arc::new(FileCheckpointer::new(dir)));
    let agent = agent(store.clone())?;

    let mut output = match &store {
        Some(store) if args.resume => {
            let dir = args
                .checkpoint_dir
                .as_ref()
                .expect("a store has a directory");
            let paused = store.list().await?.into_iter().find(|stored| !stored.ended);
            let Some(key) = paused.map(|stored| stored.key) else {
                return Err(format!(
                    "no paused run in {} (run once without --resume first)",
                    dir.display()
                )
                .into());
            };
            let Some(Record::Checkpoint(checkpoint)) = store.get(&key).await? else {
                return Err(format!("no checkpoint under {key}").into());
            };
            println!(
                "Resuming the paused run saved in {}",
                store.path(&key)?.display()
            );
            let answers = decide(&checkpoint, args.auto)?;
            // Claims the key and resumes what is stored there, once: a second `--resume`
            // finds the run's tombstone and is refused.
            agent.resume(ResumeFrom::stored(key), answers).await?
        }
        _ => {
            println!("user: {REQUEST}");
            agent.run(REQUEST).await?
        }
    };

    while let Some(checkpoint) = output.checkpoint.take() {
        println!();
        println!(
            "The run is paused: {} interrupt(s) waiting for a decision.",
            checkpoint.interrupts().len()
        );
        if let (Some(store), Some(dir)) = (&store, &args.checkpoint_dir) {
            println!(
                "Checkpoint saved to {}.",
                store.path(checkpoint.run_id())?.display()
            );
            println!(
                "Continue (in any process) with:\n  cargo run --example approval -- \
                 --checkpoint-dir {} --resume [--auto approve|reject]",
                dir.display()
            );
            return Ok(());
        }
        let answers = decide(&checkpoint, args.auto)?;
        output = agent.resume(checkpoint, answers).await?;
    }

    print_conversation(&output.messages);
    println!();
    println!(
        "finished: {} steps, {} model calls, {} tool calls",
        output.steps, output.model_calls, output.tool_calls
    );
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(Some(args)) => args,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_parse() {
        assert_eq!(parse_decision("approve\n"), Ok(Decision::Approve));
        assert_eq!(
            parse_decision("reject too risky"),
            Ok(Decision::Reject {
                message: Some("too risky".to_owned())
            })
        );
        assert_eq!(
            parse_decision(r#"edit {"path": "x"}"#),
            Ok(Decision::Edit {
                arguments: json!({ "path": "x" })
            })
        );
        assert!(parse_decision("edit {").is_err());
        assert!(parse_decision("maybe").is_err());
    }
}
