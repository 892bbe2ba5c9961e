//! One agent turn: `Agent::run` with 2 model calls and 1 tool call on the scripted model, with
//! 0 and 10 middleware, side by side with the same turn written by hand (see BENCHMARKS.md).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hookchain_benches::agent::{self, HandTurn};
use hookchain_benches::builtins;
use hookchain_benches::exec::run;
use hookchain_benches::macro_mw::{Absent, Full};
use hookchain_benches::ten_of;

fn agent_turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("agent_turn");

    let hand = HandTurn::default();
    group.bench_function(BenchmarkId::new("hand_loop", 0), |b| {
        b.iter(|| run(hand.run(black_box("hi"))))
    });

    let empty = agent::agent(());
    group.bench_function(BenchmarkId::new("agent", 0), |b| {
        b.iter(|| run(agent::turn(&empty)))
    });

    let absent = agent::agent(ten_of!(Absent));
    group.bench_function(BenchmarkId::new("agent_absent", 10), |b| {
        b.iter(|| run(agent::turn(&absent)))
    });

    let full = agent::agent(ten_of!(Full));
    group.bench_function(BenchmarkId::new("agent", 10), |b| {
        b.iter(|| run(agent::turn(&full)))
    });

    let runtime = builtins::timer_runtime();
    let _entered = runtime.enter();
    let resilient = agent::agent(builtins::model_path_chain());
    group.bench_function(BenchmarkId::new("agent_builtins", 7), |b| {
        b.iter(|| run(agent::turn(&resilient)))
    });

    group.finish();
}

criterion_group!(benches, agent_turn);
criterion_main!(benches);
