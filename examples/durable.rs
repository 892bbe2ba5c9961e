//! A durable run: killed in the middle, finished by a second process.
//!
//! ```sh
//! cargo run --example durable                      # checkpoints in files (a temp directory)
//! cargo run --example durable --features sqlite    # … or in a SQLite database
//! ```
//!
//! The example starts itself again as a worker process (`--worker`). The worker runs an agent
//! with durability `EveryStep` in a thread: the (scripted) model asks to book a flight and a
//! hotel at once. The flight is booked; the hotel booking hangs. This process sees the step
//! checkpoint holding the booked flight, kills the worker (SIGKILL), and, as a second worker,
//! resumes the run as soon as the dead worker's lease expired (two seconds here; nobody
//! releases anything): the flight is not booked again, the hotel booking runs again with the
//! same idempotency key (a real booking service would answer it from its records), and the run
//! finishes with the whole history.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookchain::agent::AgentBuildError;
use hookchain::interrupt::{CheckpointError, Checkpointer, Position, Record};
use hookchain::prelude::*;
use hookchain::{
    BoxError, Content, Durability, ResumeFrom, Role, Thread, ThreadId, Tool, ToolError, ToolSpec,
};
use serde_json::json;

/// The conversation: the key of its run in the store.
const THREAD: &str = "trip-42";

/// How long a worker's lease on the run lasts unless renewed: a dead worker's run is taken
/// over this long after its last renewal.
const LEASE: Duration = Duration::from_secs(2);

/// A booking tool: appends `<what> <idempotency key>` to the bookings file; the hotel's hangs
/// in the first worker (a slow service, then a crash).
struct Book {
    what: &'static str,
    bookings: PathBuf,
    hang: bool,
}

impl Tool for Book {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            format!("book_{}", self.what),
            format!("Books the {}.", self.what),
            json!({ "type": "object" }),
        )
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        // A real service would be given the key and answer a repeated call from its records.
        let key = cx.idempotency_key();
        println!(
            "  [{}] booking the {} (idempotency key {key})",
            std::process::id(),
            self.what
        );
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.bookings)
            .map_err(|error| ToolError::failed(self.spec().name, error))?;
        writeln!(file, "{} {key}", self.what)
            .map_err(|error| ToolError::failed(self.spec().name, error))?;
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(format!("{} booked", self.what).into())
    }
}

/// The agent both workers build.
fn agent(
    store: impl Checkpointer + 'static,
    dir: &Path,
    worker: &str,
    hang: bool,
) -> Result<Agent<ScriptedModel>, AgentBuildError> {
    let model = ScriptedModel::from_rule(|request| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("Your flight and hotel are booked.")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_flight", "book_flight", json!({})),
                ToolCall::new("call_hotel", "book_hotel", json!({})),
            ])
        })
    });
    let bookings = dir.join("bookings.txt");
    Agent::builder(model)
        .tool(Book {
            what: "flight",
            bookings: bookings.clone(),
            hang: false,
        })
        .tool(Book {
            what: "hotel",
            bookings,
            hang,
        })
        .checkpointer(store, Durability::EveryStep)
        .worker(worker)
        .lease(LEASE)
        .build()
}

/// Where the runs are kept: a SQLite database with the `sqlite` feature, else files.
#[cfg(feature = "sqlite")]
type Store = hookchain::interrupt::SqliteCheckpointer;
#[cfg(not(feature = "sqlite"))]
type Store = hookchain::interrupt::FileCheckpointer;

/// The store, in `dir`.
async fn store(dir: &Path) -> Result<Arc<Store>, BoxError> {
    #[cfg(feature = "sqlite")]
    let store = Store::open(dir.join("runs.db"))?;
    #[cfg(not(feature = "sqlite"))]
    let store = Store::new(dir.join("runs"));
    Ok(Arc::new(store))
}

