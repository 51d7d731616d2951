//! Queue policies (`queue_policy`, issue 42) in whole runs: CoDel drops only under a
//! standing queue and only attempts that waited more than twice its target; adaptive
//! LIFO serves the oldest first below its threshold and the newest from it on; and
//! both break the retry storm that leaves a FIFO dependency metastable.

use crate::export::csv::timeseries_rows_laid;
use crate::metrics::columns::CODEL_GROUP;
use crate::metrics::summary::Cell;
use crate::metrics::trace::{Fate, TraceLog};
use crate::model::outcome::Class;
use crate::run::{trace_run, RunResult};

use crate::tests::common::{count, run, scenario};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// The summary cells other than `codel_dropped`, as text.
fn cells_but_codel(r: &RunResult) -> Vec<String> {
    r.summary
        .cells
        .iter()
        .filter(|(n, _)| n != "codel_dropped")
        .map(|(n, c)| format!("{n}={c:?}"))
        .collect()
}

/// `timeseries.csv`'s rows without the `codel_dropped` column (the last one).
fn series_but_codel(r: &RunResult, with: bool) -> Vec<String> {
    if !with {
        let rows = timeseries_rows_laid(r, Some(10), &[]);
        return rows.lines().map(String::from).collect();
    }
    let rows = timeseries_rows_laid(r, Some(10), &[(&CODEL_GROUP, true)]);
    rows.lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect()
}

/// Every span of every request of replication 0 of `text` with `sets`.
fn traced(text: &str, sets: &[&str], r: &RunResult) -> TraceLog {
    let l = scenario(text, sets);
    let population = r.metrics.totals.logical;
    assert!(
        population <= 10_000,
        "{population} requests: too many to trace"
    );
    let t = trace_run(&l.scenario, 0, population, population);
    assert!(!t.truncated);
    t
}

/// Two fleets sending at the same instants every 5 ms to one server of 2 ms: every
/// 5 ms one attempt is served at once and the other waits exactly 2 ms.
const PAIRS: &str = r#"
duration = "20s"
drain = "1s"
bucket = "1s"
[dependency]
servers = 1
service_time = "2ms"
[[fleets]]
name = "a"
arrival = { kind = "constant", rate = 200 }
[[fleets.layers]]
name = "client"
max_attempts = 1
[[fleets]]
name = "b"
arrival = { kind = "constant", rate = 200 }
[[fleets.layers]]
name = "client"
max_attempts = 1
"#;

/// A light Poisson load: 500/s against 10 servers of 10 ms (utilisation 0.5).
const LIGHT: &str = r#"
duration = "30s"
drain = "1s"
bucket = "1s"
[dependency]
servers = 10
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 500 }
[[fleets.layers]]
name = "client"
max_attempts = 3
attempt_timeout = "100ms"
"#;

#[test]
fn codel_never_drops_while_every_attempt_waits_less_than_the_target_and_changes_nothing() {
    for (text, policy) in [
        (
            PAIRS,
            r#"dependency.queue_policy={ kind = "codel", target = "3ms" }"#,
        ),
        (
            PAIRS,
            r#"dependency.queue_policy={ kind = "codel_timeout", target = "3ms" }"#,
        ),
        (LIGHT, r#"dependency.queue_policy={ kind = "codel" }"#),
        (
            LIGHT,
            r#"dependency.queue_policy={ kind = "codel_timeout" }"#,
        ),
    ] {
        let fifo = run(text, &[]);
        let codel = run(text, &[policy]);
        assert_eq!(count(&codel, "codel_dropped"), 0, "{policy}");
        assert!(fifo.summary.get("codel_dropped").is_none());
        assert_eq!(cells_but_codel(&fifo), cells_but_codel(&codel), "{policy}");
        assert_eq!(
            series_but_codel(&fifo, false),
            series_but_codel(&codel, true),
            "{policy}"
        );
    }
    // The pairs did queue: half the attempts waited, each 2 ms.
    let r = run(PAIRS, &[]);
    assert!(
        r.metrics.totals.waited >= 3_000,
        "{}",
        r.metrics.totals.waited
    );
}

/// 1500 attempts/s, one each, against 10 servers of 10 ms (capacity 1000/s) with an
/// unlimited queue: a standing queue from the start.
const OVERLOAD: &str = r#"
duration = "3s"
drain = "2s"
bucket = "1s"
[dependency]
servers = 10
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 1500 }
[[fleets.layers]]
name = "client"
max_attempts = 1
"#;

