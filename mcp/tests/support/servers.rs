//! The MCP servers of the tests, none written here: the reference
//! `@modelcontextprotocol/server-everything` (npm; `node`), over stdio and over streamable
//! HTTP, and the Python reference servers `mcp-server-time` and `mcp-server-git` (PyPI).
//! Stdio servers are started by the toolset under test; the HTTP server by [`EverythingHttp`],
//! killed when it is dropped, or by its watchdog when the test process dies.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use hookchain_mcp::McpServer;

/// How long a server has to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// server-everything's entry point: `$MCP_SERVER_EVERYTHING`, or the package in npm's global
/// root (`npm install -g @modelcontextprotocol/server-everything`).
pub fn everything_js() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_SERVER_EVERYTHING") {
        return path.into();
    }
    let root = Command::new("npm")
        .args(["root", "-g"])
        .output()
        .expect("npm runs (server-everything is an npm package)");
    let root = String::from_utf8_lossy(&root.stdout).trim().to_owned();
    let js = Path::new(&root).join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.exists(),
        "{} is missing: npm install -g @modelcontextprotocol/server-everything \
         (or set MCP_SERVER_EVERYTHING to its dist/index.js)",
        js.display()
    );
    js
}

/// server-everything over stdio, as the server `name`.
pub fn everything_stdio(name: &str) -> McpServer {
    McpServer::stdio(name, "node").args([everything_js().into_os_string(), "stdio".into()])
}

/// Checks that python3 has `module`, or panics with what to install.
pub fn require_python_module(module: &str, package: &str) {
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(found, "python3 has no {module}: pip install {package}");
}

/// `mcp-server-time` over stdio.
pub fn time_server() -> McpServer {
    require_python_module("mcp_server_time", "mcp-server-time");
    McpServer::stdio("time", "python3").args(["-m", "mcp_server_time", "--local-timezone", "UTC"])
}

/// `mcp-server-git` over stdio, on `repo`.
pub fn git_server(repo: &Path) -> McpServer {
    require_python_module("mcp_server_git", "mcp-server-git");
    McpServer::stdio("git", "python3")
        .args(["-m", "mcp_server_git", "--repository"])
        .arg(repo)
}

/// A git repository in a temporary directory of its own (one untracked file), removed on drop.
pub struct GitRepo {
    pub path: PathBuf,
}

impl GitRepo {
    pub fn new() -> GitRepo {
        let path = std::env::temp_dir().join(format!(
            "hookchain-mcp-git-{}-{}-{}",
            std::process::id(),
            rand_suffix(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos())
        ));
        std::fs::create_dir_all(&path).expect("a temporary directory");
        let status = Command::new("git")
            .args(["init", "--quiet", "--initial-branch=main"])
            .current_dir(&path)
            .status()
            .expect("git runs");
        assert!(status.success(), "git init failed");
        std::fs::write(path.join("hello.txt"), "hello\n").expect("a file");
        GitRepo { path }
    }
}

fn rand_suffix() -> u32 {
    // Distinct per call within a process (tests run in parallel).
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Drop for GitRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// server-everything over streamable HTTP on a loopback port that was free, started by a
/// shell that kills it when its stdin closes: when this is dropped, or when the test process
/// dies (the watchdog). `timeout` bounds its life in any case.
pub struct EverythingHttp {
    shell: Child,
    stdin: Option<ChildStdin>,
    port: u16,
}

impl EverythingHttp {
    pub fn start() -> EverythingHttp {
        let port = free_port();
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(
                r#"PORT="$1" timeout 600 node "$0" streamableHttp >/dev/null 2>&1 & server=$!
                   read _ignored; kill "$server" 2>/dev/null; wait "$server""#,
            )
            .arg(everything_js())
            .arg(port.to_string())
            .stdin(Stdio::piped())
            // The shell's own notice of the job it killed ("Terminated") is noise.
            .stderr(Stdio::null())
            .spawn()
            .expect("sh runs");
        let stdin = shell.stdin.take();
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = shell.try_wait() {
                panic!("server-everything (streamableHttp) exited: {status}");
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "server-everything did not listen on port {port} within {START_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "server-everything on port {port}, ready in {:?}",
            started.elapsed()
        );
        EverythingHttp { shell, stdin, port }
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"\n");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.shell.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.shell.kill();
        let _ = self.shell.wait();
    }
}

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("an address").port()
}

/// Whether the process `pid` exists (a zombie, not yet reaped, does).
pub fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits up to 10 s for the process `pid` to be gone (exited and reaped).
pub async fn wait_until_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !process_exists(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Kills the process `pid` with SIGKILL (a crash, as the server sees it: no goodbye).
pub fn kill(pid: u32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -KILL {pid} failed");
}
