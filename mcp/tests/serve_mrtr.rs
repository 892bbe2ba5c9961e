//! A served approval answered over MCP 2026-07-28's input-required results (MRTR) by the
//! official Python client (`pip install mcp`): the call waits for its user's answer with no
//! session and no process holding it, and is answered on a server restarted in between — the
//! approved charge made once, a replayed answer and another user's refused. A client of
//! 2025-11-25 is asked in its session instead.
//!
//! The server keeps its paused calls in a `FileCheckpointer` and seals their state with a
//! key it is given: a restart is a new agent and a new server on the same directory, key and
//! port. The tool writes each charge to a ledger file, the one witness of what ran.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::FileCheckpointer;
use hookchain::prelude::*;
use hookchain::{chain, tool};
use hookchain_mcp::{McpToolServer, RequestStateCodec, ServedPauses};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

mod served;

/// The client: `auto` lets the client's own loop answer (its elicitation callback says
/// `asked …` and waits for a line on stdin before it approves); `ask` makes the first call
/// and prints the input-required result; `answer` gives an answer and a state.
const CLIENT: &str = r#"
import anyio, json, sys
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

mode, url, user = sys.argv[1], sys.argv[2], sys.argv[3]
ARGUMENTS = {"cents": 250}

def result_json(result):
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(dumped)

