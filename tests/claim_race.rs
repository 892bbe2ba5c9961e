//! Two processes race to resume one stored checkpoint: exactly one runs it. For SQLite (one
//! file shared by the processes) and for Postgres (a server of the test's own, `pg`).
//!
//! The parent runs an agent whose `record` tool needs an approval (`HumanInTheLoop`): the run
//! pauses before the tool runs, and the parent stores the checkpoint. Then it spawns its own
//! test binary twice at once (`current_exe() --exact <test> --nocapture`, `HOOKCHAIN_RACE_WORKER`
//! naming each child). Each child opens the store and says it is ready; once both are, the
//! parent tells both to go (a line on their standard input, so that their claims meet). Each
//! claims the checkpoint under its own worker name and says whether it got it; a child that got
//! it waits until the parent has heard both claims (so that a claim that is not exclusive
//! shows, however fast the first child would have finished), resumes it with the approval, and
//! says it ran it. The `record` tool appends a line to a side-effect file each time it runs:
//! after the race the file must hold exactly one line, the winner's, and the loser must have
//! exited cleanly.

mod pg;
mod support;

use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, PostgresCheckpointer, SqliteCheckpointer, Stored};
use hookchain::prelude::*;
use hookchain::{Checkpoint, EndReason, FnTool, Role};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::Effects;

/// The child's worker name; unset in the parent.
const WORKER: &str = "HOOKCHAIN_RACE_WORKER";
/// The store: `sqlite:<path>` or `postgres:<connection string>`.
const STORE: &str = "HOOKCHAIN_RACE_STORE";
/// The directory of the side-effect file.
const DIR: &str = "HOOKCHAIN_RACE_DIR";
/// The key of the checkpoint in the store.
const KEY: &str = "paused-run";

/// Arguments of the `record` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct RecordArgs {
    /// What to record.
    line: String,
}

/// The agent the parent and the children build, the same way: the model asks to record a
/// line, the `record` tool waits for an approval, and appends the line (with the name of the
/// worker running it) to `<dir>/side-effects.txt` when it runs.
fn agent(dir: &Path, worker: &str) -> Agent<ScriptedModel, HumanInTheLoop> {
    let effects = Effects::file(dir);
    let worker = worker.to_owned();
    let record = FnTool::new(
        "record",
        "Appends a line to the record.",
        move |args: RecordArgs| {
            effects.record(format!("{} by {worker}", args.line));
            async { Ok::<_, Infallible>("recorded") }
        },
    );
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last().expect("a request has messages");
        Ok(if last.role == Role::Tool {
            ModelResponse::text("done")
        } else {
            ModelResponse::tool_calls([ToolCall::new(
                "call_record",
                "record",
                json!({ "line": "charged" }),
            )])
        })
    });
    Agent::builder(model)
        .tool(record)
        .chain(HumanInTheLoop::new().interrupt_on("record", ToolPolicy::always()))
        .build()
}

/// A store of either kind, named by `HOOKCHAIN_RACE_STORE`.
enum Store {
    Sqlite(SqliteCheckpointer),
    Postgres(PostgresCheckpointer),
}

impl Store {
    async fn open(spec: &str) -> Store {
        match spec.split_once(':') {
            Some(("sqlite", path)) => Store::Sqlite(SqliteCheckpointer::open(path).unwrap()),
            Some(("postgres", config)) => {
                Store::Postgres(PostgresCheckpointer::connect(config).await.unwrap())
            }
            _ => panic!("unknown store {spec:?}"),
        }
    }

    async fn put(&self, checkpoint: &Checkpoint, worker: &str) {
        match self {
            Store::Sqlite(store) => store.put(KEY, checkpoint, worker).await,
            Store::Postgres(store) => store.put(KEY, checkpoint, worker).await,
        }
        .unwrap();
    }

