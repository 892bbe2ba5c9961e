//! A server's elicitation as a durable interrupt, against `@modelcontextprotocol/server-everything`
//! (its `trigger-elicitation-request` asks for a form, and says what it got).
//!
//! The main test runs the agent in a child process (its own binary, `current_exe() --exact
//! <name>` with `HOOKCHAIN_ELICIT_DIR` set): the run pauses on the elicitation, its checkpoint
//! in a file store. The parent — another process, with another server process — reads the
//! question from the store, resumes with the answer, and the server's tool gets it; a second
//! resume with the same answer is refused and runs nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use hookchain::builtin::ToolRetry;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, FileCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::{Durability, EndReason, ResumeFrom, Role, Thread, ThreadId, chain};
use hookchain_mcp::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationRequest, accept_defaults,
};
use hookchain_mcp::{McpProtocol, McpToolset};
use serde_json::json;
use support::servers::everything_stdio;
use support::{guard, tool_messages};

const DIR: &str = "HOOKCHAIN_ELICIT_DIR";
const THREAD: &str = "signup-1";
const TOOL: &str = "trigger-elicitation-request";

/// The agent of both processes: the model calls the tool (which needs approval, and may be
/// retried), then answers with what it read.
fn agent(toolset: &McpToolset, dir: &Path) -> Agent<ScriptedModel, (ToolRetry, HumanInTheLoop)> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(format!("read: {}", result.text())),
                None => ModelResponse::tool_calls([ToolCall::new("c1", TOOL, json!({}))]),
            },
        )
    });
    Agent::builder(model)
        .tools(toolset.registry())
        .chain(chain![
            ToolRetry::new(),
            HumanInTheLoop::new().interrupt_on(TOOL, ToolPolicy::always())
        ])
        .checkpointer(
            Arc::new(FileCheckpointer::new(dir.join("store"))),
            Durability::EveryStep,
        )
        .build()
        .unwrap()
}

fn thread_file(dir: &Path) -> PathBuf {
    dir.join("thread.json")
}

/// The child: the call is approved, then the elicitation pauses the run; its thread is left
/// in a file.
async fn pause_in_this_process(dir: &Path) {
    let toolset = McpToolset::connect([everything_stdio("everything")])
        .await
        .unwrap();
    let agent = agent(&toolset, dir);
    let mut thread: Thread<_> = Thread::with_id(ThreadId::new(THREAD));
    let to_approve = agent.run_in(&mut thread, "Sign me up.").await.unwrap();
    let checkpoint = to_approve.checkpoint.expect("paused for the approval");
    let approval = &checkpoint.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(approval).expect("an approval");
    let approve = ApprovalResponse::approve_all(&request).answer(approval);
    let paused = agent
        .resume_in(&mut thread, checkpoint.clone(), [approve])
        .await
        .unwrap();
    assert_eq!(paused.end, EndReason::Interrupted, "{paused:?}");
    let elicited = &paused
        .checkpoint
        .as_ref()
        .expect("paused again")
        .interrupts()[0];
    assert!(
        Elicitation::from_interrupt(elicited).is_some(),
        "{elicited:?}"
    );
    std::fs::write(thread_file(dir), serde_json::to_string(&thread).unwrap()).unwrap();
    toolset.close().await;
    println!("child: paused");
}