/// The first worker: runs until the parent kills it.
async fn worker(dir: &Path) -> Result<(), BoxError> {
    let store = store(dir).await?;
    let mut thread: Thread<()> = Thread::with_id(ThreadId::new(THREAD));
    // The application keeps its threads; this one as it was before the run.
    std::fs::write(dir.join("thread.json"), serde_json::to_string(&thread)?)?;
    let agent = agent(store, dir, "worker-1", true)?;
    agent.run_in(&mut thread, "Book my trip to Lisbon.").await?;
    Err("the run ended, but the hotel booking was to hang".into())
}

async fn main_process(dir: &Path) -> Result<(), BoxError> {
    println!("Starting worker 1 in a process of its own…");
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--worker", &dir.display().to_string()])
        .stdin(Stdio::null())
        .spawn()?;
    let store = store(dir).await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let kept = store.get(THREAD).await?;
        let position = match &kept {
            Some(Record::Checkpoint(checkpoint)) => Some(checkpoint.position()),
            _ => None,
        };
        if let Some(Position::Tools { results, .. }) = position
            && results[0].is_some()
            && std::fs::read_to_string(dir.join("bookings.txt"))?.contains("hotel")
        {
            break;
        }
        if Instant::now() > deadline {
            child.kill()?;
            return Err("worker 1 never booked the flight".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "The store holds the step with the flight booked; the hotel is in flight. Killing worker 1."
    );
    child.kill()?; // SIGKILL
    child.wait()?;

    println!("Worker 2 takes over (say, in another process or machine):");
    for stored in store.list().await? {
        println!("  stored: {} held by {:?}", stored.key, stored.held_by);
    }
    let mut thread: Thread<()> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("thread.json"))?)?;
    let agent = agent(store.clone(), dir, "worker-2", false)?;
    // Refused while the dead worker's lease runs; resumed once it expired.
    let waited = Instant::now();
    let output = loop {
        match agent
            .resume_in(&mut thread, ResumeFrom::stored(THREAD), [])
            .await
        {
            Err(Error::Checkpoint(error)) if matches!(*error, CheckpointError::Claimed { .. }) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            done => break done?,
        }
    };
    println!(
        "  resumed `{THREAD}` {:.1} s after worker 1 died (its lease expired)",
        waited.elapsed().as_secs_f64()
    );
    println!();
    for message in thread.messages() {
        match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => {
                let names: Vec<&str> = message.tool_calls.iter().map(|c| c.name.as_str()).collect();
                println!("assistant: calls {}", names.join(", "));
            }
            role => println!("{role:?}: {}", message.content),
        }
    }
    let bookings = std::fs::read_to_string(dir.join("bookings.txt"))?;
    let flights = bookings.lines().filter(|l| l.starts_with("flight")).count();
    let hotels: Vec<&str> = bookings
        .lines()
        .filter(|l| l.starts_with("hotel"))
        .collect();
    println!();
    println!("flight bookings: {flights} (the completed call did not run again)");
    println!(
        "hotel bookings: {} with the same key: {} (the call in flight ran again)",
        hotels.len(),
        hotels.windows(2).all(|pair| pair[0] == pair[1])
    );
    if flights != 1 || hotels.len() != 2 || output.text().is_none() {
        return Err("the run was not resumed as it should".into());
    }
    let stored = store.list().await?;
    if stored.len() != 1 || !stored[0].ended || stored[0].held_by.is_some() {
        return Err("the finished run did not leave its tombstone, free".into());
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.get(1).map(String::as_str) {
        Some("--worker") => worker(Path::new(&args[2])).await,
        _ => {
            let dir =
                std::env::temp_dir().join(format!("hookchain-durable-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let outcome = match std::fs::create_dir_all(&dir) {
                Ok(()) => main_process(&dir).await,
                Err(error) => Err(error.into()),
            };
            let _ = std::fs::remove_dir_all(&dir);
            outcome
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(&*error));
            ExitCode::FAILURE
        }
    }
}
