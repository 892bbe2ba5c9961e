//! A loopback HTTP/1.1 server that replays scripted replies and records what it receives.
//!
//! Hand-written on tokio's TCP rather than a mock library so that a test can also break the
//! protocol on purpose: close the socket in the middle of a body, stall before answering, or
//! send a body in small pieces that cut SSE events and UTF-8 characters apart.

#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The request every provider's tests send: a user's question, a system prompt, one tool that
/// must be called.
pub fn weather_request() -> hookchain::ModelRequest {
    hookchain::ModelRequest::new(vec![hookchain::Message::user(
        "What is the weather in Paris?",
    )])
    .with_system_prompt("You are a weather bot.")
    .with_tools(vec![hookchain::ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )])
    .with_tool_choice(hookchain::model::ToolChoice::Required)
}

/// The weather in a city: the tool of every wire's recorded tool loop (`call_1`-like calls with
/// a city and a unit).
#[hookchain::tool]
pub async fn get_weather(
    /// The city.
    city: String,
    /// `celsius` or `fahrenheit`.
    unit: String,
) -> String {
    format!("18 degrees {unit} and sunny in {city}")
}

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

/// Runs a test body on tokio's paused clock with a guard of a virtual day: a test that would
/// wait forever fails instead.
pub async fn paused_guard<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(24 * 3600), test)
        .await
        .expect("the test hung (no answer within a virtual day)")
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
    /// After the body, this byte repeated this many times, then `tail`: a body too large to
    /// hold in a test.
    filler: Option<(u8, usize)>,
    tail: Vec<u8>,
    /// Sends the filler one byte at a time, this long apart.
    trickle: Option<Duration>,
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
            filler: None,
            tail: Vec::new(),
            trickle: None,
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

    /// A body of AWS's binary event stream (Bedrock's `ConverseStream`), written from a
    /// transcript in SSE form (see [`aws_event_stream`]), sent in 7-byte pieces so that
    /// messages and their preludes are cut apart.
    pub fn event_stream(transcript: &str) -> Self {
        Self::event_stream_bytes(aws_event_stream(transcript))
    }

    /// A body of AWS's event stream as it is given (a corrupt one), in 7-byte pieces.
    pub fn event_stream_bytes(body: Vec<u8>) -> Self {
        Self {
            headers: vec![(
                "content-type".into(),
                "application/vnd.amazon.eventstream".into(),
            )],
            body,
            piece: Some(7),
            ..Self::json(200, "")
        }
    }

    /// Sends `byte` `count` times after the body, then `tail` (never held in memory whole).
    pub fn filler(mut self, byte: u8, count: usize, tail: &str) -> Self {
        self.filler = Some((byte, count));
        self.tail = tail.as_bytes().to_vec();
        self
    }

    /// Sends the filler one byte at a time, `every` apart (in chunks).
    pub fn trickle(mut self, every: Duration) -> Self {
        self.trickle = Some(every);
        self.piece.get_or_insert(7);
        self
    }

    /// Sends the body in chunks of `bytes`.
    pub fn pieces(mut self, bytes: usize) -> Self {
        self.piece = Some(bytes);
        self
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
    /// The body as it came.
    pub body: Vec<u8>,
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
    sent: Arc<Mutex<Vec<Arc<AtomicUsize>>>>,
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
        let sent = Arc::new(Mutex::new(Vec::new()));
        let (recorded, counted) = (received.clone(), sent.clone());
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let record = (recorded.clone(), counted.clone());
                tokio::spawn(serve(socket, replies.clone(), record));
            }
        });
        Server {
            addr,
            received,
            sent,
            task,
        }
    }

    /// `http://127.0.0.1:<port>` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many bytes of each reply's body the server wrote so far (the socket took them), in
    /// the order of the replies.
    pub fn sent(&self) -> Vec<usize> {
        let sent = self.sent.lock().expect("lock");
        sent.iter()
            .map(|count| count.load(Ordering::SeqCst))
            .collect()
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

type Record = (Arc<Mutex<Vec<Received>>>, Arc<Mutex<Vec<Arc<AtomicUsize>>>>);

async fn serve(
    mut socket: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    (received, sent): Record,
) {
    // One connection may carry several requests (keep-alive).
    while let Some(request) = read_request(&mut socket).await {
        received.lock().expect("lock").push(request);
        let reply = replies.lock().expect("lock").pop_front();
        let reply = reply.unwrap_or_else(|| Reply::json(500, r#"{"error":"no reply left"}"#));
        let count = Arc::new(AtomicUsize::new(0));
        sent.lock().expect("lock").push(count.clone());
        if !write_reply(&mut socket, reply, &count).await {
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
        body,
    })
}

/// Writes `reply`, counting its body's bytes in `sent`; `false` if the connection must close
/// afterwards.
async fn write_reply(socket: &mut TcpStream, reply: Reply, sent: &AtomicUsize) -> bool {
    tokio::time::sleep(reply.stall).await;
    let mut head = format!("HTTP/1.1 {} Status\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = match reply.cut_after {
        Some(bytes) => &reply.body[..bytes.min(reply.body.len())],
        None => &reply.body[..],
    };
    let (filler, count) = reply.filler.unwrap_or((0, 0));
    let chunked = reply.piece.is_some() || reply.cut_after.is_some();
    if chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
    } else {
        let length = body.len() + count + reply.tail.len();
        head.push_str(&format!("content-length: {length}\r\n\r\n"));
    }
    if socket.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let mut pause = reply.pause;
    let piece = reply.piece.unwrap_or(body.len().max(1));
    for piece in body.chunks(piece) {
        if let Some((_, delay)) = pause.filter(|(after, _)| sent.load(Ordering::SeqCst) >= *after) {
            tokio::time::sleep(delay).await;
            pause = None;
        }
        if !write_piece(socket, piece, chunked, sent).await {
            return false;
        }
    }
    if reply.filler.is_some() {
        let block = vec![filler; 64 * 1024];
        let mut left = count;
        while left > 0 {
            let piece = if reply.trickle.is_some() {
                1
            } else {
                left.min(block.len())
            };
            if let Some(every) = reply.trickle {
                tokio::time::sleep(every).await;
            }
            if !write_piece(socket, &block[..piece], chunked, sent).await {
                return false;
            }
            left -= piece;
        }
        if !write_piece(socket, &reply.tail, chunked, sent).await {
            return false;
        }
    }
    if !chunked {
        return true;
    }
    match reply.end {
        End::Complete => socket.write_all(b"0\r\n\r\n").await.is_ok(),
        End::Reset => {
            let _ = socket.shutdown().await;
            false
        }
    }
}

/// Writes one piece of a body (a chunk, if `chunked`), counting it in `sent`.
async fn write_piece(
    socket: &mut TcpStream,
    piece: &[u8],
    chunked: bool,
    sent: &AtomicUsize,
) -> bool {
    if piece.is_empty() {
        return true;
    }
    let written = if chunked {
        let frame = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
        socket.write_all(&frame).await.is_ok() && socket.flush().await.is_ok()
    } else {
        socket.write_all(piece).await.is_ok()
    };
    if !written {
        return false;
    }
    sent.fetch_add(piece.len(), Ordering::SeqCst);
    if chunked {
        // Lets the client see the pieces one at a time.
        tokio::task::yield_now().await;
    }
    true
}

/// A transcript in SSE form (`event: <type>` and `data: <payload>` per event) written as AWS's
/// event stream by AWS's own encoder: an event `exception:<type>` as an exception message, any
/// other as an event message with a JSON payload.
pub fn aws_event_stream(transcript: &str) -> Vec<u8> {
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
    let text = |value: &str| HeaderValue::String(value.to_owned().into());
    let mut body = Vec::new();
    for block in transcript
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
    {
        let (mut name, mut data) = ("", "");
        for line in block.lines() {
            if let Some(value) = line.strip_prefix("event: ") {
                name = value;
            } else if let Some(value) = line.strip_prefix("data: ") {
                data = value;
            }
        }
        let headers = match name.strip_prefix("exception:") {
            Some(exception) => vec![
                Header::new(":message-type", text("exception")),
                Header::new(":exception-type", text(exception)),
                Header::new(":content-type", text("application/json")),
            ],
            None => vec![
                Header::new(":event-type", text(name)),
                Header::new(":content-type", text("application/json")),
                Header::new(":message-type", text("event")),
            ],
        };
        let message = Message::new_from_parts(headers, data.as_bytes().to_vec());
        aws_smithy_eventstream::frame::write_message_to(&message, &mut body)
            .expect("a message AWS's encoder writes");
    }
    body
}

/// Records the fields of every span and event traced on this thread while it is set (see
/// [`Traces::record`]), as `name=value` text.
#[derive(Debug, Clone, Default)]
pub struct Traces(Arc<Mutex<String>>);

impl Traces {
    /// Starts recording on this thread, until the guard is dropped.
    pub fn record() -> (Traces, tracing::subscriber::DefaultGuard) {
        let traces = Traces::default();
        let guard = tracing::subscriber::set_default(traces.clone());
        (traces, guard)
    }

    /// What was recorded so far.
    pub fn text(&self) -> String {
        self.0.lock().expect("lock").clone()
    }
}

struct Fields<'a>(&'a Mutex<String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let line = format!("{}={value:?}\n", field.name());
        self.0.lock().expect("lock").push_str(&line);
    }
}

impl tracing::Subscriber for Traces {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        span.record(&mut Fields(&self.0));
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&self.0));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        event.record(&mut Fields(&self.0));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