#[tokio::test]
async fn an_elicitation_pauses_the_run_and_another_process_resumes_it_with_the_answer() {
    if let Some(dir) = std::env::var_os(DIR) {
        return guard(pause_in_this_process(Path::new(&dir))).await;
    }
    guard(async {
        let dir = std::env::temp_dir().join(format!("hookchain-mcp-elicit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "an_elicitation_pauses_the_run_and_another_process_resumes_it_with_the_answer",
                "--nocapture",
            ])
            .env(DIR, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&child.stdout);
        assert!(
            child.status.success() && said.contains("child: paused"),
            "{said}\n{}",
            String::from_utf8_lossy(&child.stderr)
        );

        // This process: what the store holds is the question to put to the user.
        let store = FileCheckpointer::new(dir.join("store"));
        let Some(Record::Checkpoint(checkpoint)) = store.get(THREAD).await.unwrap() else {
            panic!("no checkpoint stored under {THREAD}");
        };
        let [interrupt] = checkpoint.interrupts() else {
            panic!("{:?}", checkpoint.interrupts());
        };
        let asked = Elicitation::from_interrupt(interrupt).expect("an elicitation");
        assert_eq!(asked.server, "everything");
        assert_eq!(asked.tool, TOOL);
        assert!(
            asked.message.contains("Please provide"),
            "{}",
            asked.message
        );
        assert_eq!(
            asked.requested_schema["properties"]["name"]["type"],
            "string"
        );
        assert!(asked.answered.is_empty());
        let answer = asked.answer(
            ElicitationAnswer::accept(json!({"name": "Ada Lovelace", "check": true, "integer": 7}))
                .unwrap(),
        );

        let toolset = McpToolset::connect([everything_stdio("everything")])
            .await
            .unwrap();
        let agent = agent(&toolset, &dir);
        let mut thread: Thread<_> =
            serde_json::from_str(&std::fs::read_to_string(thread_file(&dir)).unwrap()).unwrap();
        let output = agent
            .resume_in(
                &mut thread,
                ResumeFrom::stored(THREAD),
                [(interrupt.id.clone(), answer.clone())],
            )
            .await
            .unwrap();
        assert_eq!(output.end, EndReason::Finished, "{output:?}");
        let results = tool_messages(&output.messages);
        assert_eq!(results.len(), 1, "one result for the one call: {results:?}");
        let text = results[0].text();
        assert!(!results[0].is_error, "{text}");
        assert!(
            text.contains("User provided the requested information"),
            "{text}"
        );
        assert!(text.contains("Name: Ada Lovelace"), "{text}");
        assert!(text.contains("Favorite Integer: 7"), "{text}");

        // The same answer again (a client's retry, a replayed request): refused, nothing runs.
        let mut again: Thread<_> =
            serde_json::from_str(&std::fs::read_to_string(thread_file(&dir)).unwrap()).unwrap();
        let replay = agent
            .resume_in(
                &mut again,
                ResumeFrom::stored(THREAD),
                [(interrupt.id.clone(), answer)],
            )
            .await;
        assert!(replay.is_err(), "{replay:?}");
        toolset.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}

/// A declined form reaches the server as `decline`, in one process with the in-memory store.
#[tokio::test]
async fn a_declined_elicitation_reaches_the_server_as_declined() {
    guard(async {
        let toolset = McpToolset::connect([everything_stdio("everything")])
            .await
            .unwrap();
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("c1", TOOL, json!({}))]),
            ModelResponse::text("ok"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .build()
            .unwrap();
        let paused = agent.run("Sign me up.").await.unwrap();
        assert_eq!(paused.end, EndReason::Interrupted);
        let checkpoint = paused.checkpoint.expect("a checkpoint");
        let interrupt = &checkpoint.interrupts()[0];
        let asked = Elicitation::from_interrupt(interrupt).expect("an elicitation");
        // An answer that is not `Elicitation::answer`'s is refused before anything runs.
        let refused = agent
            .resume(checkpoint.clone(), [(interrupt.id.clone(), json!("Ada"))])
            .await;
        assert!(refused.is_err(), "{refused:?}");
        let answer = asked.answer(ElicitationAnswer::Decline);
        let output = agent
            .resume(checkpoint.clone(), [(interrupt.id.clone(), answer)])
            .await
            .unwrap();
        let results = tool_messages(&output.messages);
        assert!(results[0].text().contains("declined"), "{results:?}");
        toolset.close().await;
    })
    .await;
}

/// A client that says it does not elicit is offered no tool that needs it (the server only
/// registers `trigger-elicitation-request` for clients that declare elicitation).
#[tokio::test]
async fn without_elicitation_the_server_offers_no_tool_that_needs_it() {
    guard(async {
        let with = McpToolset::connect([everything_stdio("everything")])
            .await
            .unwrap();
        let without = McpToolset::connect([everything_stdio("everything").elicitation(false)])
            .await
            .unwrap();
        assert!(with.tool(TOOL).is_some(), "{:?}", with.tools());
        assert!(without.tool(TOOL).is_none(), "{:?}", without.tools());
        with.close().await;
        without.close().await;
    })
    .await;
}

/// A tool that asks twice, the second question after the first's answer (a Python `mcp`
/// server of the test's own), under each revision: the run pauses on the first question, then
/// on the second, and the call ends with both answers — each question answered once. Under
/// 2025-11-25 the call is made again with the answers so far (the second pause carries the
/// first answer); under 2026-07-28 each question is a round of its own, the first answer in
/// the server's state.
#[tokio::test]
async fn a_tool_that_asks_twice_pauses_twice_and_gets_both_answers() {
    guard(async {
        support::servers::require_python_module("mcp", "mcp");
        for protocol in [McpProtocol::V2025_11_25, McpProtocol::Negotiate] {
            asks_twice(protocol).await;
        }
    })
    .await;
}

async fn asks_twice(protocol: McpProtocol) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/elicit_twice.py");
    let server = hookchain_mcp::McpServer::stdio("signup", "python3")
        .arg(script)
        .protocol(protocol);
    let toolset = McpToolset::connect([server]).await.unwrap();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "sign_up", json!({}))]),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model)
        .tools(toolset.registry())
        .build()
        .unwrap();
    let first = agent.run("Sign me up.").await.unwrap();
    let interrupt = first.interrupts()[0].clone();
    let asked = Elicitation::from_interrupt(&interrupt).expect("the first question");
    assert_eq!(asked.message, "Your name?", "{protocol:?}");
    let answer = asked.answer(ElicitationAnswer::accept(json!({"name": "Ada"})).unwrap());
    let second = agent
        .resume(first.checkpoint.clone().unwrap(), [(interrupt.id, answer)])
        .await
        .unwrap();
    let interrupt = second.interrupts()[0].clone();
    let asked = Elicitation::from_interrupt(&interrupt).expect("the second question");
    assert_eq!(asked.message, "Your city?", "{protocol:?}");
    if protocol == McpProtocol::V2025_11_25 {
        assert_eq!(asked.answered.len(), 1, "the first answer, carried");
        assert!(asked.round.is_none());
    } else {
        assert!(asked.answered.is_empty(), "a round of its own");
        assert!(asked.round.is_some(), "2026-07-28: input required");
    }
    let answer = asked.answer(ElicitationAnswer::accept(json!({"city": "Lyon"})).unwrap());
    let done = agent
        .resume(second.checkpoint.clone().unwrap(), [(interrupt.id, answer)])
        .await
        .unwrap();
    let results = tool_messages(&done.messages);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].text().contains("signed up Ada from Lyon"),
        "{protocol:?}: {}",
        results[0].text()
    );
    toolset.close().await;
}

