//! The scale probe: N concurrent agent runs, all in flight at once, on a tokio multi-thread
//! runtime; CPU time and peak memory per run, for hookchain, Synaptic and Rig.
//!
//! ```text
//! target/release/scale 10000 50000        # every peer at each N, one process each: the table
//! target/release/scale run rig 10000      # one peer at one N (what the table runs)
//! ```
//!
//! Rig's peer is built with `--features rig` (`cargo build --release --features rig --bin
//! scale`). Rig turns on `serde_json/preserve_order` for the whole build, which makes
//! hookchain's `ModelRequest` larger than its users' (see `benches/Cargo.toml`): the
//! hookchain row of the table is measured from the build without the feature.
//!
//! Each run is one agent turn: a model call that asks for the `ping` tool, the tool, a model
//! call that answers `done`. The fake model of each peer waits at a gate before its first
//! answer; the gate opens once all N runs have reached it, so that all N runs (their futures,
//! histories and requests) are alive at once. The second model call answers at once.
//!
//! - **CPU per run**: utime + stime of the process (`/proc/self/stat`, every thread, clock ticks
//!   of 10 ms) from just before the N runs are spawned to just after the last is joined,
//!   divided by N; `ROUNDS` rounds (default 3) of N runs are summed to shrink the tick's
//!   rounding. Spawning, the gate and joining are in it, the same for every peer.
//! - **Memory per run**: `VmHWM` (`/proc/self/status`, peak resident set) after the rounds,
//!   minus `VmHWM` before the first, divided by N. Each peer and N runs in its own process
//!   (the high-water mark only rises).
//!
//! The peers: `floor`, the probe alone (a task that waits at the gate once: spawning, the gate,
//! joining, the runtime), the floor under the others; `hand`, the turn written by hand with no
//! framework (`HandTurn`: the request built from the history, the model called, its tool calls
//! run through a `ToolRegistry`), the ceiling of any library; hookchain's `Agent::run` (empty chain);
//! Synaptic's ReAct agent (`synaptic_graph::create_react_agent`: a `CompiledGraph` of its model
//! node, which calls the model through its `MiddlewareChain` (empty), and its tool node); Rig's
//! `Agent::prompt(..)` (no hook) with the `ping` tool, every run on the one agent (its bus and
//! driver shared, as a server shares an agent). Every fake model answers from a rule and
//! records nothing.

#![forbid(unsafe_code)]

use std::future::Future;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use hookchain::prelude::*;
use hookchain::{Agent, Role};
use hookchain_benches::Wait;
use hookchain_benches::agent::HandTurn;
#[cfg(feature = "rig")]
use hookchain_benches::rig;
use serde_json::{Value, json};
use tokio::sync::watch;

#[cfg(feature = "rig")]
const PEERS: &[&str] = &["floor", "hand", "hookchain", "synaptic", "rig"];
#[cfg(not(feature = "rig"))]
const PEERS: &[&str] = &["floor", "hand", "hookchain", "synaptic"];

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;

/// CPU time of the process so far, every thread, in microseconds.
fn cpu_us() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (in parentheses, which may hold spaces): state is field 3,
    // utime field 14, stime field 15.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 1..]
        .split_whitespace()
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    ticks * 1_000_000 / TICKS_PER_SECOND
}

/// Peak resident set of the process so far (`VmHWM`), in KB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Holds every run's first model answer until `n` runs are waiting.
struct Gate {
    arrived: AtomicUsize,
    open: watch::Sender<bool>,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            arrived: AtomicUsize::new(0),
            open: watch::channel(false).0,
        })
    }

    /// What the fake models await: count in, wait for the gate (boxed, the same for all).
    fn wait(self: &Arc<Self>) -> Wait {
        let gate = Arc::clone(self);
        Arc::new(move || {
            gate.arrived.fetch_add(1, Ordering::Relaxed);
            let mut open = gate.open.subscribe();
            Box::pin(async move {
                let _ = open.wait_for(|open| *open).await;
            })
        })
    }

    /// Waits until `n` runs have arrived, then lets them all through; closes the gate again.
    async fn release(&self, n: usize) {
        while self.arrived.load(Ordering::Relaxed) < n {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        self.arrived.store(0, Ordering::Relaxed);
        self.open.send_replace(true);
    }

    fn close(&self) {
        self.open.send_replace(false);
    }
}