    async fn claim(&self, worker: &str) -> Option<Checkpoint> {
        match self {
            Store::Sqlite(store) => store.claim(KEY, worker).await,
            Store::Postgres(store) => store.claim(KEY, worker).await,
        }
        .unwrap()
    }

    async fn delete(&self, worker: &str) {
        match self {
            Store::Sqlite(store) => store.delete(KEY, worker).await,
            Store::Postgres(store) => store.delete(KEY, worker).await,
        }
        .unwrap();
    }

    async fn list(&self) -> Vec<Stored> {
        match self {
            Store::Sqlite(store) => store.list().await,
            Store::Postgres(store) => store.list().await,
        }
        .unwrap()
    }
}

/// A child: open the store, wait for the go, claim, say whether it got the checkpoint; if it
/// did, wait for the parent to have heard both claims, resume it, and say it ran it.
async fn child(worker: &str) {
    let dir = PathBuf::from(std::env::var_os(DIR).expect("the parent passes the directory"));
    let spec = std::env::var(STORE).expect("the parent passes the store");
    let store = Store::open(&spec).await;
    let agent = agent(&dir, worker);
    println!("{worker}: ready");
    wait_for("go");

    let Some(checkpoint) = store.claim(worker).await else {
        println!("{worker}: lost");
        return;
    };
    println!("{worker}: claimed");
    wait_for("resume");
    let answers: Vec<_> = checkpoint
        .interrupts()
        .iter()
        .map(|interrupt| {
            let request = ApprovalRequest::from_interrupt(interrupt).expect("an approval");
            ApprovalResponse::approve_all(&request).answer(interrupt)
        })
        .collect();
    let output = agent.resume(checkpoint, answers).await.expect("the resume");
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("done"));
    store.delete(worker).await;
    println!("{worker}: ran");
}

/// Reads the parent's next line, which must be `word`.
fn wait_for(word: &str) {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .expect("read the parent");
    assert_eq!(line.trim(), word, "the parent went away");
}

/// The parent: pause the run, store it, race two children, check that one ran it, once.
async fn race(test: &str, dir: &Path, spec: &str) {
    let store = Store::open(spec).await;
    let paused = agent(dir, "parent").run("charge it").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    store.put(&paused.checkpoint.unwrap(), "parent").await;
    assert_eq!(store.list().await, [Stored::new(KEY, None)]);
    assert!(!dir.join("side-effects.txt").exists(), "the tool waits");

    let mut children: Vec<Racer> = ["child-a", "child-b"]
        .into_iter()
        .map(|worker| Racer::spawn(test, worker, dir, spec))
        .collect();
    for child in &mut children {
        child.wait_for(&["ready"]);
    }
    for child in &mut children {
        child.send("go");
    }
    // Both claims are made before either child resumes: a claim that is not exclusive shows
    // as two children running the checkpoint.
    let mut claimed = Vec::new();
    for child in &mut children {
        claimed.push(child.wait_for(&["claimed", "lost"]) == "claimed");
    }
    for (child, claimed) in children.iter_mut().zip(&claimed) {
        if *claimed {
            child.send("resume");
        }
    }
    let outcomes: Vec<(String, bool)> = children.into_iter().map(Racer::finish).collect();
    assert_eq!(
        claimed.iter().filter(|claimed| **claimed).count(),
        1,
        "exactly one child gets the checkpoint: {outcomes:?}"
    );

    let winners: Vec<&str> = outcomes
        .iter()
        .filter(|(_, ran)| *ran)
        .map(|(worker, _)| worker.as_str())
        .collect();
    assert_eq!(winners.len(), 1, "exactly one child runs it: {outcomes:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("side-effects.txt")).unwrap(),
        format!("charged by {}\n", winners[0]),
        "the side effect happens once, in the child that ran it"
    );
    assert_eq!(store.list().await, [], "the winner deleted the checkpoint");
}

/// How long a child may take to say something: far more than it needs, only so that a child
/// that hangs fails the test instead of hanging it.
const PATIENCE: Duration = Duration::from_secs(120);