/// A handler answers what it can in the process, under each revision: the name, given by the
/// application, never pauses the run; the city does, once. A handler that accepts forms as
/// their defaults fill them answers a form with a default without a pause.
#[tokio::test]
async fn a_handler_answers_what_it_can_and_the_run_pauses_on_the_rest() {
    guard(async {
        support::servers::require_python_module("mcp", "mcp");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/elicit_twice.py");
        for protocol in [McpProtocol::V2025_11_25, McpProtocol::Negotiate] {
            let server = || {
                hookchain_mcp::McpServer::stdio("signup", "python3")
                    .arg(script)
                    .protocol(protocol)
            };
            let knows_the_name = |request: &ElicitationRequest<'_>| {
                (request.message == "Your name?")
                    .then(|| ElicitationAnswer::accept(json!({"name": "Ada"})).unwrap())
            };
            let toolset = McpToolset::connect([server().on_elicitation(knows_the_name)])
                .await
                .unwrap();
            let agent = |toolset: &McpToolset, tool: &str| {
                let model = ScriptedModel::new([
                    ModelResponse::tool_calls([ToolCall::new("c1", tool, json!({}))]),
                    ModelResponse::text("ok"),
                ]);
                Agent::builder(model)
                    .tools(toolset.registry())
                    .build()
                    .unwrap()
            };
            let signing_up = agent(&toolset, "sign_up");
            let paused = signing_up.run("Sign me up.").await.unwrap();
            let interrupt = paused.interrupts()[0].clone();
            let asked = Elicitation::from_interrupt(&interrupt).unwrap();
            assert_eq!(asked.message, "Your city?", "{protocol:?}");
            let answer = asked.answer(ElicitationAnswer::accept(json!({"city": "Lyon"})).unwrap());
            let done = signing_up
                .resume(paused.checkpoint.clone().unwrap(), [(interrupt.id, answer)])
                .await
                .unwrap();
            let results = tool_messages(&done.messages);
            assert!(
                results[0].text().contains("signed up Ada from Lyon"),
                "{protocol:?}: {}",
                results[0].text()
            );
            toolset.close().await;

            let toolset = McpToolset::connect([server().on_elicitation(accept_defaults)])
                .await
                .unwrap();
            let done = agent(&toolset, "pick_color").run("Pick.").await.unwrap();
            assert!(done.interrupts().is_empty(), "{protocol:?}");
            let results = tool_messages(&done.messages);
            assert!(
                results[0].text().contains("picked blue"),
                "{protocol:?}: {}",
                results[0].text()
            );
            toolset.close().await;
        }
    })
    .await;
}

/// Set in the child process of the input-required test: the directory of its store.
const MRTR_DIR: &str = "HOOKCHAIN_MRTR_DIR";
const PAYMENT: &str = "payment-1";

/// The server of the input-required test (`servers/charge_then_ask.py`), its ledger in `dir`.
fn payments(dir: &Path) -> hookchain_mcp::McpServer {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/servers/charge_then_ask.py"
    );
    hookchain_mcp::McpServer::stdio("payments", "python3")
        .arg(script)
        .env("LEDGER", dir.join("ledger.txt"))
}

