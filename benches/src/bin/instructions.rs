//! Runs one variant's call `M` times, for instruction counting under callgrind:
//!
//! ```text
//! valgrind --tool=callgrind target/release/instructions b10 1000
//! ```
//!
//! Instructions per call = (total(M2) − total(M1)) / (M2 − M1): set-up and start-up cancel out.
//! `benches/instructions.sh` does this for every variant. `instructions list` prints the
//! variants.

use std::hint::black_box;
use std::process::ExitCode;

use hookchain::prelude::*;
use hookchain_benches::agent::{self, HandTurn};
use hookchain_benches::exec::{run, spin};
use hookchain_benches::fixtures::{model_call, model_call_in};
use hookchain_benches::macro_mw::{Absent, Active, ActiveAsync, Full, Manual, bump, bump_async};
#[cfg(feature = "rig")]
use hookchain_benches::rig;
use hookchain_benches::{
    builtins, chains_of, dyn_chain, hand, plugins, streaming, synaptic, ten_of,
};

const VARIANTS: &[(&str, &str)] = &[
    ("a0", "hookchain, empty chain (N = 0)"),
    ("a10", "(a) hookchain, 10 absent-hook middleware"),
    ("a32", "(a) hookchain, 32 absent-hook middleware"),
    (
        "b10",
        "(b) hookchain, 10 active middleware (fn sequential hooks)",
    ),
    (
        "b10_async",
        "(b) hookchain, 10 active middleware (async fn sequential hooks)",
    ),
    (
        "b10_manual",
        "(b) hand-written impl Middleware (no macro), 10 active",
    ),
    ("p0", "plugins: an empty Plugins member"),
    ("p10", "plugins: 10 active middleware as plugins"),
    ("pa10", "plugins: 10 absent-hook middleware as plugins"),
    (
        "b10p0",
        "plugins: 10 active static members + an empty Plugins member",
    ),
    (
        "b10p10",
        "plugins: 10 active static members + 10 active plugins",
    ),
    ("c0", "(c) by hand, N = 0 (the model call alone)"),
    ("c10", "(c) by hand, N = 10"),
    (
        "c10_next",
        "(c) by hand, N = 10, the wraps as layers with a callable next",
    ),
    (
        "c10_state",
        "(c) by hand, N = 10, layers handing each member its states (a chain's onion by hand)",
    ),
    ("d10", "(d) Vec<Arc<dyn>> + boxed futures, 10 active"),
    ("e10", "(e) Synaptic 0.4.0, 10 no-op"),
    ("e10_active", "(e) Synaptic 0.4.0, 10 active"),
    (
        "f0",
        "(f) Rig 0.44.0, a run of 1 model call, no hook (per run)",
    ),
    (
        "f10",
        "(f) Rig 0.44.0, a run of 1 model call, 10 no-op hooks (per run)",
    ),
    (
        "f10_active",
        "(f) Rig 0.44.0, a run of 1 model call, 10 active hooks (per run)",
    ),
    ("seq10", "sequential: hookchain, 10 before_model bumps (fn)"),
    (
        "seq10_async",
        "sequential: hookchain, 10 before_model bumps (async fn)",
    ),
    ("inline10", "sequential: 10 bumps inline"),
    ("turn_hand", "agent turn by hand"),
    (
        "turn_hand10",
        "agent turn by hand, with the work of 10 members by hand",
    ),
    (
        "stream0",
        "Agent::stream of 1000 text deltas, empty chain (per run)",
    ),
    (
        "stream10",
        "Agent::stream of 1000 text deltas, 10 per-event hooks (per run)",
    ),
    (
        "stream_hand10",
        "the stream by hand: 10 counts, assembled, handed over (per run)",
    ),
    ("turn0", "Agent::run, empty chain"),
    ("turn10", "Agent::run, 10 middleware"),
    ("turn_p10", "Agent::run, 10 middleware as plugins (Plugins)"),
    (
        "turn10_p0",
        "Agent::run, 10 middleware + an empty Plugins member",
    ),
    (
        "turn_q10",
        "Agent::run, 10 middleware as plugins (PluginsWithoutEvents)",
    ),
    (
        "turn10_q0",
        "Agent::run, 10 middleware + an empty PluginsWithoutEvents member",
    ),
    (
        "turn_builtins",
        "Agent::run, the 7 model-path built-ins (none trips)",
    ),
    ("h10s1", "history 10: run with 1 tool step, 10 middleware"),
    ("h10s2", "history 10: run with 2 tool steps, 10 middleware"),
    ("h100s1", "history 100: run with 1 tool step, 10 middleware"),
    (
        "h100s2",
        "history 100: run with 2 tool steps, 10 middleware",
    ),
    (
        "h1000s1",
        "history 1000: run with 1 tool step, 10 middleware",
    ),
    (
        "h1000s2",
        "history 1000: run with 2 tool steps, 10 middleware",
    ),
    (
        "copy100",
        "history 100: the caller's own copy (clone and drop)",
    ),
    (
        "copy1000",
        "history 1000: the caller's own copy (clone and drop)",
    ),
];

