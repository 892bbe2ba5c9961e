//! The server against AG-UI's own client (`@ag-ui/client` 1.0 from npm, run by node): a turn
//! streams in and the client validates and applies every event; a gated tool pauses the run
//! (an interrupt outcome); the server restarts — a new process's worth of state: a new agent,
//! a new server on the same port, the threads and checkpoints in files — and the client's
//! resume with an approval runs the tool, once, and the answer comes; then a plain turn, text
//! only.
//!
//! The client is found in npm's global root (`npm install -g @ag-ui/client@1.0.0`, which
//! `.ci/run` does), or in `$AGUI_CLIENT_NODE_PATH`.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::Durability;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::FileCheckpointer;
use hookchain::prelude::*;
use hookchain::thread_store::FileThreadStore;
use hookchain_axum::AgentServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How many times the gated tool ran.
static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Deletes a file (pretends to).
#[hookchain::tool]
async fn delete_file(
    /// The path.
    path: String,
) -> String {
    DELETED.fetch_add(1, Ordering::SeqCst);
    format!("deleted {path}")
}

type Server = AgentServer<ScriptedModel, HumanInTheLoop, FileThreadStore>;

/// The agent as a fresh process builds it, the model scripted from `answers` on.
fn server(dir: &std::path::Path, answers: Vec<ModelResponse>) -> Server {
    let agent = Agent::builder(ScriptedModel::new(answers))
        .system_prompt("You tidy folders.")
        .tool(delete_file)
        .chain(HumanInTheLoop::new().interrupt_on("delete_file", ToolPolicy::always()))
        .checkpointer(
            FileCheckpointer::new(dir.join("checkpoints")),
            Durability::Pauses,
        )
        .build()
        .expect("the agent builds");
    AgentServer::builder()
        .allow_anonymous()
        .build(Arc::new(agent), FileThreadStore::new(dir.join("threads")))
        .unwrap()
}

/// Serves `server` on `port` (0: any) until the returned sender is sent to.
async fn serve(
    server: &Server,
    port: u16,
) -> (
    u16,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind loopback");
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let router = server.router();
    let graceful = server.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
                graceful.shutdown(Duration::from_secs(5)).await;
            })
            .await
            .expect("the server runs");
    });
    (port, stop, task)
}

/// Where node finds `@ag-ui/client`.
fn node_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AGUI_CLIENT_NODE_PATH") {
        return Some(path.into());
    }
    let root = std::process::Command::new("npm")
        .args(["root", "-g"])
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8(root.stdout).ok()?.trim());
    root.join("@ag-ui/client").exists().then_some(root)
}

