//! Event-queue throughput: push one event and pop one, with 10^3, 10^5 and 10^6 events
//! pending (the hold model). Throughput is in events (one push + one pop).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::Rng;
use retrysim::engine::{stream, EventQueue};

#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Ev(u32, u32);

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    for pending in [1_000usize, 100_000, 1_000_000] {
        let ops = 100_000u64;
        g.throughput(Throughput::Elements(ops));
        g.bench_function(format!("hold_{pending}"), |b| {
            b.iter_batched_ref(
                || {
                    let mut rng = stream(1, "bench");
                    let mut q = EventQueue::new();
                    for i in 0..pending {
                        q.push(rng.next_u64() % 1_000_000_000, Ev(i as u32, 0));
                    }
                    (q, rng)
                },
                |(q, rng)| {
                    for _ in 0..ops {
                        let (t, e) = q.pop().expect("pending");
                        q.push(t + 1 + rng.next_u64() % 1_000_000_000, e);
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(10);
    targets = hold
}
criterion_main!(benches);
