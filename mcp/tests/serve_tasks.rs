//! Calls served as MCP Tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28),
//! spoken to in plain JSON-RPC over HTTP: a task that waits for its user's answer is read and
//! answered on a server restarted in between (its store a directory), its call runs once,
//! and another user can neither read, answer nor cancel it; a cancelled task's call is
//! stopped.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookchain::interrupt::FileCheckpointer;
use hookchain::prelude::*;
use hookchain::{Content, Tool, ToolError, ToolSpec};
use hookchain_mcp::{McpToolServer, ServedTasks, TaskSupport};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

mod served;

const PROTOCOL: &str = "2026-07-28";

/// What the tools did: `deleted <file>`, `started`, `dropped`.
static DONE: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The calls of `wait` that were dropped before they ended.
static DROPPED: AtomicUsize = AtomicUsize::new(0);

fn done() -> Vec<String> {
    DONE.lock().unwrap().clone()
}

/// `delete` asks its user to confirm, then deletes (writes `deleted <file>`); `wait` waits a
/// minute.
struct Fixture(&'static str);

/// Counts a `wait` dropped before its end.
struct Dropped;

impl Drop for Dropped {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Tool for Fixture {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.0,
            "A fixture.",
            json!({ "type": "object", "properties": {} }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let file = arguments["file"].as_str().unwrap_or("?").to_owned();
        if self.0 == "wait" {
            let dropped = Dropped;
            DONE.lock().unwrap().push("started".to_owned());
            tokio::time::sleep(Duration::from_secs(60)).await;
            std::mem::forget(dropped);
            return Ok("waited".into());
        }
        let Some(answer) = cx.resume_value() else {
            return Err(ToolError::Interrupt {
                payload: json!({ "inputRequests": { "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": format!("Delete {file}?"),
                        "requestedSchema": {
                            "type": "object",
                            "properties": { "confirm": { "type": "boolean" } },
                            "required": ["confirm"],
                        },
                    },
                } } }),
            });
        };
        if answer["confirm"]["content"]["confirm"] != json!(true) {
            return Ok(format!("kept {file}").into());
        }
        DONE.lock().unwrap().push(format!("deleted {file}"));
        Ok(format!("deleted {file}").into())
    }
}

/// A running server, stopped by [`Running::stop`].
struct Running {
    stop: oneshot::Sender<()>,
    served: tokio::task::JoinHandle<()>,
    url: String,
}

impl Running {
    /// A new agent and server whose tasks are kept in `dir`.
    async fn start(dir: &Path) -> Running {
        let agent = Agent::builder(ScriptedModel::new([]))
            .tool(Fixture("delete"))
            .tool(Fixture("wait"))
            .build()
            .unwrap();
        let tasks = ServedTasks::new(FileCheckpointer::new(dir))
            .tool("delete", TaskSupport::Required)
            .tool("wait", TaskSupport::Optional);
        let server = McpToolServer::new(Arc::new(agent))
            .authorize(served::bearer())
            .tasks(tasks);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            server
                .serve_http(listener, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Running { stop, served, url }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.served.await.unwrap();
    }
}

/// A client of 2026-07-28 that takes tasks, as `user`.
struct Client {
    http: reqwest::Client,
    user: &'static str,
}

impl Client {
    fn new(user: &'static str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Client {
            http: reqwest::Client::new(),
            user,
        }
    }