// --- hookchain ---------------------------------------------------------------------------

/// hookchain's fake model: asks for `ping` (after the gate) when the last message is the
/// user's, answers `done` otherwise.
struct HookchainModel {
    wait: Wait,
}

impl hookchain::Model for HookchainModel {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, hookchain::ModelError>> + Send {
        let asks = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::User);
        let wait = asks.then(|| (self.wait)());
        async move {
            Ok(match wait {
                Some(wait) => {
                    wait.await;
                    ModelResponse::tool_calls([ToolCall::new("call_1", "ping", json!({}))])
                }
                None => ModelResponse::text("done"),
            })
        }
    }
}

// --- Synaptic ----------------------------------------------------------------------------

/// Synaptic's fake chat model: asks for `ping` (after the gate) until a tool result is in the
/// history, answers `done` then.
struct SynapticModel {
    wait: Wait,
}

#[async_trait]
impl synaptic_core::ChatModel for SynapticModel {
    async fn chat(
        &self,
        request: synaptic_core::ChatRequest,
    ) -> Result<synaptic_core::ChatResponse, synaptic_core::SynapticError> {
        let answered = request.messages.iter().any(synaptic_core::Message::is_tool);
        let message = if answered {
            synaptic_core::Message::ai("done")
        } else {
            (self.wait)().await;
            synaptic_core::Message::ai_with_tool_calls(
                "",
                vec![synaptic_core::ToolCall {
                    id: "call_1".to_owned(),
                    name: "ping".to_owned(),
                    arguments: json!({}),
                }],
            )
        };
        Ok(synaptic_core::ChatResponse {
            message,
            usage: None,
        })
    }
}

/// Synaptic's `ping` tool: answers `pong`.
struct SynapticPing;

#[async_trait]
impl synaptic_core::Tool for SynapticPing {
    fn name(&self) -> &'static str {
        "ping"
    }

    fn description(&self) -> &'static str {
        "Answers pong."
    }

    async fn call(&self, _args: Value) -> Result<Value, synaptic_core::SynapticError> {
        Ok(Value::String("pong".to_owned()))
    }
}

// --- the probe ---------------------------------------------------------------------------

/// Spawns one run per call of `spawn`, `n` of them, and joins them.
type Spawn = Box<dyn Fn() -> tokio::task::JoinHandle<bool>>;