/// The agent of both processes of the input-required test: it pays 42, then says what the
/// tool said; every step kept in a file store.
fn payer(toolset: &McpToolset, dir: &Path) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(result.text().into_owned()),
                None => {
                    ModelResponse::tool_calls([ToolCall::new("c1", "pay", json!({"amount": 42}))])
                }
            },
        )
    });
    Agent::builder(model)
        .tools(toolset.registry())
        .checkpointer(
            Arc::new(FileCheckpointer::new(dir.join("store"))),
            Durability::EveryStep,
        )
        .build()
        .unwrap()
}

/// The child of the input-required test: the run pauses on the server's question, its thread
/// left in a file; then the process ends, and its server with it.
async fn pay_until_asked(dir: &Path) {
    let toolset = McpToolset::connect([payments(dir)]).await.unwrap();
    let mut thread: Thread<_> = Thread::with_id(ThreadId::new(PAYMENT));
    let paused = payer(&toolset, dir)
        .run_in(&mut thread, "Pay 42.")
        .await
        .unwrap();
    assert_eq!(paused.end, EndReason::Interrupted, "{paused:?}");
    std::fs::write(thread_file(dir), serde_json::to_string(&thread).unwrap()).unwrap();
    toolset.close().await;
    println!("child: asked");
}

/// MCP 2026-07-28 across processes: a server's tool that acts, then asks
/// (`servers/charge_then_ask.py`, an input-required result of the Python `mcp` SDK, its state
/// sealed by the SDK) pauses the run in a child process, which then ends, its server with it;
/// the server's state is in the checkpoint the child stored. This process reads the question
/// from the store and resumes the run on a toolset of its own — another server process: the
/// call is made again with the answer and the state, the server goes on where it asked, and
/// its charge, made before it asked, is not made again. The same answer again is refused.
#[tokio::test]
async fn a_server_that_acts_then_asks_acts_once_when_another_process_answers() {
    if let Some(dir) = std::env::var_os(MRTR_DIR) {
        return guard(pay_until_asked(Path::new(&dir))).await;
    }
    guard(async {
        support::servers::require_python_module("mcp", "mcp");
        let dir = std::env::temp_dir().join(format!("hookchain-mrtr-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_server_that_acts_then_asks_acts_once_when_another_process_answers",
                "--nocapture",
            ])
            .env(MRTR_DIR, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&child.stdout);
        assert!(
            child.status.success() && said.contains("child: asked"),
            "{said}\n{}",
            String::from_utf8_lossy(&child.stderr)
        );
        let charges = || std::fs::read_to_string(dir.join("ledger.txt")).unwrap_or_default();
        assert_eq!(charges().lines().count(), 1, "charged before it asked");

        // This process: the question is what the store holds.
        let store = FileCheckpointer::new(dir.join("store"));
        let Some(Record::Checkpoint(checkpoint)) = store.get(PAYMENT).await.unwrap() else {
            panic!("no checkpoint stored under {PAYMENT}");
        };
        let [interrupt] = checkpoint.interrupts() else {
            panic!("{:?}", checkpoint.interrupts());
        };
        let asked = Elicitation::from_interrupt(interrupt).expect("the server's question");
        assert_eq!(asked.message, "Charged 42. Where should the receipt go?");
        assert!(asked.round.is_some(), "asked by an input-required result");
        let answer =
            asked.answer(ElicitationAnswer::accept(json!({"email": "ada@example.com"})).unwrap());

        let toolset = McpToolset::connect([payments(&dir)]).await.unwrap();
        let agent = payer(&toolset, &dir);
        let read_thread = || -> Thread<()> {
            serde_json::from_str(&std::fs::read_to_string(thread_file(&dir)).unwrap()).unwrap()
        };
        let mut thread = read_thread();
        let done = agent
            .resume_in(
                &mut thread,
                ResumeFrom::stored(PAYMENT),
                [(interrupt.id.clone(), answer.clone())],
            )
            .await
            .unwrap();
        assert_eq!(
            done.text().as_deref(),
            Some("charged 42; receipt sent to ada@example.com")
        );
        let charged = charges();
        assert_eq!(charged.lines().count(), 1, "charged once: {charged}");
        assert!(charged.starts_with("charge "), "{charged}");

        // The same answer again (a client's retry): refused, nothing runs.
        let replay = agent
            .resume_in(
                &mut read_thread(),
                ResumeFrom::stored(PAYMENT),
                [(interrupt.id.clone(), answer)],
            )
            .await;
        assert!(replay.is_err(), "{replay:?}");
        assert_eq!(charges().lines().count(), 1);
        toolset.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}