struct Client {
    _child: Child,
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Client {
    async fn start(url: &str, thread: &str) -> Client {
        let node_path = node_path().expect(
            "@ag-ui/client is not installed: `npm install -g @ag-ui/client@1.0.0`, or set AGUI_CLIENT_NODE_PATH",
        );
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/agui/client.cjs");
        let mut child = Command::new("node")
            .arg(script)
            .args([url, thread])
            .env("NODE_PATH", node_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            _child: child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, command: Value) -> Value {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
            .await
            .expect("the client answers")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&answer).unwrap()
    }
}

fn types(answer: &Value) -> Vec<&str> {
    answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_pauses_for_approval_the_server_restarts_and_the_resume_runs_the_tool_once() {
    let dir = std::env::temp_dir().join(format!("hookchain-agui-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let call = ToolCall::new("call_1", "delete_file", json!({"path": "logs/old.log"}));
    let first = server(&dir, vec![ModelResponse::tool_calls([call])]);
    let (port, stop, task) = serve(&first, 0).await;
    let url = format!("http://127.0.0.1:{port}/");
    let mut client = Client::start(&url, "thread-1").await;

    let paused = client
        .send(json!({"ask": "Please delete the old log.", "runId": "run-1"}))
        .await;
    assert!(paused.get("error").is_none(), "{paused:#}");
    assert_eq!(
        types(&paused),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "RUN_FINISHED"
        ],
        "{paused:#}"
    );
    let finished = paused["events"].as_array().unwrap().last().unwrap();
    assert_eq!(finished["outcome"]["type"], "interrupt", "{finished:#}");
    let interrupt = &finished["outcome"]["interrupts"][0];
    assert_eq!(interrupt["reason"], "HumanInTheLoop");
    assert_eq!(
        interrupt["metadata"]["payload"]["actions"][0]["call_id"],
        "call_1"
    );
    assert_eq!(DELETED.load(Ordering::SeqCst), 0);

    // The server goes away; another comes up on the same port with a fresh agent, whose model
    // has the rest of the script.
    stop.send(()).unwrap();
    task.await.unwrap();
    let second = server(
        &dir,
        vec![
            ModelResponse::text("Deleted logs/old.log."),
            ModelResponse::text("You are welcome."),
        ],
    );
    let (_, stop, task) = serve(&second, port).await;

    let resumed = client
        .send(json!({
            "resume": [{
                "interruptId": interrupt["id"],
                "status": "resolved",
                "payload": {"decisions": [{"type": "approve"}]},
            }],
            "runId": "run-2",
        }))
        .await;
    assert!(resumed.get("error").is_none(), "{resumed:#}");
    // The resumed step's answer is streamed again (the call it made), then its result.
    assert_eq!(
        types(&resumed),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ],
        "{resumed:#}"
    );
    assert_eq!(resumed["events"][4]["content"], "deleted logs/old.log");
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    // The client applied the events to its conversation.
    let messages = resumed["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "Deleted logs/old.log.");

    // The same run id again joins the ended run: nothing runs twice.
    let again = client
        .send(
            json!({"resume": [{"interruptId": interrupt["id"], "status": "resolved",
            "payload": {"decisions": [{"type": "approve"}]}}], "runId": "run-2"}),
        )
        .await;
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "{again:#}");

    // A plain turn: text only.
    let plain = client
        .send(json!({"ask": "Thanks!", "runId": "run-3"}))
        .await;
    assert!(plain.get("error").is_none(), "{plain:#}");
    assert_eq!(
        types(&plain),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ],
        "{plain:#}"
    );
    let messages = plain["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "You are welcome.");
    stop.send(()).unwrap();
    task.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The client's conversation holds a result for every call it was shown: a rejected call's
/// (a result the approval supplied, not the tool), and a cancelled pause's (the call closed,
/// not run) — as the thread on the server does, so that no UI shows a call pending forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_call_and_a_cancelled_pause_close_the_calls_the_client_was_shown() {
    let dir = std::env::temp_dir().join(format!("hookchain-agui-closed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let calls = [
        ToolCall::new("call_r", "delete_file", json!({"path": "a.txt"})),
        ToolCall::new("call_c", "delete_file", json!({"path": "b.txt"})),
    ];
    let server = server(
        &dir,
        vec![
            ModelResponse::tool_calls([calls[0].clone()]),
            ModelResponse::text("I left a.txt alone."),
            ModelResponse::tool_calls([calls[1].clone()]),
        ],
    );
    let (port, stop, task) = serve(&server, 0).await;
    let mut client = Client::start(&format!("http://127.0.0.1:{port}/"), "thread-2").await;
    let tool_results = |answer: &Value| -> Vec<(String, String)> {
        answer["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "tool")
            .map(|message| {
                (
                    message["toolCallId"].as_str().unwrap().to_owned(),
                    message["content"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let interrupt_of = |answer: &Value| {
        answer["events"].as_array().unwrap().last().unwrap()["outcome"]["interrupts"][0]["id"]
            .clone()
    };

    let paused = client
        .send(json!({"ask": "Delete a.txt", "runId": "run-1"}))
        .await;
    let rejected = client
        .send(json!({
            "resume": [{"interruptId": interrupt_of(&paused), "status": "resolved",
                        "payload": {"decisions": [{"type": "reject", "message": "Keep it."}]}}],
            "runId": "run-2",
        }))
        .await;
    assert!(rejected.get("error").is_none(), "{rejected:#}");
    let results = tool_results(&rejected);
    assert_eq!(results.len(), 1, "{rejected:#}");
    assert_eq!(results[0].0, "call_r");
    assert!(results[0].1.contains("Keep it."), "{results:?}");

    let paused = client
        .send(json!({"ask": "Delete b.txt", "runId": "run-3"}))
        .await;
    let cancelled = client
        .send(json!({
            "resume": [{"interruptId": interrupt_of(&paused), "status": "cancelled"}],
            "runId": "run-4",
        }))
        .await;
    assert!(cancelled.get("error").is_none(), "{cancelled:#}");
    let results = tool_results(&cancelled);
    assert_eq!(results.len(), 2, "{cancelled:#}");
    assert_eq!(results[1].0, "call_c");
    assert!(results[1].1.contains("not executed"), "{results:?}");
    stop.send(()).unwrap();
    task.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