    /// `method` with `params` at `url` (named `name` in its `Mcp-Name` header): the result,
    /// or the JSON-RPC error.
    async fn request(
        &self,
        url: &str,
        method: &str,
        name: &str,
        mut params: Value,
    ) -> Result<Value, Value> {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientInfo": { "name": "plain", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": { "form": {} },
                "extensions": { "io.modelcontextprotocol/tasks": {} },
            },
        });
        let message = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let response = self
            .http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", method)
            .header("mcp-name", name)
            .bearer_auth(self.user)
            .json(&message)
            .send()
            .await
            .expect("the server answers");
        let body = tokio::time::timeout(Duration::from_secs(10), response.text())
            .await
            .expect("the body ends")
            .expect("the body is read");
        // JSON, or an event stream whose last data is the response.
        let json = if body.trim_start().starts_with('{') {
            body.clone()
        } else {
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|data| data.contains("\"id\""))
                .unwrap_or_else(|| panic!("no response in {body}"))
                .to_owned()
        };
        let mut answer: Value = serde_json::from_str(&json).unwrap();
        match answer.get_mut("error") {
            Some(error) => Err(error.take()),
            None => Ok(answer["result"].take()),
        }
    }

    async fn get(&self, url: &str, task: &str) -> Result<Value, Value> {
        self.request(url, "tasks/get", task, json!({ "taskId": task }))
            .await
    }

    /// Polls task `task` until its status is no longer `working`.
    async fn settled(&self, url: &str, task: &str) -> Value {
        for _ in 0..200 {
            let now = self.get(url, task).await.expect("the task is read");
            if now["status"] != "working" {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {task} still works");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_task_is_answered_on_a_restarted_server_once_and_only_by_its_user() {
    let dir = std::env::temp_dir().join(format!("hookchain-mcp-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (alice, bob) = (Client::new("alice"), Client::new("bob"));
    let server = Running::start(&dir).await;

    let created = alice
        .request(
            &server.url,
            "tools/call",
            "delete",
            json!({ "name": "delete", "arguments": { "file": "notes.txt" } }),
        )
        .await
        .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().unwrap().to_owned();
    let waiting = alice.settled(&server.url, &task).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(
        waiting["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert!(done().is_empty(), "{:?}", done());

    // Bob knows the id, and gets nothing: as for a task that does not exist.
    let answer = json!({ "confirm": { "action": "accept", "content": { "confirm": true } } });
    let nothing = bob.get(&server.url, &task).await.unwrap_err();
    assert_eq!(nothing["code"], -32602, "{nothing}");
    let update = json!({ "taskId": task, "inputResponses": answer });
    let refused = bob
        .request(&server.url, "tasks/update", &task, update.clone())
        .await;
    assert_eq!(refused.unwrap_err()["code"], -32602);
    let refused = bob
        .request(
            &server.url,
            "tasks/cancel",
            &task,
            json!({ "taskId": task }),
        )
        .await;
    assert_eq!(refused.unwrap_err()["code"], -32602);

    // A restart: a new agent and server on the same store. The task waits there still.
    server.stop().await;
    let server = Running::start(&dir).await;
    let waiting = alice.get(&server.url, &task).await.unwrap();
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let ack = alice
        .request(&server.url, "tasks/update", &task, update.clone())
        .await
        .unwrap();
    assert_eq!(ack, json!({ "resultType": "complete" }));
    let ended = alice.settled(&server.url, &task).await;
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(
        ended["result"]["content"][0]["text"], "deleted notes.txt",
        "{ended}"
    );

    // The answer again (a retry): acknowledged, and nothing runs again.
    let ack = alice
        .request(&server.url, "tasks/update", &task, update)
        .await
        .unwrap();
    assert_eq!(ack, json!({ "resultType": "complete" }));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        alice.get(&server.url, &task).await.unwrap()["status"],
        "completed"
    );
    assert_eq!(done(), ["deleted notes.txt"]);
    server.stop().await;

    // A cancelled task's call is stopped, and the task says so.
    let server = Running::start(&dir).await;
    let created = alice
        .request(
            &server.url,
            "tools/call",
            "wait",
            json!({ "name": "wait", "arguments": {} }),
        )
        .await
        .unwrap();
    let task = created["taskId"].as_str().unwrap().to_owned();
    while !done().contains(&"started".to_owned()) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ack = alice
        .request(
            &server.url,
            "tasks/cancel",
            &task,
            json!({ "taskId": task }),
        )
        .await;
    assert_eq!(ack.unwrap(), json!({ "resultType": "complete" }));
    assert_eq!(
        alice.get(&server.url, &task).await.unwrap()["status"],
        "cancelled"
    );
    for _ in 0..100 {
        if DROPPED.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        1,
        "the cancelled call was not stopped"
    );
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