/// A child process racing for the checkpoint.
struct Racer {
    worker: &'static str,
    child: Child,
    /// The lines of the child's standard output, read by a thread of their own.
    lines: Receiver<String>,
    /// What the child printed so far.
    printed: String,
}

impl Racer {
    fn spawn(test: &str, worker: &'static str, dir: &Path, spec: &str) -> Racer {
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = Command::new(exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(WORKER, worker)
            .env(STORE, spec)
            .env(DIR, dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the child");
        let stdout = BufReader::new(child.stdout.take().expect("the child's stdout"));
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Racer {
            worker,
            child,
            lines,
            printed: String::new(),
        }
    }

    /// The child's next line; `None` once it closed its output.
    fn next_line(&mut self) -> Option<String> {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(line) => {
                self.printed.push_str(&line);
                self.printed.push('\n');
                Some(line)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{} said nothing for {PATIENCE:?}; it printed:\n{}",
                    self.worker, self.printed
                );
            }
        }
    }

    /// Reads the child's output until it says one of `words` (`<worker>: <word>`), and
    /// returns that word; panics if it ends first.
    fn wait_for(&mut self, words: &[&'static str]) -> &'static str {
        while let Some(line) = self.next_line() {
            // libtest may print the test's name on the same line first.
            let said = words.iter().find(|word| {
                line.trim_end()
                    .ends_with(&format!("{}: {word}", self.worker))
            });
            if let Some(word) = said {
                return word;
            }
        }
        let output = self.rest();
        panic!("{} ended before it said {words:?}:\n{output}", self.worker);
    }

    /// Sends the child a line.
    fn send(&mut self, word: &str) {
        let stdin = self.child.stdin.as_mut().expect("the child's stdin");
        writeln!(stdin, "{word}")
            .and_then(|()| stdin.flush())
            .expect("write to the child");
    }

    /// Waits for the child; returns its worker name and whether it ran the checkpoint, after
    /// checking that it exited cleanly either way.
    fn finish(mut self) -> (String, bool) {
        let output = self.rest();
        let ran = output.contains(&format!("{}: ran", self.worker));
        let lost = output.contains(&format!("{}: lost", self.worker));
        assert!(
            ran != lost && output.contains("1 passed"),
            "{} neither ran nor lost cleanly:\n{output}",
            self.worker
        );
        (self.worker.to_owned(), ran)
    }

    /// The rest of the child's output once it exits; panics if it failed. (Its standard
    /// error goes to the test's.)
    fn rest(&mut self) -> String {
        drop(self.child.stdin.take());
        while self.next_line().is_some() {}
        let status = self.child.wait().expect("wait for the child");
        assert!(
            status.success(),
            "{} failed ({status}):\n{}",
            self.worker,
            self.printed
        );
        self.printed.clone()
    }
}

#[tokio::test]
async fn two_processes_race_to_resume_a_sqlite_checkpoint_and_one_runs_it() {
    const TEST: &str = "two_processes_race_to_resume_a_sqlite_checkpoint_and_one_runs_it";
    if let Ok(worker) = std::env::var(WORKER) {
        return child(&worker).await;
    }
    let dir = support::temp_dir("claim_race", "sqlite");
    let spec = format!("sqlite:{}", dir.join("checkpoints.db").display());
    race(TEST, &dir, &spec).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn two_processes_race_to_resume_a_postgres_checkpoint_and_one_runs_it() {
    const TEST: &str = "two_processes_race_to_resume_a_postgres_checkpoint_and_one_runs_it";
    if let Ok(worker) = std::env::var(WORKER) {
        return child(&worker).await;
    }
    let server = pg::Postgres::start();
    let dir = support::temp_dir("claim_race", "postgres");
    let spec = format!("postgres:{}", server.config());
    race(TEST, &dir, &spec).await;
    std::fs::remove_dir_all(&dir).unwrap();
}