fn spawner(peer: &str, gate: &Arc<Gate>) -> Spawn {
    match peer {
        // The probe's own cost, in every peer's numbers: a task that waits at the gate once.
        "floor" => {
            let wait = gate.wait();
            Box::new(move || {
                let wait = wait();
                tokio::spawn(async move {
                    wait.await;
                    true
                })
            })
        }
        // The same turn by hand, no framework (`HandTurn`, as in the turn's instruction
        // counts): what any library at all could reach on this probe.
        "hand" => {
            let turn = Arc::new(HandTurn::new(HookchainModel { wait: gate.wait() }));
            Box::new(move || {
                let turn = Arc::clone(&turn);
                tokio::spawn(async move {
                    let messages = turn.run("hi").await.expect("the run succeeds");
                    messages.len() == 4
                })
            })
        }
        "hookchain" => {
            let agent = Arc::new(
                Agent::builder(HookchainModel { wait: gate.wait() })
                    .tool(hookchain_benches::agent::ping())
                    .chain(())
                    .build()
                    .expect("the agent builds"),
            );
            Box::new(move || {
                let agent = Arc::clone(&agent);
                tokio::spawn(async move {
                    let output = agent.run("hi").await.expect("the run succeeds");
                    output.model_calls == 2 && output.tool_calls == 1
                })
            })
        }
        "synaptic" => {
            let graph = Arc::new(
                synaptic_graph::create_react_agent(
                    Arc::new(SynapticModel { wait: gate.wait() }),
                    vec![Arc::new(SynapticPing)],
                )
                .expect("the graph compiles"),
            );
            Box::new(move || {
                let graph = Arc::clone(&graph);
                tokio::spawn(async move {
                    let state = synaptic_graph::MessageState {
                        messages: vec![synaptic_core::Message::human("hi")],
                    };
                    match graph.invoke(state).await.expect("the run succeeds") {
                        synaptic_graph::GraphResult::Complete(state) => state.messages.len() == 4,
                        _ => false,
                    }
                })
            })
        }
        #[cfg(feature = "rig")]
        "rig" => {
            let agent = Arc::new(rig::turn_agent(gate.wait()));
            Box::new(move || {
                let agent = Arc::clone(&agent);
                tokio::spawn(async move {
                    let response = agent.prompt("hi").await.expect("the run succeeds");
                    response.output() == "done"
                })
            })
        }
        other => panic!("unknown peer `{other}`: {PEERS:?}"),
    }
}

/// One peer at one N: prints `cpu_us_per_run peak_kb_per_run`.
fn measure(peer: &str, n: usize, rounds: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let gate = Gate::new();
    let spawn = {
        let _entered = runtime.enter();
        spawner(peer, &gate)
    };
    // One run first, outside the measure: lazy set-up (the agent's first run, the runtime's
    // threads) is not a per-run cost.
    runtime.block_on(async {
        let run = spawn();
        gate.release(1).await;
        assert!(
            run.await.expect("the run completes"),
            "{peer}: a wrong turn"
        );
        gate.close();
    });
    let (cpu_before, peak_before) = (cpu_us(), peak_kb());
    for _ in 0..rounds {
        runtime.block_on(async {
            let runs: Vec<_> = (0..n).map(|_| spawn()).collect();
            gate.release(n).await;
            for run in runs {
                assert!(
                    run.await.expect("the run completes"),
                    "{peer}: a wrong turn"
                );
            }
            gate.close();
        });
    }
    let (cpu_after, peak_after) = (cpu_us(), peak_kb());
    let cpu = (cpu_after - cpu_before) as f64 / (n * rounds) as f64;
    let peak = (peak_after - peak_before) as f64 / n as f64;
    println!("{cpu:.1} {peak:.2}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(3);
    if let [run, peer, n] = args.as_slice()
        && run == "run"
    {
        measure(peer, n.parse().expect("N is a number"), rounds);
        return ExitCode::SUCCESS;
    }
    let ns: Vec<usize> = match args.iter().map(|n| n.parse()).collect() {
        Ok(ns) if !args.is_empty() => ns,
        _ => {
            eprintln!("usage: scale N... | scale run PEER N   (PEER: {PEERS:?}; ROUNDS=3)");
            return ExitCode::FAILURE;
        }
    };
    let exe = std::env::current_exe().expect("this binary");
    println!("| peer | concurrent runs | CPU per run (µs) | peak memory per run (KB) |");
    println!("|---|---:|---:|---:|");
    for &n in &ns {
        for &peer in PEERS {
            let output = Command::new(&exe)
                .args(["run", peer, &n.to_string()])
                .output()
                .expect("the probe runs");
            let measured = String::from_utf8_lossy(&output.stdout);
            let mut values = measured.split_whitespace();
            match (values.next(), values.next(), output.status.success()) {
                (Some(cpu), Some(peak), true) => println!("| {peer} | {n} | {cpu} | {peak} |"),
                _ => {
                    eprintln!("{peer} at {n}: {}", String::from_utf8_lossy(&output.stderr));
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
