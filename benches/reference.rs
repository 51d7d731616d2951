//! The reference run (scenarios/reference.toml, 300 s simulated, no plots, no files):
//! throughput in events handled.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use retrysim::run::simulate;
use retrysim::scenario::{load, Source};

fn reference(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/reference.toml");
    let loaded = load(
        Source::read(std::path::Path::new(path)).expect("reference scenario"),
        &[],
    )
    .expect("valid reference scenario");
    let scn = loaded.scenario;
    let events = simulate(&scn, scn.seed).0.totals.events;
    let mut g = c.benchmark_group("reference");
    g.throughput(Throughput::Elements(events));
    g.bench_function("run_300s", |b| b.iter(|| simulate(&scn, scn.seed)));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(20);
    targets = reference
}
criterion_main!(benches);
