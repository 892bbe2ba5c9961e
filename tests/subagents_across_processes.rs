//! A sub-agent's approval, asked in one process and given in another: the parent's store holds
//! the child's checkpoint (nested in the parent's), and nothing that completed runs again.
//!
//! The test spawns its own binary (`current_exe() --exact <name>`) with `HOOKCHAIN_SUB_DIR`
//! set: that process runs the lead agent until its child (the accountant) pauses for an
//! approval, and exits. The test's own process then builds the agents anew on the same store,
//! reads the question from the store, answers it and resumes. Each tool records its runs in a
//! file, so the count crosses processes: `lookup`, `log` and `pay` once each.
//!
//! The store is SQLite with the feature `sqlite` (as CI runs it), else a `FileCheckpointer`.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, DynCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::subagent::SubAgentPause;
use hookchain::{Durability, EndReason, ResumeFrom, Thread, ThreadId, chain};
use serde_json::json;
use support::{EffectTool, Effects};

const DIR: &str = "HOOKCHAIN_SUB_DIR";
const THREAD: &str = "month-end";
const TEST: &str = "a_childs_approval_asked_in_one_process_is_given_in_another";

fn store(dir: &Path) -> Arc<dyn DynCheckpointer> {
    #[cfg(feature = "sqlite")]
    {
        Arc::new(hookchain::interrupt::SqliteCheckpointer::open(dir.join("store.db")).unwrap())
    }
    #[cfg(not(feature = "sqlite"))]
    {
        Arc::new(hookchain::interrupt::FileCheckpointer::new(
            dir.join("store"),
        ))
    }
}

fn effect(name: &'static str, dir: &Path) -> EffectTool {
    EffectTool {
        name,
        effects: Effects::file(dir),
        hang: false,
    }
}

/// The model of each agent: the tool calls of `plan`, one step each, then its tool results.
fn scripted(plan: &'static [(&'static str, &'static str)]) -> ScriptedModel {
    ScriptedModel::from_rule(move |request| {
        let results: Vec<String> = support::tool_texts(&request.messages);
        Ok(match plan.get(results.len()) {
            Some((id, tool)) => ModelResponse::tool_calls([ToolCall::new(
                *id,
                *tool,
                json!({ "task": "Pay INV-7." }),
            )]),
            None => ModelResponse::text(results.join(" | ")),
        })
    })
}

/// The lead (kept in the store) delegates to the accountant, which logs and then pays after an
/// approval.
fn lead(dir: &Path) -> Agent<ScriptedModel> {
    let accountant = Agent::builder(scripted(&[("log-1", "log"), ("pay-1", "pay")]))
        .name("accountant")
        .tool(effect("log", dir))
        .tool(effect("pay", dir))
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    Agent::builder(scripted(&[
        ("lookup-1", "lookup"),
        ("delegate-1", "accounts"),
    ]))
    .name("lead")
    .tool(effect("lookup", dir))
    .tool(
        accountant
            .into_tool("accounts", "Handles payments.")
            .unwrap(),
    )
    .checkpointer(store(dir), Durability::EveryStep)
    .build()
    .unwrap()
}

fn counts(dir: &Path) -> [usize; 3] {
    let effects = Effects::file(dir);
    ["lookup", "log", "pay"].map(|tool| effects.of(tool).len())
}

#[tokio::test]
async fn a_childs_approval_asked_in_one_process_is_given_in_another() {
    if let Some(dir) = std::env::var_os(DIR) {
        // The first process: the run pauses on the child's approval, and the process ends.
        let dir = Path::new(&dir);
        let mut thread: Thread<()> = Thread::with_id(ThreadId::new(THREAD));
        let paused = lead(dir)
            .run_in(&mut thread, "Settle the month.")
            .await
            .unwrap();
        assert_eq!(paused.end, EndReason::Interrupted, "{paused:?}");
        std::fs::write(
            dir.join("thread.json"),
            serde_json::to_string(&thread).unwrap(),
        )
        .unwrap();
        println!("paused");
        return;
    }
    let dir = support::temp_dir("subagents_across_processes", "approval");
    let first = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture"])
        .env(DIR, &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        first.status.success() && String::from_utf8_lossy(&first.stdout).contains("paused"),
        "{}\n{}",
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(counts(&dir), [1, 1, 0], "lookup and log ran; pay waits");

    // This process: the question, as the store holds it.
    let Some(Record::Checkpoint(stored)) = store(&dir).get(THREAD).await.unwrap() else {
        panic!("nothing stored under {THREAD}");
    };
    let [parent] = stored.interrupts() else {
        panic!("{:?}", stored.interrupts());
    };
    let child = SubAgentPause::from_interrupt(parent).expect("the child's pause");
    assert_eq!(child.agent, "accountant");
    let asked = &child.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(asked).expect("an approval");
    assert_eq!(request.actions[0].name, "pay");
    let answer = child.answer([ApprovalResponse::approve_all(&request).answer(asked)]);

    let lead = lead(&dir);
    let mut thread: Thread<()> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("thread.json")).unwrap()).unwrap();
    let done = lead
        .resume_in(
            &mut thread,
            ResumeFrom::stored(THREAD),
            [(parent.id.clone(), answer.clone())],
        )
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished, "{done:?}");
    assert_eq!(counts(&dir), [1, 1, 1], "each tool ran once");
    let text = done.text().unwrap();
    assert!(text.contains("pay done"), "{text}");

    // The same approval again: refused, nothing runs.
    let mut again: Thread<()> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("thread.json")).unwrap()).unwrap();
    let replayed = lead
        .resume_in(
            &mut again,
            ResumeFrom::stored(THREAD),
            [(parent.id.clone(), answer)],
        )
        .await;
    assert!(replayed.is_err(), "{replayed:?}");
    assert_eq!(counts(&dir), [1, 1, 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}
