//! An MCP server of the test's own over streamable HTTP, on loopback, whose answers the test
//! writes: for what the reference servers cannot be made to do (odd names, endless pages, a
//! changed tool list, a call that never answers) and to see what the client sends (the original
//! name, `notifications/cancelled`). JSON answers, or SSE ones holding notifications; no
//! session id (rmcp's client allows a stateless server).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The answer to one JSON-RPC request.
pub enum Reply {
    /// The request's `result`.
    Result(Value),
    /// The request's `result`, after a while (a server slow to answer).
    ResultAfter(std::time::Duration, Value),
    /// Notifications, then the request's `result`, as an SSE stream.
    NotifyThenResult(Vec<Value>, Value),
    /// No answer: the connection stays open until the server is dropped.
    Hang,
    /// The connection is closed without an answer (a crash, as the client sees it).
    Close,
}

type Handler = dyn Fn(&str, &Value) -> Reply + Send + Sync;

/// The server: its URL, and every JSON-RPC message it received.
pub struct FakeServer {
    pub url: String,
    received: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeServer {
    /// Answers `initialize`, `ping` and notifications itself, and every other request with
    /// `handler(method, params)`.
    pub async fn start(
        handler: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static,
    ) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let kept = received.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, handler.clone(), kept.clone()));
            }
        });
        FakeServer {
            url,
            received,
            task,
        }
    }

    /// The messages received so far.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }

    /// The received messages of `method`.
    pub fn received_of(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|message| message["method"] == method)
            .collect()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A tool as `tools/list` shows it.
pub fn tool(name: &str, input_schema: Value) -> Value {
    json!({"name": name, "description": format!("The tool {name}."), "inputSchema": input_schema})
}

/// A `tools/call` result with one text part.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

async fn serve(mut stream: TcpStream, handler: Arc<Handler>, received: Arc<Mutex<Vec<Value>>>) {
    // One request per connection (answers say `connection: close`).
    let Some((method, body)) = read_request(&mut stream).await else {
        return;
    };
    if method != "POST" {
        // No standalone SSE stream (GET), nothing to delete (DELETE).
        let _ = stream
            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return;
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return;
    };
    received.lock().unwrap().push(message.clone());
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let Some(id) = message.get("id").cloned() else {
        // A notification (or a response): accepted.
        let _ = stream
            .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return;
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let reply = match method.as_str() {
        "initialize" => Reply::Result(json!({
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "fake", "version": "1.0.0"}
        })),
        "ping" => Reply::Result(json!({})),
        _ => handler(&method, &params),
    };
    let response = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match reply {
        Reply::Result(result) => write_json(&mut stream, &response(result)).await,
        Reply::ResultAfter(delay, result) => {
            tokio::time::sleep(delay).await;
            write_json(&mut stream, &response(result)).await;
        }
        Reply::NotifyThenResult(notifications, result) => {
            let mut body = String::new();
            for notification in notifications {
                body.push_str(&format!("event: message\ndata: {notification}\n\n"));
            }
            body.push_str(&format!("event: message\ndata: {}\n\n", response(result)));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
        }
        Reply::Hang => std::future::pending::<()>().await,
        Reply::Close => {}
    }
}

/// Answers with `message` as a JSON body.
async fn write_json(stream: &mut TcpStream, message: &Value) {
    let body = message.to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
}

/// The method and body of one HTTP/1.1 request (at most 1 MiB of headers; the body as long as
/// its `content-length`).
pub(super) async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        if buffer.len() > 1 << 20 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let method = head.split(' ').next().unwrap_or_default().to_owned();
    let length: usize = head
        .to_ascii_lowercase()
        .lines()
        .find_map(|line| {
            line.strip_prefix("content-length:")
                .map(|value| value.trim().to_owned())
        })
        .and_then(|value| value.parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Some((method, buffer[header_end..header_end + length].to_vec()))
}
