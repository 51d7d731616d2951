//! libFuzzer target: arbitrary bytes as a scenario file, through parse, validate,
//! explain, the sweep plan (small grids) and, when valid, a short run and its CSV
//! rows. A clean error or a result is fine; a panic, a hang or an out-of-memory is a
//! finding (commit it as a regression test in `tests/integration/fuzz/mod.rs`).
//!
//! ```sh
//! cargo +nightly fuzz run scenario fuzz/corpus/scenario scenarios -- -max_total_time=600
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use retrysim::engine::time::SECOND;
use retrysim::metrics::summary::Layout;
use retrysim::model::config::{Arrival, Scenario};
use retrysim::scenario::{load, Source};

/// Makes a valid scenario cheap to run (the same shrink as `tests/integration/fuzz/mod.rs`).
fn shrink(s: &mut Scenario) {
    s.duration = s.duration.min(2 * SECOND);
    s.drain = s.drain.min(2 * SECOND);
    s.bucket = s.bucket.clamp((s.duration / 200_000).max(1), s.duration);
    s.warmup = s.warmup.min(s.duration - 1);
    s.replications = 1;
    s.limits.max_events = s.limits.max_events.min(200_000);
    s.limits.max_in_flight = s.limits.max_in_flight.min(5_000);
    for f in &mut s.fleets {
        match &mut f.arrival {
            Arrival::Poisson { rate } | Arrival::Constant { rate } => *rate = rate.min(2_000.0),
            Arrival::Burst { count, .. } => *count = (*count).min(2_000),
            // A trace is bounded by its file and by the duration.
            Arrival::Closed { .. } | Arrival::Trace(_) => {}
        }
        f.clients = f.clients.min(500);
        for l in &mut f.layers {
            l.instances = l.instances.min(500);
        }
    }
}

/// Cells of a `[sweep]` table, roughly (lists by length, ranges by their count), so
/// that only small grids are planned: a big one is valid and takes seconds.
fn cells(sweep: &toml::Table) -> f64 {
    sweep
        .values()
        .map(|v| match v {
            toml::Value::Array(a) => a.len() as f64,
            toml::Value::Table(t) => {
                let num = |k: &str| match t.get(k) {
                    Some(toml::Value::Integer(i)) => *i as f64,
                    Some(toml::Value::Float(f)) => *f,
                    _ => f64::NAN,
                };
                let n = (num("to") - num("from")) / num("step");
                if n.is_finite() {
                    n.abs() + 1.0
                } else {
                    1.0
                }
            }
            _ => 1.0,
        })
        .product()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = Source {
        path: "fuzz.toml".into(),
        stem: "fuzz".into(),
        text: text.to_string(),
    };
    let loaded = match load(source, &[]) {
        Ok(l) => l,
        Err(e) => {
            assert!(e.to_string().contains("'fuzz.toml'"), "{e}");
            return;
        }
    };
    let _ = retrysim::explain::explain(&loaded.scenario).render();
    if let Some(sweep) = &loaded.file.sweep {
        if cells(sweep) <= 1_000.0 {
            let _ = retrysim::sweep::plan(loaded.clone());
        }
    }
    let mut scn = loaded.scenario.clone();
    shrink(&mut scn);
    let layout = Layout::of(&scn);
    let r = retrysim::run::run_one(&scn, &layout, 0, 0);
    let _ = retrysim::export::csv::summary_row(&r.summary, &layout.columns());
    let _ = retrysim::export::csv::timeseries_rows(&r, scn.dependency.servers);
    let _ = retrysim::export::csv::herd_rows(&r);
});
