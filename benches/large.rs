//! A planner's large scenario (`benches/large.toml`): 100,000 requests/s for 60 s
//! against 1,200 servers, 3 attempts with a 1 s attempt timeout and a 10 s outage.
//! Throughput is in events handled; the process's peak resident memory after the
//! runs is printed beside it (memory is bounded by what is in flight, not by the
//! 6 million requests of the run).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use retrysim::dev_hooks::simulate;
use retrysim::load_scenario;

/// The process's peak resident set (VmHWM), in MiB, where /proc tells it.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn large(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/large.toml");
    let loaded = load_scenario(Some(std::path::Path::new(path)), &Default::default())
        .expect("valid large scenario");
    let scn = loaded.scenario;
    let metrics = simulate(&scn, scn.seed);
    let t = &metrics.totals;
    eprintln!(
        "large: {} events, {} logical requests, {} attempts, success {:.4}, peak RSS {:.1} MiB",
        t.events,
        t.logical,
        t.attempts,
        t.succeeded as f64 / t.logical as f64,
        peak_rss_mib().unwrap_or(f64::NAN)
    );
    let mut g = c.benchmark_group("large");
    g.throughput(Throughput::Elements(t.events));
    g.bench_function("run_60s_100k_per_s", |b| {
        b.iter(|| simulate(&scn, scn.seed))
    });
    g.finish();
    eprintln!(
        "large: peak RSS after the runs {:.1} MiB",
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(10);
    targets = large
}
criterion_main!(benches);