// Never inlined: each variant's loop is compiled on its own, so one variant's code does not
// change the inlining (and the count) of another's.
#[inline(never)]
fn hookchain_calls<C: Middleware>(chain: &C, m: u64) {
    let mut cx = Context::new(Vec::new());
    let mut state = C::State::default();
    let (cx, state) = (black_box(&mut cx), black_box(&mut state));
    for _ in 0..m {
        black_box(run(model_call(black_box(chain), cx, state)).is_ok());
    }
}

/// [`hookchain_calls`] with the thread-scoped state kept across the calls, as a run keeps it
/// (a `Plugins` member creates its plugins' states at its first hook).
#[inline(never)]
fn hookchain_calls_in<C: Middleware>(chain: &C, m: u64) {
    let mut cx = Context::new(Vec::new());
    let mut state = C::State::default();
    let mut thread = C::ThreadState::default();
    let (cx, state, thread) = (
        black_box(&mut cx),
        black_box(&mut state),
        black_box(&mut thread),
    );
    for _ in 0..m {
        black_box(run(model_call_in(black_box(chain), cx, state, thread)).is_ok());
    }
}

/// Prints the size of each variant's call future (moving a future costs a copy of its size).
fn sizes() {
    fn hookchain_future<C: Middleware>(name: &str, chain: &C) {
        let mut cx = Context::new(Vec::new());
        let mut state = C::State::default();
        let mut thread = C::ThreadState::default();
        let mut request = ModelRequest::default();
        let before = std::mem::size_of_val(&chain.before_model(
            &mut cx,
            &mut state,
            &mut thread,
            &mut request,
        ));
        let future = model_call(chain, &mut cx, &mut state);
        println!(
            "{name:12} {:5} bytes (its chain's before_model: {before})",
            std::mem::size_of_val(&future)
        );
    }
    println!(
        "ModelRequest {:5} bytes",
        std::mem::size_of::<ModelRequest>()
    );
    println!(
        "ModelResponse {:4} bytes",
        std::mem::size_of::<ModelResponse>()
    );
    println!("Flow         {:5} bytes", std::mem::size_of::<Flow>());
    println!(
        "RunOutput    {:5} bytes",
        std::mem::size_of::<hookchain::RunOutput>()
    );
    println!(
        "Checkpoint   {:5} bytes",
        std::mem::size_of::<hookchain::Checkpoint>()
    );
    println!("Context      {:5} bytes", std::mem::size_of::<Context>());
    println!("Message      {:5} bytes", std::mem::size_of::<Message>());
    println!("Error        {:5} bytes", std::mem::size_of::<Error>());
    println!(
        "Result<Flow, Error> {:5} bytes",
        std::mem::size_of::<Result<Flow, Error>>()
    );
    println!(
        "Result<ModelResponse, Error> {:5} bytes",
        std::mem::size_of::<Result<ModelResponse, Error>>()
    );
    let empty = agent::agent(());
    let ten = agent::agent(ten_of!(Full));
    println!(
        "Agent::run future: empty chain {} bytes, 10 middleware {} bytes",
        std::mem::size_of_val(&empty.run("hi")),
        std::mem::size_of_val(&ten.run("hi"))
    );
    hookchain_future("a0", &());
    hookchain_future("a1", &hookchain::chain![Absent]);
    hookchain_future("a10", &ten_of!(Absent));
    hookchain_future("a32", &chains_of!(Absent).4);
    hookchain_future("b1", &hookchain::chain![Active]);
    hookchain_future("b10", &ten_of!(Active));
    hookchain_future("b10_async", &ten_of!(ActiveAsync));
    hookchain_future("b10_manual", &ten_of!(Manual));
    hookchain_future("seq10", &ten_of!(bump));
    hookchain_future("seq10_async", &ten_of!(bump_async));
    let mut cx = Context::new(Vec::new());
    let mut counts = [0_u64; 10];
    println!(
        "{:12} {:5} bytes",
        "c0",
        std::mem::size_of_val(&hand::hand_0(&mut cx, &mut []))
    );
    println!(
        "{:12} {:5} bytes",
        "c10",
        std::mem::size_of_val(&hand::hand_10(&mut cx, &mut counts))
    );
    println!(
        "{:12} {:5} bytes",
        "c10_next",
        std::mem::size_of_val(&hand::hand_next_10(&mut cx, &mut counts))
    );
    println!(
        "{:12} {:5} bytes",
        "c10_state",
        std::mem::size_of_val(&hand::hand_state_10(&mut cx, &mut counts))
    );
    println!(
        "{:12} {:5} bytes",
        "inline10",
        std::mem::size_of_val(&hand::inline_bumps_10(&mut cx, &mut counts))
    );
    let agent = agent::agent(());
    println!(
        "{:12} {:5} bytes",
        "turn0",
        std::mem::size_of_val(&agent.run("hi"))
    );
    let agent = agent::agent(ten_of!(Full));
    println!(
        "{:12} {:5} bytes",
        "turn10",
        std::mem::size_of_val(&agent.run("hi"))
    );
    let chain = dyn_chain::DynChain::active(10);
    let mut states = chain.state();
    println!(
        "{:12} {:5} bytes",
        "d10",
        std::mem::size_of_val(&chain.model_call(&mut cx, &mut states))
    );
}

