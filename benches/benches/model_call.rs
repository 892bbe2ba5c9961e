//! Chain overhead per model call, every variant side by side (see BENCHMARKS.md).
//!
//! - group `model_call`: variants (a)–(f) at N = 0, 1, 5, 10, 32 ((f), Rig, is a whole run of
//!   one model call: its hooks run only inside a run);
//! - group `sequential`: 10 `before_model` counter bumps and no wraps, against the same bumps
//!   inline;
//! - group `plugins`: 10 active middleware as static members, as plugins, and both.
//!
//! Every iteration is one model call, polled to completion by `exec::run`; the chain, the
//! context and the per-run state are set up once, outside the measured loop, and handed over
//! through `black_box` so that the compiler must perform every state update.

// (b) at N = 32 is an onion of 32 wrapping members: deeper than rustc's default query depth
// allows (see the `chain!` docs); the attribute goes in the crate that builds the chain.
#![recursion_limit = "256"]

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use hookchain::prelude::*;
use hookchain_benches::exec::run;
#[cfg(feature = "rig")]
use hookchain_benches::exec::spin;
use hookchain_benches::fixtures::{model_call, model_call_in};
use hookchain_benches::macro_mw::{Absent, Active, ActiveAsync, Manual, bump, bump_async};
#[cfg(feature = "rig")]
use hookchain_benches::rig;
use hookchain_benches::{chains_of, dyn_chain, hand, plugins, synaptic, ten_of};

/// One model call through a hookchain chain, as the agent loop makes it.
fn hookchain_chain<C: Middleware>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    chain: &C,
) {
    let mut cx = Context::new(Vec::new());
    let mut state = C::State::default();
    let (cx, state) = (black_box(&mut cx), black_box(&mut state));
    group.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter(|| run(model_call(chain, cx, state)))
    });
}

/// (c) at N = `$n`: `hand::hand_$n`.
macro_rules! hand_bench {
    ($group:expr, $n:literal, $f:path) => {{
        let mut cx = Context::new(Vec::new());
        let mut counts = [0_u64; $n];
        let (cx, counts) = (black_box(&mut cx), black_box(&mut counts));
        $group.bench_function(BenchmarkId::new("c_hand", $n), |b| {
            b.iter(|| run($f(cx, counts)))
        });
    }};
}

fn model_call_table(c: &mut Criterion) {
    let mut group = c.benchmark_group("model_call");

    // (a) absent hooks.
    let (a0, a1, a5, a10, a32) = chains_of!(Absent);
    hookchain_chain(&mut group, "a_absent", 0, &a0);
    hookchain_chain(&mut group, "a_absent", 1, &a1);
    hookchain_chain(&mut group, "a_absent", 5, &a5);
    hookchain_chain(&mut group, "a_absent", 10, &a10);
    hookchain_chain(&mut group, "a_absent", 32, &a32);

    // (b) active middleware, plain-`fn` sequential hooks.
    let (b0, b1, b5, b10, b32) = chains_of!(Active);
    hookchain_chain(&mut group, "b_active", 0, &b0);
    hookchain_chain(&mut group, "b_active", 1, &b1);
    hookchain_chain(&mut group, "b_active", 5, &b5);
    hookchain_chain(&mut group, "b_active", 10, &b10);
    hookchain_chain(&mut group, "b_active", 32, &b32);

    // (b) with `async fn` sequential hooks.
    let (s0, s1, s5, s10, s32) = chains_of!(ActiveAsync);
    hookchain_chain(&mut group, "b_active_async", 0, &s0);
    hookchain_chain(&mut group, "b_active_async", 1, &s1);
    hookchain_chain(&mut group, "b_active_async", 5, &s5);
    hookchain_chain(&mut group, "b_active_async", 10, &s10);
    hookchain_chain(&mut group, "b_active_async", 32, &s32);

    // (b) as a hand-written `impl Middleware` (no macro).
    let (m0, m1, m5, m10, m32) = chains_of!(Manual);
    hookchain_chain(&mut group, "b_manual_impl", 0, &m0);
    hookchain_chain(&mut group, "b_manual_impl", 1, &m1);
    hookchain_chain(&mut group, "b_manual_impl", 5, &m5);
    hookchain_chain(&mut group, "b_manual_impl", 10, &m10);
    hookchain_chain(&mut group, "b_manual_impl", 32, &m32);

    // (c) by hand.
    hand_bench!(group, 0, hand::hand_0);
    hand_bench!(group, 1, hand::hand_1);
    hand_bench!(group, 5, hand::hand_5);
    hand_bench!(group, 10, hand::hand_10);
    hand_bench!(group, 32, hand::hand_32);

    // (d) Vec<Arc<dyn>> + boxed futures.
    for n in hookchain_benches::NS {
        let chain = dyn_chain::DynChain::active(n);
        let mut cx = Context::new(Vec::new());
        let mut states = chain.state();
        let (cx, states) = (black_box(&mut cx), black_box(&mut states));
        group.bench_function(BenchmarkId::new("d_dyn", n), |b| {
            b.iter(|| run(chain.model_call(cx, states)))
        });
    }

    // (e) Synaptic 0.4.0, no-op middleware (the variant), then active ones.
    for n in hookchain_benches::NS {
        let chain = synaptic::noop_chain(n);
        group.bench_function(BenchmarkId::new("e_synaptic", n), |b| {
            b.iter(|| run(synaptic::model_call(black_box(&chain))))
        });
    }
    for n in hookchain_benches::NS {
        let chain = synaptic::active_chain(n);
        group.bench_function(BenchmarkId::new("e_synaptic_active", n), |b| {
            b.iter(|| run(synaptic::model_call(black_box(&chain))))
        });
    }

    // (f) Rig 0.44.0: a run of one model call through its hooks (a hook runs only in a run), no-op
    // hooks, then active ones; the hooks' cost is f(N) - f(0). With `--features rig` only: Rig
    // changes hookchain's own build (see benches/Cargo.toml).
    #[cfg(feature = "rig")]
    for n in hookchain_benches::NS {
        let agent = rig::noop_agent(n);
        group.bench_function(BenchmarkId::new("f_rig", n), |b| {
            b.iter(|| spin(rig::model_call(black_box(&agent))))
        });
    }
    #[cfg(feature = "rig")]
    for n in hookchain_benches::NS {
        let agent = rig::active_agent(n);
        group.bench_function(BenchmarkId::new("f_rig_active", n), |b| {
            b.iter(|| spin(rig::model_call(black_box(&agent))))
        });
    }

    group.finish();
}

