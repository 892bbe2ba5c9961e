//! A `llama-server` process of a test's own: started on a free loopback port, waited for
//! until `GET /health` answers 200, killed when dropped.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The binary and the model the environment names, or `None` (the test is skipped).
fn configured() -> Option<(PathBuf, PathBuf)> {
    let binary = std::env::var_os("HOOKCHAIN_LLAMA_SERVER")?;
    let model = std::env::var_os("HOOKCHAIN_LLAMA_MODEL")?;
    Some((binary.into(), model.into()))
}

/// A running `llama-server`.
#[derive(Debug)]
pub(crate) struct LlamaServer {
    child: Child,
    port: u16,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        // The process is ours alone: kill it, and reap it so that no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// Starts the server, or `None` with a notice when the environment does not name one.
    pub(crate) async fn start(test: &str) -> Option<LlamaServer> {
        Self::start_with(test, &[]).await
    }

    /// Starts the server with more arguments (see [`start`](Self::start)).
    pub(crate) async fn start_with(test: &str, more: &[&str]) -> Option<LlamaServer> {
        let Some((binary, model)) = configured() else {
            println!(
                "skipped {test}: set HOOKCHAIN_LLAMA_SERVER and HOOKCHAIN_LLAMA_MODEL \
                 (see providers/tests/llama_server/build.sh)"
            );
            return None;
        };
        let port = free_port();
        let child = Command::new(&binary)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .arg("--model")
            .arg(&model)
            // The Qwen template's prompt with a tool is ~1000 byte-level tokens; the tiny
            // model takes 4096 cheaply. One slot: each test has its own server.
            .args(["--ctx-size", "4096", "--parallel", "1", "--threads", "1"])
            .args(["--jinja", "--no-webui", "--no-warmup", "--seed", "7"])
            .args(more)
            .stdin(Stdio::null())
            // Quiet unless asked for: its log is long, and shown only to debug it.
            .stdout(log_output())
            .stderr(log_output())
            .spawn()
            .unwrap_or_else(|error| panic!("{}: {error}", binary.display()));
        let mut server = LlamaServer { child, port };
        server.wait_healthy(Duration::from_secs(60)).await;
        Some(server)
    }

    /// `http://127.0.0.1:<port>` + `path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn wait_healthy(&mut self, timeout: Duration) {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "llama-server exited before it was ready: {status} (set HOOKCHAIN_LLAMA_LOG=1 to see its log)"
                );
            }
            if health(self.port).await == Some(200) {
                return;
            }
            assert!(
                start.elapsed() < timeout,
                "llama-server not healthy within {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn log_output() -> Stdio {
    if std::env::var_os("HOOKCHAIN_LLAMA_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// A port free now (the OS picks it; it is released for the server to bind).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.local_addr().expect("local address").port()
}

/// The status of `GET /health`, or `None` if nothing answers yet. By hand on a socket: the
/// server answers 503 while it loads the model, then 200.
async fn health(port: u16) -> Option<u16> {
    let mut socket = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    let request =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    socket.write_all(request.as_bytes()).await.ok()?;
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.ok()?;
    let status_line = answer.split(|&byte| byte == b'\n').next()?;
    let status = String::from_utf8_lossy(status_line);
    status.split(' ').nth(1)?.parse().ok()
}