#[test]
fn codel_drops_under_overload_and_only_attempts_that_waited_more_than_twice_the_target() {
    let set = r#"dependency.queue_policy={ kind = "codel", target = "5ms", interval = "100ms" }"#;
    let r = run(OVERLOAD, &[set]);
    let dropped = count(&r, "codel_dropped");
    assert!(dropped > 1_000, "{dropped} dropped");
    assert_eq!(count(&r, "rejected"), dropped, "every rejection is CoDel's");
    let t = traced(OVERLOAD, &[set], &r);
    let mut seen = 0;
    let mut served_late = 0;
    for s in t.spans.iter().filter(|s| s.depth == 1) {
        let (Some(arrive), Some(done)) = (s.arrive, s.done) else {
            continue;
        };
        match (s.start, s.fate) {
            (None, Some(Fate::Answered(Class::Rejected))) => {
                seen += 1;
                assert!(
                    done - arrive > 10 * MS,
                    "dropped after waiting {} ns",
                    done - arrive
                );
            }
            (Some(start), _) if start - arrive > 10 * MS => served_late += 1,
            _ => {}
        }
    }
    assert_eq!(seen, dropped, "the trace holds every drop");
    // Not a plain timeout: the first attempt after each interval's check, and those
    // before the queue was judged standing, are served whatever they waited.
    assert!(served_late > 0);
    // FIFO serves them all, late.
    let fifo = run(OVERLOAD, &[]);
    assert_eq!(count(&fifo, "rejected"), 0);
}

/// One server of 10 ms and six requests at once: one is served at once, five wait.
const BURST: &str = r#"
duration = "1s"
drain = "1s"
[dependency]
servers = 1
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "burst", at = "0s", count = 6 }
[[fleets.layers]]
name = "client"
max_attempts = 1
"#;

