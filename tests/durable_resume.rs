//! Durable resume across processes: a run pauses in one process, its checkpoint is written to a
//! file, and a new process builds the agent again, loads the checkpoint and finishes the run.
//!
//! The test spawns its own test binary twice (`current_exe() --exact <name> --nocapture`), with
//! `HOOKCHAIN_DURABLE_PHASE` selecting what the child does:
//!
//! - phase 1: run until the interrupt, save the checkpoint with a `FileCheckpointer`, exit;
//! - phase 2: build the agent anew, load the checkpoint, resume with an answer, check that the
//!   run completes, write the final text to a file, delete the checkpoint.
//!
//! In the paused step a `record` tool completes before the pause; it appends a line to a
//! side-effect file each time it runs, so after both phases the file must hold exactly one
//! line: a tool call that completed is never executed again.

mod support;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::Command;

use hookchain::interrupt::{Checkpointer, Claim, FileCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{EndReason, FnTool, Role, hook};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::Effects;

/// Which phase a child runs: `1` or `2`. Unset in the parent.
const PHASE: &str = "HOOKCHAIN_DURABLE_PHASE";
/// The directory of the checkpoint and the side-effect files, passed to the children.
const DIR: &str = "HOOKCHAIN_DURABLE_DIR";
/// The key of the checkpoint in the store.
const KEY: &str = "conversation-1";
/// How long a phase's lease on the key lasts.
const LEASE: std::time::Duration = std::time::Duration::from_secs(60);
/// This test's name, for `--exact`.
const TEST: &str = "durable_resume_across_processes";

/// Arguments of the `record` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct RecordArgs {
    /// What to record.
    line: String,
}

/// Counts the model calls of a run in its state and says so on the system prompt: the count
/// crosses the process boundary in the checkpoint.
#[hook(before_model, state = u32)]
fn count_model_calls(calls: &mut u32, request: &mut ModelRequest) {
    *calls += 1;
    request.system_prompt = Some(format!("model call {calls}"));
}

/// The agent both phases build, the same way: the model records a line and asks the user in
/// its first step, then thanks the user by name.
fn agent(dir: &Path) -> Agent<ScriptedModel, (count_model_calls,)> {
    let effects = Effects::file(dir);
    let record = FnTool::new(
        "record",
        "Appends a line to the record.",
        move |args: RecordArgs| {
            effects.record(args.line);
            async { Ok::<_, Infallible>("recorded") }
        },
    );
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last().expect("a request has messages");
        Ok(if last.role == Role::Tool {
            ModelResponse::text(format!("Thanks, {}!", last.content))
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_record", "record", json!({ "line": "started" })),
                ToolCall::new(
                    "call_ask",
                    "ask_user",
                    json!({ "question": "What is your name?" }),
                ),
            ])
        })
    });
    Agent::builder(model)
        .tool(record)
        .tool(AskUser)
        .chain(hookchain::chain![count_model_calls])
        .build()
        .unwrap()
}

/// Phase 1: run until the interrupt and save the checkpoint.
async fn pause(dir: &Path) {
    let output = agent(dir).run("Hello").await.expect("the run");
    assert_eq!(output.end, EndReason::Interrupted);
    let ids: Vec<&str> = output.interrupts().iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["0/1:tool:call_ask"]);
    let checkpoint = output.checkpoint.expect("a paused run has a checkpoint");
    let store = FileCheckpointer::new(dir);
    let Claim::Granted { lease, .. } = store.claim(KEY, "phase-1", LEASE).await.unwrap() else {
        panic!("the key is free");
    };
    store
        .put(KEY, &checkpoint, &lease)
        .await
        .expect("save the checkpoint");
    println!("phase 1: paused, checkpoint saved");
}

/// Phase 2: a new agent, the checkpoint from the file, an answer, the end of the run.
async fn finish(dir: &Path) {
    let agent = agent(dir);
    let store = FileCheckpointer::new(dir);
    let Claim::Granted {
        lease,
        record: Ok(Some(Record::Checkpoint(checkpoint))),
    } = store
        .claim(KEY, "phase-2", LEASE)
        .await
        .expect("claim the checkpoint")
    else {
        panic!("phase 1 saved a checkpoint");
    };
    let answers: Vec<_> = checkpoint
        .pending()
        .map(|id| (id.clone(), json!("Ada")))
        .collect();
    let output = agent
        .resume(checkpoint, answers)
        .await
        .expect("the resumed run");

    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("Thanks, Ada!"));
    assert_eq!(output.steps, 2);
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.tool_calls, 2);
    // The state crossed the process boundary: this process's only model call is the second.
    let prompts: Vec<_> = agent
        .model()
        .requests()
        .into_iter()
        .map(|request| request.system_prompt)
        .collect();
    assert_eq!(prompts, [Some("model call 2".to_owned())]);
    // The completed call's result came from the checkpoint.
    let results: Vec<(&str, &str)> = output
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.as_deref().unwrap(),
                m.content.as_text().unwrap(),
            )
        })
        .collect();
    assert_eq!(results, [("call_record", "recorded"), ("call_ask", "Ada")]);

    std::fs::write(dir.join("final.txt"), output.text().unwrap().as_bytes())
        .expect("write the result");
    store
        .end(KEY, &lease, None)
        .await
        .expect("delete the checkpoint");
    println!("phase 2: resumed and finished");
}

/// Runs this test's binary as a child in `phase`.
fn spawn(phase: &str, dir: &Path) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary");
    let output = Command::new(exe)
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(PHASE, phase)
        .env(DIR, dir)
        .output()
        .expect("spawn the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "phase {phase} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // `--exact` with a wrong name runs nothing and still succeeds: make sure the test ran.
    assert!(
        stdout.contains("1 passed") && stdout.contains(&format!("phase {phase}: ")),
        "phase {phase} did not run the test:\n{stdout}"
    );
    output
}

/// "Run → interrupt → write the checkpoint to a file → drop everything → build a new agent in
/// a new process → resume → the run completes; a tool call that already completed is never
/// executed again (count its side effects)."
#[tokio::test]
async fn durable_resume_across_processes() {
    if let Some(phase) = std::env::var_os(PHASE) {
        let dir = PathBuf::from(std::env::var_os(DIR).expect("the parent passes the directory"));
        match phase.to_str() {
            Some("1") => pause(&dir).await,
            Some("2") => finish(&dir).await,
            other => panic!("unknown phase {other:?}"),
        }
        return;
    }

    // One directory per process: concurrent runs of this test must not share files.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("durable_resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let side_effects = dir.join("side-effects.txt");
    let checkpoint = dir.join(format!("{KEY}.json"));

    spawn("1", &dir);
    assert!(checkpoint.exists(), "phase 1 left no checkpoint file");
    assert_eq!(std::fs::read_to_string(&side_effects).unwrap(), "started\n");

    spawn("2", &dir);
    assert_eq!(
        std::fs::read_to_string(&side_effects).unwrap(),
        "started\n",
        "the completed tool call ran again in phase 2"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("final.txt")).unwrap(),
        "Thanks, Ada!"
    );
    assert!(
        !checkpoint.exists(),
        "phase 2 did not delete the checkpoint"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
