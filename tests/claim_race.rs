//! Two processes race to resume one stored checkpoint: exactly one runs it. For SQLite (one
//! file shared by the processes) and for Postgres (a server of the test's own, `pg`).
//!
//! The parent runs an agent whose `record` tool needs an approval (`HumanInTheLoop`), kept in
//! the store (`Durability::Pauses`): the run pauses before the tool runs, its checkpoint stored.
//! Then it spawns its own test binary twice at once (`current_exe() --exact <test> --nocapture`,
//! `HOOKCHAIN_RACE_WORKER` naming each child). Each child opens the store and says it is ready;
//! once both are, the parent tells both to go (a line on their standard input, so that their
//! claims meet). Each resumes what the store holds with the same approval
//! (`ResumeFrom::stored`): one runs it; the other is refused — the key is held (its claim met
//! the winner's lease) or the run ended (its tombstone) — and says it lost. The `record` tool
//! appends a line to a side-effect file each time it runs: after the race the file must hold
//! exactly one line, the winner's, and the loser must have exited cleanly.

mod pg;
mod support;

use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    CheckpointError, Checkpointer, DynCheckpointer, PostgresCheckpointer, Record, ResumeError,
    SqliteCheckpointer, Stored,
};
use hookchain::prelude::*;
use hookchain::{Durability, EndReason, FnTool, ResumeFrom, Role};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{Effects, approve_all};

/// The child's worker name; unset in the parent.
const WORKER: &str = "HOOKCHAIN_RACE_WORKER";
/// The store: `sqlite:<path>` or `postgres:<connection string>`.
const STORE: &str = "HOOKCHAIN_RACE_STORE";
/// The directory of the side-effect file.
const DIR: &str = "HOOKCHAIN_RACE_DIR";
/// The key of the checkpoint in the store (the paused run's id).
const KEY: &str = "HOOKCHAIN_RACE_KEY";

/// Arguments of the `record` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct RecordArgs {
    /// What to record.
    line: String,
}

/// The agent the parent and the children build, the same way: the model asks to record a
/// line, the `record` tool waits for an approval, and appends the line (with the name of the
/// worker running it) to `<dir>/side-effects.txt` when it runs.
fn agent(
    dir: &Path,
    worker: &str,
    store: Arc<dyn DynCheckpointer>,
) -> Agent<ScriptedModel, HumanInTheLoop> {
    let effects = Effects::file(dir);
    let runner = worker.to_owned();
    let record = FnTool::new(
        "record",
        "Appends a line to the record.",
        move |args: RecordArgs| {
            effects.record(format!("{} by {runner}", args.line));
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
        .checkpointer(store, Durability::Pauses)
        .worker(worker)
        .build()
        .unwrap()
}

/// A store of either kind, named by `HOOKCHAIN_RACE_STORE`.
async fn open(spec: &str) -> Arc<dyn DynCheckpointer> {
    match spec.split_once(':') {
        Some(("sqlite", path)) => Arc::new(SqliteCheckpointer::open(path).unwrap()),
        Some(("postgres", config)) => {
            Arc::new(PostgresCheckpointer::connect(config).await.unwrap())
        }
        _ => panic!("unknown store {spec:?}"),
    }
}

/// A child: open the store, wait for the go, resume what the store holds with the approval,
/// and say whether it ran it or was refused.
async fn child(worker: &str) {
    let dir = PathBuf::from(std::env::var_os(DIR).expect("the parent passes the directory"));
    let spec = std::env::var(STORE).expect("the parent passes the store");
    let key = std::env::var(KEY).expect("the parent passes the key");
    let store = open(&spec).await;
    let agent = agent(&dir, worker, store.clone());
    let Some(Record::Checkpoint(checkpoint)) = store.get(&key).await.unwrap() else {
        panic!("the parent stored the pause");
    };
    let answers = approve_all(&checkpoint);
    println!("{worker}: ready");
    wait_for("go");

    match agent.resume(ResumeFrom::stored(&key), answers).await {
        Ok(output) => {
            assert_eq!(output.end, EndReason::Finished);
            assert_eq!(output.text().as_deref(), Some("done"));
            println!("{worker}: ran");
        }
        Err(error) => {
            let refused = matches!(&error, Error::Checkpoint(error) if matches!(**error, CheckpointError::Claimed { .. }))
                || matches!(&error, Error::Resume(error) if matches!(**error, ResumeError::Ended { .. }));
            assert!(refused, "{worker} failed otherwise: {error}");
            println!("{worker}: lost ({error})");
        }
    }
}

/// Reads the parent's next line, which must be `word`.
fn wait_for(word: &str) {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .expect("read the parent");
    assert_eq!(line.trim(), word, "the parent went away");
}

/// The parent: pause the run (stored), race two children, check that one ran it, once.
async fn race(test: &str, dir: &Path, spec: &str) {
    let store = open(spec).await;
    let paused = agent(dir, "parent", store.clone())
        .run("charge it")
        .await
        .unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let key = paused.checkpoint.unwrap().run_id().to_owned();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.as_str(), None, false)]
    );
    assert!(!dir.join("side-effects.txt").exists(), "the tool waits");

    let mut children: Vec<Racer> = ["child-a", "child-b"]
        .into_iter()
        .map(|worker| Racer::spawn(test, worker, dir, spec, &key))
        .collect();
    for child in &mut children {
        child.wait_for(&["ready"]);
    }
    for child in &mut children {
        child.send("go");
    }
    let outcomes: Vec<(String, bool)> = children.into_iter().map(Racer::finish).collect();
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
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key.as_str(), None, true)],
        "the run's tombstone is left"
    );
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
    fn spawn(test: &str, worker: &'static str, dir: &Path, spec: &str, key: &str) -> Racer {
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = Command::new(exe)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(WORKER, worker)
            .env(STORE, spec)
            .env(DIR, dir)
            .env(KEY, key)
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
