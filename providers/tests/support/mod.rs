//! A loopback HTTP/1.1 server that replays scripted replies and records what it receives.
//!
//! Hand-written on tokio's TCP rather than a mock library so that a test can also break the
//! protocol on purpose: close the socket in the middle of a body, stall before answering, or
//! send a body in small pieces that cut SSE events and UTF-8 characters apart.

#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Reads a transcript of `providers/tests/transcripts/`.
pub fn transcript(path: &str) -> String {
    let full = format!("{}/tests/transcripts/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{full}: {error}"))
}

/// Runs a test body with a guard: a test that hangs fails instead.
pub async fn guard<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("the test hung (no answer within 20s)")
}

/// How a reply's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The body is complete.
    Complete,
    /// The server closes the socket in the middle of the body.
    Reset,
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Sent in pieces of this many bytes (chunked encoding), or whole with a content length.
    piece: Option<usize>,
    /// Waits this long before answering at all.
    stall: Duration,
    /// Stops after this many bytes of the body.
    cut_after: Option<usize>,
    /// Goes silent for a while after this many bytes of the body.
    pause: Option<(usize, Duration)>,
    end: End,
}

impl Reply {
    /// A JSON body.
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into().into_bytes(),
            piece: None,
            stall: Duration::ZERO,
            cut_after: None,
            pause: None,
            end: End::Complete,
        }
    }

    /// An SSE body, sent in 7-byte pieces so that events and characters are cut apart.
    pub fn sse(body: impl Into<String>) -> Self {
        Self {
            headers: vec![("content-type".into(), "text/event-stream".into())],
            piece: Some(7),
            ..Self::json(200, body)
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits before answering.
    pub fn stall(mut self, delay: Duration) -> Self {
        self.stall = delay;
        self
    }

    /// Goes silent for `delay` after the first `bytes` of the body (sent in pieces).
    pub fn pause_after(mut self, bytes: usize, delay: Duration) -> Self {
        self.pause = Some((bytes, delay));
        self.piece.get_or_insert(7);
        self
    }

    /// Sends only the first `bytes` of the body, then ends it as `end` says: cleanly (a
    /// truncated stream) or by closing the socket (a connection reset mid-body).
    pub fn cut_after(mut self, bytes: usize, end: End) -> Self {
        self.cut_after = Some(bytes);
        self.end = end;
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// `POST /v1/chat/completions` and the like.
    pub method: String,
    /// The path, with the query.
    pub path: String,
    /// The headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, parsed as JSON (`null` if it was not JSON).
    pub json: serde_json::Value,
}

impl Received {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The server; it stops when dropped.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Starts a server on `127.0.0.1:0` that answers the requests it gets with `replies`, in
    /// order; past the end it answers 500.
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let replies = Arc::new(Mutex::new(replies.into_iter().collect::<VecDeque<_>>()));
        let received = Arc::new(Mutex::new(Vec::new()));
        let recorded = received.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, replies.clone(), recorded.clone()));
            }
        });
        Server {
            addr,
            received,
            task,
        }
    }

    /// `http://127.0.0.1:<port>` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }
}

/// A base URL where nothing listens: connecting is refused.
pub async fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}/v1")
}

async fn serve(
    mut socket: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
) {
    // One connection may carry several requests (keep-alive).
    while let Some(request) = read_request(&mut socket).await {
        received.lock().expect("lock").push(request);
        let reply = replies.lock().expect("lock").pop_front();
        let reply = reply.unwrap_or_else(|| Reply::json(500, r#"{"error":"no reply left"}"#));
        if !write_reply(&mut socket, reply).await {
            return;
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 4096];
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Received {
        method,
        path,
        headers,
        json: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    })
}

/// Writes `reply`; `false` if the connection must close afterwards.
async fn write_reply(socket: &mut TcpStream, reply: Reply) -> bool {
    tokio::time::sleep(reply.stall).await;
    let mut head = format!("HTTP/1.1 {} Status\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = match reply.cut_after {
        Some(bytes) => &reply.body[..bytes.min(reply.body.len())],
        None => &reply.body[..],
    };
    let chunked = reply.piece.is_some() || reply.cut_after.is_some();
    if chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
    } else {
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    }
    if socket.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    if !chunked {
        return socket.write_all(body).await.is_ok();
    }
    let mut sent = 0;
    let mut pause = reply.pause;
    for piece in body.chunks(reply.piece.unwrap_or(body.len().max(1))) {
        if let Some((_, delay)) = pause.filter(|(after, _)| sent >= *after) {
            tokio::time::sleep(delay).await;
            pause = None;
        }
        sent += piece.len();
        let frame = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
        if socket.write_all(&frame).await.is_err() || socket.flush().await.is_err() {
            return false;
        }
        // Lets the client see the pieces one at a time.
        tokio::task::yield_now().await;
    }
    match reply.end {
        End::Complete => socket.write_all(b"0\r\n\r\n").await.is_ok(),
        End::Reset => {
            let _ = socket.shutdown().await;
            false
        }
    }
}
