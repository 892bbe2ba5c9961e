//! An MCP server killed mid-call (DESIGN §21, issue 43 item 3): a Python `mcp` server of the
//! test's own (`servers/charge_once.py`) whose approved `charge` dies before it acts, or after
//! it acted and before it answered. The toolset starts the server again, `ToolRetry` sends the
//! call again — under the same idempotency key, in `_meta` — and the server, which deduplicates
//! by it, acts once; the finished run reports the call's result exactly once.

mod support;

use std::path::{Path, PathBuf};

use hookchain::builtin::ToolRetry;
use hookchain::builtin::human_in_the_loop::{ApprovalResponse, HumanInTheLoop, ToolPolicy};
use hookchain::prelude::*;
use hookchain::{EndReason, RunOutput, chain};
use hookchain_mcp::{McpServer, McpToolset};
use serde_json::{Value, json};
use support::{guard, tool_messages};

/// Where the server dies: nowhere, before acting, after acting.
const DEATHS: [&str; 3] = ["", "before", "after"];

/// The ledger's lines: `{"attempt": key}` for each call the server got, `{"acted": key, …}`
/// for each time it acted.
fn ledger(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("hookchain-mcp-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One approved charge, its server dying at `die_at`: the run's outcome and the ledger.
async fn charge_once(die_at: &str) -> (RunOutput, Vec<Value>) {
    let dir = scratch(if die_at.is_empty() { "none" } else { die_at });
    let ledger_path = dir.join("ledger.jsonl");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/charge_once.py");
    let server = McpServer::stdio("payments", "python3")
        .arg(script)
        .env("LEDGER", &ledger_path)
        .env("DIE_AT", die_at)
        .env("DIED", dir.join("died"));
    let toolset = McpToolset::connect([server]).await.unwrap();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "charge", json!({"amount": 40}))]),
        ModelResponse::text("Charged."),
    ]);
    let agent = Agent::builder(model)
        .tools(toolset.registry())
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("charge", ToolPolicy::always()),
            ToolRetry::new()
        ])
        .build()
        .unwrap();
    let paused = agent.run("Charge 40.").await.unwrap();
    let approval = ApprovalResponse::approve_every(paused.interrupts());
    let done = agent
        .resume(paused.checkpoint.clone().unwrap(), approval)
        .await
        .unwrap();
    toolset.close().await;
    let lines = ledger(&ledger_path);
    let _ = std::fs::remove_dir_all(&dir);
    (done, lines)
}

#[tokio::test]
async fn a_server_killed_mid_call_acts_once_and_the_run_reports_one_result() {
    guard(async {
        support::servers::require_python_module("mcp", "mcp");
        for die_at in DEATHS {
            let (done, lines) = charge_once(die_at).await;
            let context = format!("dying {die_at:?}: {lines:?}");
            assert_eq!(done.end, EndReason::Finished, "{context}");
            let results = tool_messages(&done.messages);
            assert_eq!(results.len(), 1, "{context}");
            assert!(
                results[0].text().starts_with("charged 40"),
                "{context}: {}",
                results[0].text()
            );
            let attempts: Vec<&Value> = lines
                .iter()
                .filter_map(|line| line.get("attempt"))
                .collect();
            let acted: Vec<&Value> = lines.iter().filter_map(|line| line.get("acted")).collect();
            assert_eq!(acted.len(), 1, "acted once: {context}");
            let expected = if die_at.is_empty() { 1 } else { 2 };
            assert_eq!(attempts.len(), expected, "{context}");
            // Every attempt carried the call's key, the same one.
            assert!(attempts.iter().all(|key| key.is_string()), "{context}");
            assert!(attempts.iter().all(|key| *key == acted[0]), "{context}");
        }
    })
    .await;
}
