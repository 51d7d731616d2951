//! Hooks for the benches and the fuzzer (feature `dev-hooks`, off in every build a
//! user makes): the few internals they drive directly, so that the rest of the crate
//! stays private. The white-box tests (`src/tests/`) use the same module.

use crate::engine::time::SECOND;
use crate::error::Error;
use crate::model::config::{Arrival, Scenario};
use crate::run::RunResult;
use crate::scenario::Source;
use crate::sweep::Plan;

pub use crate::metrics::ordinal::End;
pub use crate::metrics::recorder::{Recorder, RunMetrics};
pub use crate::model::outcome::Class;

/// Simulates a scenario with `seed` and returns its metrics (no summary, no rows):
/// what the reference and large benches time.
pub fn simulate(scn: &Scenario, seed: u64) -> RunMetrics {
    crate::run::simulate(scn, seed).0
}

/// Runs every run of a planned sweep in memory, in parallel (the sweep bench).
pub fn run_in_memory(plan: &Plan) -> Result<Vec<RunResult>, Error> {
    Ok(crate::sweep::run_in_memory(plan)?)
}

/// The events a fuzzed run may handle at most.
pub const FUZZ_MAX_EVENTS: u64 = 200_000;

/// Makes a valid scenario cheap to run: 2 s at most, one replication, small fleets,
/// [`FUZZ_MAX_EVENTS`] events (the fuzz target and the property tests shrink alike).
pub fn shrink(s: &mut Scenario) {
    s.duration = s.duration.min(2 * SECOND);
    s.drain = s.drain.min(2 * SECOND);
    s.bucket = s.bucket.clamp((s.duration / 200_000).max(1), s.duration);
    s.warmup = s.warmup.min(s.duration - 1);
    s.replications = 1;
    s.limits.max_events = s.limits.max_events.min(FUZZ_MAX_EVENTS);
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

/// The fuzz target's body: `text` as the scenario file `fuzz.toml` through parse,
/// validate, explain, the sweep plan (small grids) and, when valid, a short run and its
/// CSV rows. A clean error (naming the file) or a result is fine; a panic, a hang or an
/// out-of-memory is a finding.
pub fn exercise(text: &str) {
    let source = Source {
        path: "fuzz.toml".into(),
        stem: "fuzz".into(),
        text: text.to_string(),
    };
    let loaded = match crate::scenario::load(source, &[]) {
        Ok(l) => l,
        Err(e) => {
            assert!(e.to_string().contains("'fuzz.toml'"), "{e}");
            return;
        }
    };
    let _ = crate::explain::explain(&loaded.scenario).render();
    if let Some(sweep) = &loaded.file.sweep {
        if cells(sweep) <= 1_000.0 {
            let _ = crate::sweep::plan(loaded.clone());
        }
    }
    let mut scn = loaded.scenario.clone();
    shrink(&mut scn);
    let layout = crate::metrics::summary::Layout::of(&scn);
    let r = crate::run::run_one(&scn, &layout, 0, 0);
    let _ = crate::export::csv::summary_row(&r.summary, &layout.columns());
    let _ = crate::export::csv::timeseries_rows(&r, scn.dependency.servers);
    let _ = crate::export::csv::herd_rows(&r);
}
