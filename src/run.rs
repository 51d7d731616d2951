//! One run: a validated scenario and a seed in, measurements and a summary row out.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{self, rng::splitmix64, Handler, Nanos, Scheduler};
use crate::metrics::summary::Layout;
use crate::metrics::trace::TraceLog;
use crate::metrics::{RunMetrics, Summary};
use crate::model::outage::Window;
use crate::model::{Packed, World};
use crate::scenario::Scenario;

/// The seed of replication `r` of a run with base seed `base`.
///
/// Replication 0 uses the base seed itself, so `--seed N` reproduces a single run;
/// replication `r > 0` hashes the pair: `splitmix64(splitmix64(base) + r) >> 1` (splitmix64
/// is a bijection, so two pairs meet only where two hashed seeds lie within `r` of each other).
/// No two (base, replication) pairs share a seed (a 63-bit hash collision aside), so
/// the replications of seeds 1..10 are ten independent samples each, not shifted
/// copies of one another; the top bit is clear, so every seed fits a signed 64-bit
/// column. The seed depends only on the replication, never on the sweep cell: every
/// cell's replication `r` sees the same arrivals (common random numbers).
pub(crate) fn replication_seed(base: u64, r: u32) -> u64 {
    if r == 0 {
        base
    } else {
        splitmix64(splitmix64(base).wrapping_add(u64::from(r))) >> 1
    }
}

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Global run index.
    pub run: u64,
    /// Replication index.
    pub replication: u32,
    /// The seed used.
    pub seed: u64,
    /// The summary row.
    pub summary: Summary,
    /// The raw measurements (time series, herd).
    pub metrics: RunMetrics,
    /// Outage windows that applied.
    pub windows: Vec<Window>,
    /// Breaker instances (to turn the open area into a fraction).
    pub breaker_instances: u64,
}

/// Simulates `scn` with `seed` to the end of its drain, or until it hits one of its
/// `[limits]` (then `totals.truncated` says which, and the series ends at the stop).
pub(crate) fn simulate(scn: &Scenario, seed: u64) -> (RunMetrics, Vec<Window>) {
    let (m, w, _, _) = simulate_with(scn, seed, None, &NEVER);
    (m, w)
}

/// A stop flag nothing sets: the runs that cannot be stopped from outside.
static NEVER: AtomicBool = AtomicBool::new(false);

/// Simulates `scn` with `seed` as [`simulate`] does, and traces the logical requests
/// whose ordinals are `picks` (sorted; see [`crate::metrics::trace::sample`]) with the
/// sample's seed `sample_seed`. Tracing changes nothing else: the measurements are
/// [`simulate`]'s, bit for bit.
pub(crate) fn simulate_traced(
    scn: &Scenario,
    seed: u64,
    picks: Vec<u64>,
    sample_seed: u64,
) -> (RunMetrics, Vec<Window>, TraceLog) {
    let (m, w, t, _) = simulate_with(scn, seed, Some((picks, sample_seed)), &NEVER);
    (m, w, t.unwrap_or_default())
}

/// The traces of replication `replication` of `scn`, whose run started `population`
/// logical requests: `sample` of them drawn uniformly with the trace seed (the
/// scenario's `trace.seed`, else the run's seed). The run is simulated again with the
/// same seed, so it is the run measured before, request for request.
pub(crate) fn trace_run(
    scn: &Scenario,
    replication: u32,
    population: u64,
    sample: u64,
) -> TraceLog {
    let seed = replication_seed(scn.seed, replication);
    let sample_seed = scn.trace.and_then(|t| t.seed).unwrap_or(seed);
    let picks = crate::metrics::trace::sample(sample_seed, population, sample);
    simulate_traced(scn, seed, picks, sample_seed).2
}

/// Simulates `scn` with `seed`, tracing the requests `trace` picks (with its sample
/// seed) when it holds any. `stop` set (by another thread) ends the run within a few
/// hundred events: the last value returned is then false, and the measurements are of
/// a run cut short, to be thrown away.
fn simulate_with(
    scn: &Scenario,
    seed: u64,
    trace: Option<(Vec<u64>, u64)>,
    stop: &AtomicBool,
) -> (RunMetrics, Vec<Window>, Option<TraceLog>, bool) {
    let mut s = Scheduler::new();
    let mut world = World::new(scn, seed, &mut s);
    // The world's tracer is a type: a run without traces runs code with none.
    let Some((picks, sample_seed)) = trace else {
        let (end, whole) = run_to_end(scn, &mut s, &mut world, stop);
        let windows = world.windows().to_vec();
        let m = world.finish(end, s.processed());
        return (ended(m), windows, None, whole);
    };
    let mut world = world.with_trace(picks, seed, sample_seed);
    let (end, whole) = run_to_end(scn, &mut s, &mut world, stop);
    let windows = world.windows().to_vec();
    let traces = world.take_traces(end);
    let m = world.finish(end, s.processed());
    (ended(m), windows, Some(traces), whole)
}