async def elicit(context, params):
    print("asked " + json.dumps(params.message), flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    return types.ElicitResult(action="accept", content={"approve": True})

async def main():
    async with create_mcp_http_client(headers={"Authorization": "Bearer " + user}) as http:
        transport = streamable_http_client(url, http_client=http)
        pinned = "legacy" if mode.startswith("legacy") else "auto"
        # `legacy-plain`: a client that takes no elicitation.
        callback = None if mode == "legacy-plain" else elicit
        async with Client(transport, mode=pinned, elicitation_callback=callback) as client:
            print("version " + client.protocol_version, flush=True)
            try:
                if mode in ("auto", "legacy", "legacy-plain"):
                    result = await client.call_tool("charge", ARGUMENTS)
                elif mode == "ask":
                    result = await client.session.call_tool("charge", ARGUMENTS, allow_input_required=True)
                else:
                    state, action = sys.argv[4], sys.argv[5]
                    content = {"approve": action == "approve"}
                    responses = {"answer": {"action": "accept", "content": content}}
                    result = await client.call_tool("charge", ARGUMENTS, input_responses=responses, request_state=state)
                print("result " + result_json(result), flush=True)
            except Exception as error:
                print("refused " + json.dumps(str(error)), flush=True)

anyio.run(main)
"#;

/// Where the tool writes its charges (the test's scratch directory's `ledger`).
static LEDGER: OnceLock<PathBuf> = OnceLock::new();

/// Charges the card on file.
#[tool]
async fn charge(cents: u64) -> String {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(LEDGER.get().expect("the ledger's path"))
        .expect("the ledger opens");
    // One write per line: lines of two servers never interleave.
    file.write_all(format!("charge {cents}\n").as_bytes())
        .expect("the ledger is written");
    format!("charged {cents}")
}

/// The ledger's lines.
fn ledger() -> Vec<String> {
    std::fs::read_to_string(LEDGER.get().expect("the ledger's path"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A running server, stopped (its connections too) by [`Running::stop`].
struct Running {
    stop: oneshot::Sender<()>,
    served: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Starts a server on `port` whose paused calls are kept in `dir`: a new agent, a new
    /// store over the same directory, the same key.
    async fn start(dir: &Path, port: u16) -> Running {
        let approval = HumanInTheLoop::new().interrupt_on("charge", ToolPolicy::always());
        let agent = Agent::builder(ScriptedModel::new([]))
            .tool(charge)
            .chain(chain![approval])
            .build()
            .unwrap();
        let codec = RequestStateCodec::new_with_keyring("k1", [("k1", [42u8; 32])]).unwrap();
        let pauses = ServedPauses::new(FileCheckpointer::new(dir.join("pauses")), codec);
        let server = McpToolServer::new(Arc::new(agent))
            .authorize(served::bearer())
            .pauses(pauses);
        // The port of the server before: a client answers at the address it was asked at.
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break listener,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            server.serve_http(listener, shutdown).await.unwrap();
        });
        Running { stop, served }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.served.await.unwrap();
    }
}

/// The client in one of its modes, as one user, its stdout read line by line.
struct PythonClient {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl PythonClient {
    fn start(script: &Path, mode: &str, url: &str, user: &str, more: &[&str]) -> Self {
        let mut child = Command::new("python3")
            .arg(script)
            .args([mode, url, user])
            .args(more)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs (with `pip install mcp`)");
        let out = BufReader::new(child.stdout.take().expect("the client's stdout"));
        PythonClient { child, out }
    }

    /// The next line it prints that starts with one of `prefixes`: which, and the rest.
    /// (Blocking: called in `block_in_place`, the server on the runtime's other thread.)
    fn expect(&mut self, prefixes: &[&str]) -> (String, String) {
        tokio::task::block_in_place(|| {
            let mut line = String::new();
            loop {
                line.clear();
                let read = self.out.read_line(&mut line).expect("the client's output");
                assert!(
                    read > 0,
                    "the client ended before printing any of {prefixes:?}"
                );
                for prefix in prefixes {
                    if let Some(rest) = line.trim_end().strip_prefix(&format!("{prefix} ")) {
                        return ((*prefix).to_owned(), rest.to_owned());
                    }
                }
            }
        })
    }

    /// Its version, then its outcome (`result` or `refused`, with its JSON), once it ended.
    fn outcome(mut self) -> (String, String, Value) {
        let (_, version) = self.expect(&["version"]);
        let (kind, rest) = self.expect(&["result", "refused"]);
        let status = tokio::task::block_in_place(|| self.child.wait()).unwrap();
        assert!(status.success(), "the client failed");
        (version, kind, serde_json::from_str(&rest).unwrap())
    }
}

impl PythonClient {
    /// Approves what its user was asked (its callback waits for this line), then waits for
    /// its end: the text of the result it got.
    fn approve(mut self) -> String {
        let stdin = self.child.stdin.as_mut().expect("the client's stdin");
        stdin
            .write_all(b"approve\n")
            .expect("the approval is written");
        let (kind, result) = self.expect(&["result", "refused"]);
        let result: Value = serde_json::from_str(&result).unwrap();
        assert_eq!(kind, "result", "{result}");
        tokio::task::block_in_place(|| self.child.wait()).unwrap();
        text(&result).to_owned()
    }
}

/// The text of a result the client printed.
fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_approval_is_answered_over_mrtr_once_on_a_restarted_server() {
    let dir = std::env::temp_dir().join(format!("hookchain-mcp-mrtr-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    LEDGER.set(dir.join("ledger")).unwrap();
    let script = dir.join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut server = Running::start(&dir, port).await;

    // The client's own loop: asked, the server restarted while its user reads, approved.
    let mut alice = PythonClient::start(&script, "auto", &url, "alice", &[]);
    let (_, version) = alice.expect(&["version"]);
    assert_eq!(version, "2026-07-28");
    let (_, message) = alice.expect(&["asked"]);
    assert!(
        message.contains("`charge`") && message.contains("250"),
        "{message}"
    );
    assert!(
        ledger().is_empty(),
        "charged before the approval: {:?}",
        ledger()
    );
    server.stop().await;
    server = Running::start(&dir, port).await;
    assert_eq!(alice.approve(), "charged 250");
    assert_eq!(ledger(), ["charge 250"]);

    // Driven by hand: asked once, the state kept by the client, answered later.
    let (version, kind, asked) = PythonClient::start(&script, "ask", &url, "alice", &[]).outcome();
    assert_eq!(
        (version.as_str(), kind.as_str()),
        ("2026-07-28", "result"),
        "{asked}"
    );
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["inputRequests"]["answer"]["method"], "elicitation/create",
        "{asked}"
    );
    let state = asked["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    let answer = |user: &str, decision: &str| {
        PythonClient::start(&script, "answer", &url, user, &[&state, decision]).outcome()
    };
    // Another user's answer to alice's call: refused, nothing runs.
    let (_, kind, refused) = answer("mallory", "approve");
    assert_eq!(kind, "refused", "{refused}");
    assert_eq!(ledger(), ["charge 250"]);
    // A state changed by the client: refused.
    let tampered = format!("{}x", &state[..state.len() - 1]);
    let (_, kind, refused) =
        PythonClient::start(&script, "answer", &url, "alice", &[&tampered, "approve"]).outcome();
    assert_eq!(kind, "refused", "{refused}");
    // Restarted again, then alice's answer: charged once.
    server.stop().await;
    server = Running::start(&dir, port).await;
    let (_, kind, result) = answer("alice", "approve");
    assert_eq!(
        (kind.as_str(), text(&result)),
        ("result", "charged 250"),
        "{result}"
    );
    assert_eq!(ledger(), ["charge 250", "charge 250"]);
    // The same answer again (a retry, a replay): refused, not charged again.
    let (_, kind, refused) = answer("alice", "approve");
    assert_eq!(kind, "refused", "{refused}");
    assert!(
        refused
            .as_str()
            .unwrap_or_default()
            .contains("answered already"),
        "{refused}"
    );
    assert_eq!(ledger().len(), 2);

    // A rejection: an error result naming it, nothing charged.
    let (_, _, asked) = PythonClient::start(&script, "ask", &url, "alice", &[]).outcome();
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let (_, kind, result) =
        PythonClient::start(&script, "answer", &url, "alice", &[&state, "reject"]).outcome();
    assert_eq!(kind, "result", "{result}");
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("rejected"), "{result}");
    assert_eq!(ledger().len(), 2);

    // A client of 2025-11-25 is asked in its session, the call waiting in the server.
    let mut legacy = PythonClient::start(&script, "legacy", &url, "alice", &[]);
    let (_, version) = legacy.expect(&["version"]);
    assert_eq!(version, "2025-11-25");
    let (_, message) = legacy.expect(&["asked"]);
    assert!(message.contains("`charge`"), "{message}");
    assert_eq!(legacy.approve(), "charged 250");
    assert_eq!(ledger().len(), 3);
    // One that takes no elicitation cannot be asked: the call ends, saying so, and does not run.
    let (version, kind, result) =
        PythonClient::start(&script, "legacy-plain", &url, "alice", &[]).outcome();
    assert_eq!(
        (version.as_str(), kind.as_str()),
        ("2025-11-25", "result"),
        "{result}"
    );
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("cannot ask"), "{result}");
    assert_eq!(ledger().len(), 3);

    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
