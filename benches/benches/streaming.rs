//! Events per second of a streamed run: 1000 text deltas through `Agent::stream` with the empty
//! chain and with 10 per-event hooks, side by side with a hand-written stream adapter doing
//! the same work (see BENCHMARKS.md).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hookchain_benches::exec::spin;
use hookchain_benches::streaming::{self, EVENTS, Tally, Tokens};
use hookchain_benches::ten_of;

fn streaming(c: &mut Criterion) {
    let mut group = c.benchmark_group("stream");
    group.throughput(Throughput::Elements(EVENTS as u64));

    group.bench_function(BenchmarkId::new("hand", 10), |b| {
        b.iter(|| spin(streaming::hand_10(black_box(&Tokens))))
    });

    let empty = streaming::agent(());
    group.bench_function(BenchmarkId::new("agent", 0), |b| {
        b.iter(|| spin(streaming::stream_run(&empty)))
    });

    let ten = streaming::agent(ten_of!(Tally));
    group.bench_function(BenchmarkId::new("agent", 10), |b| {
        b.iter(|| spin(streaming::stream_run(&ten)))
    });

    group.finish();
}

criterion_group!(benches, streaming);
criterion_main!(benches);
