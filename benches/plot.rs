//! Drawing the charts of a 300-bucket run (the default scenario over 300 s): the time
//! `retrysim plot` and `run` spend on plots, once the CSV files exist. Throughput is in
//! time-series buckets.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use retrysim::{draw_folder, load_scenario, run_to_folder, Format, Overrides, Target};

fn plot(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let overrides = Overrides {
        sets: vec!["duration=\"300s\"".into()],
        seed: None,
    };
    let loaded = load_scenario(None, &overrides).expect("the default scenario");
    let target = Target {
        scenario: None,
        overrides: &overrides,
        out: Some(dir.path()),
        force: true,
    };
    run_to_folder(&loaded, &target).expect("results written");
    let mut g = c.benchmark_group("plot");
    g.throughput(Throughput::Elements(300));
    for (name, format) in [("svg", Format::Svg), ("png", Format::Png)] {
        g.bench_function(format!("300_buckets_{name}"), |b| {
            b.iter(|| draw_folder(dir.path(), format).expect("charts drawn"))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(10);
    targets = plot
}
criterion_main!(benches);