/// Installs the subscriber `HOOKCHAIN_BENCH_SUBSCRIBER` names, to count what tracing costs
/// when someone listens: `trace` (a bare registry: every span and hook event is recorded),
/// `info` (the registry behind an `INFO` filter: spans, no hook events). Unset: no subscriber.
fn install_subscriber() -> Result<(), String> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::registry;
    let installed = match std::env::var("HOOKCHAIN_BENCH_SUBSCRIBER").as_deref() {
        Err(_) => return Ok(()),
        Ok("trace") => tracing::subscriber::set_global_default(registry()),
        Ok("info") => tracing::subscriber::set_global_default(
            registry().with(tracing_subscriber::filter::LevelFilter::INFO),
        ),
        Ok(other) => return Err(format!("HOOKCHAIN_BENCH_SUBSCRIBER={other}: trace or info")),
    };
    installed.map_err(|error| error.to_string())
}

fn main() -> ExitCode {
    if let Err(error) = install_subscriber() {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (variant, m) = match args.as_slice() {
        [cmd] if cmd == "sizes" => {
            sizes();
            return ExitCode::SUCCESS;
        }
        [list] if list == "list" => {
            for (name, what) in VARIANTS {
                println!("{name:12} {what}");
            }
            return ExitCode::SUCCESS;
        }
        [time, m, variants @ ..] if time == "time" && !variants.is_empty() => {
            return interleaved(m.parse().expect("M is a number"), variants);
        }
        [variant, m] => (variant.as_str(), m.parse::<u64>().expect("M is a number")),
        _ => {
            eprintln!(
                "usage: instructions VARIANT M | instructions time M VARIANT... | instructions list"
            );
            return ExitCode::FAILURE;
        }
    };
    run_variant(variant, m)
}

/// Wall-clock time of `variants`, interleaved: `ROUNDS` rounds (21 by default), each running
/// every variant `m` times in turn, so that the machine's noise falls on all of them alike.
/// Prints each variant's median time per call (setup included, as under callgrind: keep `m`
/// large) and its ratio to the last variant named.
fn interleaved(m: u64, variants: &[String]) -> ExitCode {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(21);
    let mut times = vec![Vec::with_capacity(rounds); variants.len()];
    for _ in 0..rounds {
        for (variant, times) in variants.iter().zip(&mut times) {
            let start = std::time::Instant::now();
            if run_variant(variant, m) != ExitCode::SUCCESS {
                return ExitCode::FAILURE;
            }
            times.push(start.elapsed().as_nanos() as f64 / m as f64);
        }
    }
    let medians: Vec<f64> = times
        .iter_mut()
        .map(|times| {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        })
        .collect();
    let last = medians[medians.len() - 1];
    println!("| variant | median ns per call ({rounds} rounds of {m}) | ratio |");
    println!("|---|---:|---:|");
    for (variant, median) in variants.iter().zip(&medians) {
        println!("| {variant} | {median:.0} | {:.3} |", median / last);
    }
    ExitCode::SUCCESS
}

/// Runs `variant` `m` times.
fn run_variant(variant: &str, m: u64) -> ExitCode {
    match variant {
        "a0" => hookchain_calls(&(), m),
        "a10" => hookchain_calls(&ten_of!(Absent), m),
        "a32" => hookchain_calls(&chains_of!(Absent).4, m),
        "b10" => hookchain_calls(&ten_of!(Active), m),
        "b10_async" => hookchain_calls(&ten_of!(ActiveAsync), m),
        "b10_manual" => hookchain_calls(&ten_of!(Manual), m),
        "seq10" => hookchain_calls(&ten_of!(bump), m),
        "seq10_async" => hookchain_calls(&ten_of!(bump_async), m),
        "p0" => hookchain_calls_in(&hookchain::chain![plugins::active(0)], m),
        "p10" => hookchain_calls_in(&hookchain::chain![plugins::active(10)], m),
        "pa10" => hookchain_calls_in(&hookchain::chain![plugins::absent(10)], m),
        "b10p0" => hookchain_calls_in(&hookchain::chain![ten_of!(Active), plugins::active(0)], m),
        "b10p10" => hookchain_calls_in(&hookchain::chain![ten_of!(Active), plugins::active(10)], m),
        "c0" | "c10" | "c10_next" | "c10_state" | "inline10" => {
            let mut cx = Context::new(Vec::new());
            let mut counts = [0_u64; 10];
            let (cx, counts) = (black_box(&mut cx), black_box(&mut counts));
            for _ in 0..m {
                let result = match variant {
                    "c0" => run(hand::hand_0(cx, &mut [])),
                    "c10" => run(hand::hand_10(cx, counts)),
                    "c10_next" => run(hand::hand_next_10(cx, counts)),
                    "c10_state" => run(hand::hand_state_10(cx, counts)),
                    _ => run(hand::inline_bumps_10(cx, counts)),
                };
                black_box(result.is_ok());
            }
        }
        "d10" => {
            let chain = dyn_chain::DynChain::active(10);
            let mut cx = Context::new(Vec::new());
            let mut states = chain.state();
            let (cx, states) = (black_box(&mut cx), black_box(&mut states));
            for _ in 0..m {
                black_box(run(chain.model_call(cx, states)).is_ok());
            }
        }
        "e10" | "e10_active" => {
            let chain = if variant == "e10" {
                synaptic::noop_chain(10)
            } else {
                synaptic::active_chain(10)
            };
            for _ in 0..m {
                black_box(run(synaptic::model_call(black_box(&chain))).is_ok());
            }
        }
        #[cfg(feature = "rig")]
        "f0" | "f10" | "f10_active" => {
            let agent = match variant {
                "f0" => rig::noop_agent(0),
                "f10" => rig::noop_agent(10),
                _ => rig::active_agent(10),
            };
            for _ in 0..m {
                black_box(spin(rig::model_call(black_box(&agent))));
            }
        }
        #[cfg(not(feature = "rig"))]
        "f0" | "f10" | "f10_active" => {
            eprintln!(
                "Rig's variants are built with `--features rig` (benches/instructions.sh does)"
            );
            return ExitCode::FAILURE;
        }
        "stream0" | "stream10" | "stream_hand10" => {
            let empty = streaming::agent(());
            let ten = streaming::agent(ten_of!(streaming::Tally));
            for _ in 0..m {
                let received = match variant {
                    "stream0" => spin(streaming::stream_run(&empty)),
                    "stream10" => spin(streaming::stream_run(&ten)),
                    _ => spin(streaming::hand_10(&streaming::Tokens)),
                };
                black_box(received);
            }
        }
        "turn_hand10" => {
            let hand = HandTurn::default();
            let mut counts = [0_u64; 10];
            for _ in 0..m {
                black_box(run(hand.run_10(black_box("hi"), &mut counts)).is_ok());
            }
            black_box(counts);
        }
        "turn_hand" => {
            let hand = HandTurn::default();
            for _ in 0..m {
                black_box(run(hand.run(black_box("hi"))).is_ok());
            }
        }
        "turn0" => {
            let agent = agent::agent(());
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn10" => {
            let agent = agent::agent(ten_of!(Full));
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn_p10" => {
            let agent = agent::agent(hookchain::chain![plugins::full(10)]);
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn_q10" => {
            let agent = agent::agent(hookchain::chain![plugins::full_without_events(10)]);
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn10_q0" => {
            let agent = agent::agent(hookchain::chain![
                ten_of!(Full),
                plugins::full_without_events(0)
            ]);
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn10_p0" => {
            let agent = agent::agent(hookchain::chain![ten_of!(Full), plugins::full(0)]);
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        "turn_builtins" => {
            let runtime = builtins::timer_runtime();
            let _entered = runtime.enter();
            let agent = agent::agent(builtins::model_path_chain());
            for _ in 0..m {
                black_box(run(agent::turn(&agent)));
            }
        }
        copy if copy.starts_with("copy") => {
            // What `h<length>s<steps>` spends on its input's copy, which the run then owns:
            // subtracted, the rest is what the run costs at that length.
            let Ok(length) = copy["copy".len()..].parse() else {
                eprintln!("unknown variant `{copy}`; `instructions list` prints them");
                return ExitCode::FAILURE;
            };
            let input = agent::history(length);
            for _ in 0..m {
                drop(black_box(black_box(&input).to_vec()));
            }
        }
        history if history.starts_with('h') => {
            // `h<length>s<steps>`: a step's cost at a history length is the difference of the
            // two variants of that length (the input's own copy cancels out).
            let Some((length, steps)) = history[1..]
                .split_once('s')
                .and_then(|(length, steps)| Some((length.parse().ok()?, steps.parse().ok()?)))
            else {
                eprintln!("unknown variant `{history}`; `instructions list` prints them");
                return ExitCode::FAILURE;
            };
            let agent = agent::stepping_agent(steps, ten_of!(Full));
            let input = agent::history(length);
            for _ in 0..m {
                run(agent::run_on_history(&agent, black_box(&input)));
            }
        }
        other => {
            eprintln!("unknown variant `{other}`; `instructions list` prints them");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