/// Runs `world` until it stops, or until `stop` is set; returns where its series end
/// and whether the run went to its end (false: `stop` cut it short).
fn run_to_end<W: Handler<Packed>>(
    scn: &Scenario,
    s: &mut Scheduler<Packed>,
    world: &mut W,
    stop: &AtomicBool,
) -> (Nanos, bool) {
    let whole = engine::run_while(s, world, || !stop.load(Ordering::Relaxed));
    let end = s.now();
    if s.pending() == 0 {
        // Nothing more can happen: the series is complete to its end.
        (end.max(scn.duration), whole)
    } else {
        (end, whole)
    }
}

/// The measurements of a finished run, its series cut at a limit's stop.
fn ended(mut m: RunMetrics) -> RunMetrics {
    if m.totals.truncated.is_some() {
        // A run stopped at a limit measured nothing after the stop: its later buckets
        // would read as silence. The series ends with the bucket it stopped in.
        let stop = m.end;
        m.buckets.retain(|b| b.t <= stop);
    }
    m
}

/// The runs of `results` that stopped at a limit, each with why: the list a
/// [`crate::error::Truncation`] reports.
pub(crate) fn stopped_at_limits(results: &[RunResult]) -> Vec<(u64, Option<String>)> {
    results
        .iter()
        .filter_map(|r| r.metrics.totals.truncated.clone().map(|t| (r.run, Some(t))))
        .collect()
}

/// Runs replication `replication` of `scn` as global run `run`.
pub(crate) fn run_one(scn: &Scenario, layout: &Layout, run: u64, replication: u32) -> RunResult {
    let seed = replication_seed(scn.seed, replication);
    let (metrics, windows) = simulate(scn, seed);
    result_of(scn, layout, run, replication, seed, metrics, windows)
}

/// [`run_one`], unless `stop` is set before the run ends: then `None`, within a few
/// hundred events of it (the run cut short is thrown away).
pub(crate) fn run_one_until(
    scn: &Scenario,
    layout: &Layout,
    run: u64,
    replication: u32,
    stop: &AtomicBool,
) -> Option<RunResult> {
    let seed = replication_seed(scn.seed, replication);
    let (metrics, windows, _, whole) = simulate_with(scn, seed, None, stop);
    whole.then(|| result_of(scn, layout, run, replication, seed, metrics, windows))
}

/// The result of a finished run: its measurements and their summary row.
fn result_of(
    scn: &Scenario,
    layout: &Layout,
    run: u64,
    replication: u32,
    seed: u64,
    metrics: RunMetrics,
    windows: Vec<Window>,
) -> RunResult {
    let summary = Summary::build(&metrics, scn, &windows, layout, run, replication, seed);
    let breaker_instances = scn
        .fleets
        .iter()
        .flat_map(|f| f.layers.iter())
        .filter(|l| l.breaker.is_some())
        .map(|l| l.instances)
        .sum();
    RunResult {
        run,
        replication,
        seed,
        summary,
        metrics,
        windows,
        breaker_instances,
    }
}

#[cfg(test)]
mod tests {
    use super::{replication_seed, run_one, run_one_until};
    use crate::metrics::summary::Layout;
    use std::sync::atomic::AtomicBool;

    /// Without a stop, the stoppable run is the run, bit for bit; with the stop set it
    /// is none.
    #[test]
    fn a_stoppable_run_is_the_run_unless_stopped() {
        let l = crate::load_scenario(None, &crate::Overrides::default()).unwrap();
        let layout = Layout::of(&l.scenario);
        let whole = run_one(&l.scenario, &layout, 0, 0);
        let go = AtomicBool::new(false);
        let r = run_one_until(&l.scenario, &layout, 0, 0, &go).unwrap();
        assert_eq!(format!("{:?}", r.summary), format!("{:?}", whole.summary));
        assert_eq!(format!("{:?}", r.metrics), format!("{:?}", whole.metrics));
        let stop = AtomicBool::new(true);
        assert!(run_one_until(&l.scenario, &layout, 0, 0, &stop).is_none());
    }

    /// Over a grid of base seeds and replications, every (seed, replication) pair has
    /// its own stream, and none is another pair's base seed.
    #[test]
    fn replication_seeds_of_different_base_seeds_never_overlap() {
        let mut seen = std::collections::BTreeMap::new();
        for base in (0..200u64).chain([u64::MAX, i64::MAX as u64, 1 << 62]) {
            for r in 0..200u32 {
                let s = replication_seed(base, r);
                if r > 0 {
                    assert!(s <= i64::MAX as u64, "seed {s} does not fit an i64");
                }
                if let Some(prev) = seen.insert(s, (base, r)) {
                    panic!("({base}, {r}) and {prev:?} share seed {s}");
                }
            }
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn replication_seed_example() {
        use crate::engine::rng::splitmix64;
        use crate::run::replication_seed;
        assert_eq!(replication_seed(42, 0), 42);
        assert_eq!(replication_seed(42, 1), splitmix64(splitmix64(42) + 1) >> 1);
        assert_ne!(replication_seed(82, 2), replication_seed(83, 1));
    }
}