/// The requests (in the order they started) in the order the server took them.
fn service_order(sets: &[&str]) -> Vec<u32> {
    let r = run(BURST, sets);
    let t = traced(BURST, sets, &r);
    let mut started: Vec<(u64, u32)> = t
        .spans
        .iter()
        .filter_map(|s| s.start.map(|st| (st, s.request)))
        .collect();
    started.sort();
    started.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn adaptive_lifo_serves_the_oldest_below_its_threshold_and_the_newest_from_it_on() {
    assert_eq!(service_order(&[]), [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        service_order(&[r#"dependency.discipline="lifo""#]),
        [0, 5, 4, 3, 2, 1]
    );
    // Five wait: 5, 4 and 3 waiting (≥ 3) take the newest; then 2 take the oldest.
    let alifo = r#"dependency.queue_policy={ kind = "adaptive_lifo", threshold = 3 }"#;
    assert_eq!(service_order(&[alifo]), [0, 5, 4, 3, 1, 2]);
    // A threshold above the queue is FIFO; a threshold of 1 is LIFO.
    let high = r#"dependency.queue_policy={ kind = "adaptive_lifo", threshold = 6 }"#;
    assert_eq!(service_order(&[high]), [0, 1, 2, 3, 4, 5]);
    let one = r#"dependency.queue_policy={ kind = "adaptive_lifo", threshold = 1 }"#;
    assert_eq!(service_order(&[one]), [0, 5, 4, 3, 2, 1]);
}

/// scenarios/metastable_spike.toml without its sweep (and its expectations): the
/// retrying policy, 800/s against capacity 1000/s, twice that from 20 s to 30 s.
fn spike() -> String {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/metastable_spike.toml"),
    )
    .unwrap();
    text.split("\n[sweep]").next().unwrap().to_string()
}

/// Per 1 s bucket, the logical requests that succeeded.
fn goodput(r: &RunResult) -> Vec<u64> {
    r.metrics.buckets.iter().map(|b| b.successes).collect()
}

/// Seconds from the spike's end (30 s) to the start of the first bucket whose goodput
/// is back to 90% of the healthy one (10 s to 20 s), `None` if none is by the end.
fn recovery_s(r: &RunResult) -> Option<u64> {
    let g = goodput(r);
    let healthy = g[10..20].iter().sum::<u64>() as f64 / 10.0;
    (30..90)
        .find(|&i| g[i] as f64 >= 0.9 * healthy)
        .map(|i| i as u64 - 30)
}

#[test]
fn codel_and_adaptive_lifo_recover_from_the_spike_that_leaves_fifo_metastable() {
    let text = spike();
    let fifo = run(&text, &[]);
    assert_eq!(r_bucket(&fifo), S);
    // FIFO: the storm outlives the spike; from 40 s on, not a bucket above 10% of
    // the healthy goodput.
    assert_eq!(recovery_s(&fifo), None);
    assert_eq!(fifo.summary.get("metastable"), Some(&Cell::Bool(true)));
    let g = goodput(&fifo);
    let healthy = g[10..20].iter().sum::<u64>() as f64 / 10.0;
    assert!(
        g[40..90].iter().all(|&x| (x as f64) < 0.1 * healthy),
        "{g:?}"
    );
    for (policy, within) in [
        (r#"dependency.queue_policy={ kind = "codel" }"#, 1),
        (r#"dependency.queue_policy={ kind = "codel_timeout" }"#, 1),
        (
            r#"dependency.queue_policy={ kind = "adaptive_lifo", threshold = 20 }"#,
            1,
        ),
    ] {
        let r = run(&text, &[policy]);
        // Measured: goodput is back in the bucket right after the spike (30 s to 31 s
        // at ≥ 90% of healthy), and stays there.
        let rec = recovery_s(&r);
        assert!(rec.is_some_and(|s| s <= within), "{policy}: {rec:?}");
        let g = goodput(&r);
        assert!(
            g[32..90].iter().all(|&x| x as f64 >= 0.8 * healthy),
            "{policy}: {g:?}"
        );
        assert_eq!(
            r.summary.get("metastable"),
            Some(&Cell::Bool(false)),
            "{policy}"
        );
    }
}

fn r_bucket(r: &RunResult) -> u64 {
    r.metrics.buckets[1].t - r.metrics.buckets[0].t
}

#[test]
fn a_run_with_a_queue_policy_is_the_same_bytes_for_the_same_seed() {
    let text = spike();
    for policy in [
        r#"dependency.queue_policy={ kind = "codel" }"#,
        r#"dependency.queue_policy={ kind = "adaptive_lifo", threshold = 20 }"#,
    ] {
        let a = run(&text, &[policy, "duration=\"40s\""]);
        let b = run(&text, &[policy, "duration=\"40s\""]);
        assert_eq!(a.summary, b.summary);
        let with = policy.contains("codel");
        assert_eq!(series_but_codel(&a, with), series_but_codel(&b, with));
        let rows = |r| timeseries_rows_laid(r, Some(10), &[(&CODEL_GROUP, true)]);
        assert_eq!(rows(&a), rows(&b));
    }
}

/// A graph whose back tier is overloaded (1500/s against 1000/s) has the drops in its
/// own column and in the sum; a tier without CoDel has none; with a `reject_cost` the
/// dequeuing server spends it on each drop.
#[test]
fn a_graph_tier_counts_its_own_drops_and_spends_its_reject_cost_on_them() {
    let text = r#"
duration = "10s"
bucket = "1s"
[[services]]
name = "api"
servers = 1000
service_time = "1ms"
[[services.calls]]
to = "db"
[[services.calls.layers]]
max_attempts = 1
[[services]]
name = "db"
servers = 10
service_time = { kind = "exponential", mean = "10ms" }
queue_policy = { kind = "codel" }
[[fleets]]
name = "web"
target = "api"
arrival = { kind = "constant", rate = 1500 }
[[fleets.layers]]
max_attempts = 1
"#;
    let r = run(text, &[]);
    let db = count(&r, "service_db_codel_dropped");
    assert!(db > 1_000, "{db}");
    assert_eq!(count(&r, "codel_dropped"), db);
    assert!(r.summary.get("service_api_codel_dropped").is_none());
    // A drop costing 5 ms of a server leaves less for the work: more are dropped.
    let costly = run(text, &[r#"services.1.reject_cost="5ms""#]);
    let f = crate::tests::common::col(&costly, "service_db_reject_busy_fraction");
    assert!(f > 0.1, "{f}");
    assert!(count(&costly, "service_db_codel_dropped") > db);
}
