//! A 64-run sweep (16 cells × 4 replications of a 60 s scenario) on 1 and 2 threads:
//! the speed-up is the ratio of the two times. Throughput is in events.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use retrysim::dev_hooks::run_in_memory;
use retrysim::{load_scenario_text, plan_sweep};

const SCENARIO: &str = r#"
name = "bench-sweep"
duration = "60s"
replications = 4
[dependency]
servers = 10
queue_limit = 100
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "clients"
arrival = { kind = "poisson", rate = 800 }
[[fleets.layers]]
max_attempts = 3
attempt_timeout = "100ms"
backoff = { kind = "exponential", base = "10ms", cap = "1s", jitter = "full" }
[[outages]]
start = "20s"
end = "30s"
mode = { kind = "fail" }
[sweep]
"fleets.0.layers.0.max_attempts" = [1, 2, 3, 4]
"fleets.0.arrival.rate" = [500, 700, 900, 1100]
"#;

fn sweep(c: &mut Criterion) {
    let loaded = load_scenario_text("bench", SCENARIO, &Default::default()).expect("valid");
    let p = plan_sweep(loaded).expect("plan");
    assert_eq!(p.total_runs(), 64);
    let events: u64 = run_in_memory(&p)
        .expect("runs")
        .iter()
        .map(|r| r.metrics.totals.events)
        .sum();
    let mut g = c.benchmark_group("sweep");
    g.throughput(Throughput::Elements(events));
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        g.bench_function(format!("64_runs_{threads}_threads"), |b| {
            b.iter(|| pool.install(|| run_in_memory(&p)))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(10);
    targets = sweep
}
criterion_main!(benches);