fn sequential_table(c: &mut Criterion) {
    let mut group = c.benchmark_group("sequential");
    hookchain_chain(&mut group, "empty_chain", 0, &());
    hookchain_chain(&mut group, "hookchain_fn_hooks", 10, &ten_of!(bump));
    hookchain_chain(
        &mut group,
        "hookchain_async_hooks",
        10,
        &ten_of!(bump_async),
    );
    let mut cx = Context::new(Vec::new());
    let mut counts = [0_u64; 10];
    let (cx, counts) = (black_box(&mut cx), black_box(&mut counts));
    group.bench_function(BenchmarkId::new("inline", 10), |b| {
        b.iter(|| run(hand::inline_bumps_10(cx, counts)))
    });
    group.finish();
}

/// Plugins beside static members (`hookchain::plugin`): the same middleware, static, as
/// plugins, and both, measured side by side; the thread state kept across calls as a run
/// keeps it.
fn plugins_table(c: &mut Criterion) {
    fn bench<C: Middleware>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, chain: &C) {
        let mut cx = Context::new(Vec::new());
        let mut state = C::State::default();
        let mut thread = C::ThreadState::default();
        let (cx, state, thread) = (
            black_box(&mut cx),
            black_box(&mut state),
            black_box(&mut thread),
        );
        group.bench_function(BenchmarkId::new(name, 10), |b| {
            b.iter(|| run(model_call_in(chain, cx, state, thread)))
        });
    }
    let mut group = c.benchmark_group("plugins");
    bench(&mut group, "static", &ten_of!(Active));
    bench(
        &mut group,
        "empty_member",
        &hookchain::chain![plugins::active(0)],
    );
    bench(
        &mut group,
        "static_and_empty_member",
        &hookchain::chain![ten_of!(Active), plugins::active(0)],
    );
    bench(
        &mut group,
        "plugins",
        &hookchain::chain![plugins::active(10)],
    );
    bench(
        &mut group,
        "static_and_plugins",
        &hookchain::chain![ten_of!(Active), plugins::active(10)],
    );
    let chain = dyn_chain::DynChain::active(10);
    let mut cx = Context::new(Vec::new());
    let mut states = chain.state();
    let (cx, states) = (black_box(&mut cx), black_box(&mut states));
    group.bench_function(BenchmarkId::new("d_dyn", 10), |b| {
        b.iter(|| run(chain.model_call(cx, states)))
    });
    group.finish();
}

criterion_group!(benches, model_call_table, sequential_table, plugins_table);
criterion_main!(benches);
