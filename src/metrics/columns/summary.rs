//! `summary.csv`: MODEL.md §6's columns in its order, the per-layer template, the
//! extras (bookkeeping, the planner's latency, queueing and collapse columns), and the
//! per-fleet templates.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `run`.
pub(crate) const RUN: Column = id("run", "index", "global run index, in plan order");
/// `replication`.
pub(crate) const REPLICATION: Column = id(
    "replication",
    "index",
    "replication index within the grid cell",
);
/// `seed`.
pub(crate) const SEED: Column = id("seed", "seed", "the run's seed");
/// `logical`.
pub(crate) const LOGICAL: Column = count("logical", "logical requests that arrived");
/// `succeeded`.
pub(crate) const SUCCEEDED: Column = count("succeeded", "logical requests that succeeded");
/// `failed`.
pub(crate) const FAILED: Column = count("failed", "logical requests that failed");
/// `attempts`.
pub(crate) const ATTEMPTS: Column = count("attempts", "attempts sent to the dependency");
/// `amplification`.
pub(crate) const AMPLIFICATION: Column = measure(
    "amplification",
    PER_REQUEST,
    FRACTION,
    "attempts / logical requests",
);
/// `success_fraction`.
pub(crate) const SUCCESS_FRACTION: Column = measure(
    "success_fraction",
    "fraction",
    FRACTION,
    "succeeded / logical requests",
);
/// `rejected`.
pub(crate) const REJECTED: Column = count("rejected", "attempts rejected by a full queue");
/// `errors`.
pub(crate) const ERRORS: Column = count("errors", "attempts that failed with an error");
/// `timeouts`.
pub(crate) const TIMEOUTS: Column = count("timeouts", "attempts that timed out");
/// `breaker_open`.
pub(crate) const BREAKER_OPEN: Column =
    count("breaker_open", "calls failed fast by an open breaker");
/// `budget_exhausted`.
pub(crate) const BUDGET_EXHAUSTED: Column =
    count("budget_exhausted", "retries denied by a retry budget");
/// `deadline_exceeded`.
pub(crate) const DEADLINE_EXCEEDED: Column =
    count("deadline_exceeded", "requests stopped by their deadline");
/// `in_flight`.
pub(crate) const IN_FLIGHT: Column = count("in_flight", "requests still in flight at the end");
/// `duplicates`.
pub(crate) const DUPLICATES: Column =
    count("duplicates", "attempts served after their caller gave up");
/// `wasted_fraction`.
pub(crate) const WASTED_FRACTION: Column = measure(
    "wasted_fraction",
    "fraction",
    FRACTION,
    "service time spent on attempts nobody waited for",
);
/// `latency_mean_ms`.
pub(crate) const LATENCY_MEAN_MS: Column = measure(
    "latency_mean_ms",
    "ms",
    TIME,
    "mean latency of completed requests",
);
/// `latency_p50_ms`.
pub(crate) const LATENCY_P50_MS: Column = measure("latency_p50_ms", "ms", TIME, "median latency");
/// `latency_p90_ms`.
pub(crate) const LATENCY_P90_MS: Column =
    measure("latency_p90_ms", "ms", TIME, "90th percentile latency");
/// `latency_p99_ms`.
pub(crate) const LATENCY_P99_MS: Column =
    measure("latency_p99_ms", "ms", TIME, "99th percentile latency");
/// `latency_p999_ms`.
pub(crate) const LATENCY_P999_MS: Column =
    measure("latency_p999_ms", "ms", TIME, "99.9th percentile latency");
/// `peak_inbound_ratio`.
pub(crate) const PEAK_INBOUND_RATIO: Column = measure(
    "peak_inbound_ratio",
    "× capacity",
    FRACTION,
    "busiest bucket's inbound rate / capacity",
);
/// `recovery_time_s`.
pub(crate) const RECOVERY_TIME_S: Column = measure(
    "recovery_time_s",
    "s",
    TIME,
    "time from the trigger's end until success holds near baseline",
);
/// `metastable`.
pub(crate) const METASTABLE: Column =
    flag("metastable", "success never recovered after the trigger");

/// MODEL.md §6's summary columns, in its order.
pub(crate) const SUMMARY_BASE: [Column; 26] = [
    RUN,
    REPLICATION,
    SEED,
    LOGICAL,
    SUCCEEDED,
    FAILED,
    ATTEMPTS,
    AMPLIFICATION,
    SUCCESS_FRACTION,
    REJECTED,
    ERRORS,
    TIMEOUTS,
    BREAKER_OPEN,
    BUDGET_EXHAUSTED,
    DEADLINE_EXCEEDED,
    IN_FLIGHT,
    DUPLICATES,
    WASTED_FRACTION,
    LATENCY_MEAN_MS,
    LATENCY_P50_MS,
    LATENCY_P90_MS,
    LATENCY_P99_MS,
    LATENCY_P999_MS,
    PEAK_INBOUND_RATIO,
    RECOVERY_TIME_S,
    METASTABLE,
];

/// The per-layer column `attempts_layer_<i>` (one per layer depth).
pub(crate) const LAYER_COLUMN: Column = measure(
    "attempts_layer_",
    "calls per logical request",
    FRACTION,
    "calls made by layer i (into the layer below, or at the dependency) / logical requests",
);

/// `conflicts`.
pub(crate) const CONFLICTS: Column = count("conflicts", "writes that conflicted");
/// `write_calls`.
pub(crate) const WRITE_CALLS: Column = count("write_calls", "write calls");
/// `completion_time_s`.
pub(crate) const COMPLETION_TIME_S: Column =
    measure("completion_time_s", "s", TIME, "time of the last success");
/// `served`.
pub(crate) const SERVED: Column = count("served", "attempts the dependency served");
/// `shed`.
pub(crate) const SHED: Column = count("shed", "queued attempts dropped once expired");
/// `duplicate_applies`.
pub(crate) const DUPLICATE_APPLIES: Column =
    count("duplicate_applies", "writes applied more than once");
/// `breaker_trips`.
pub(crate) const BREAKER_TRIPS: Column = count("breaker_trips", "times a breaker opened");
/// `baseline_success`.
pub(crate) const BASELINE_SUCCESS: Column = measure(
    "baseline_success",
    "fraction",
    FRACTION,
    "success fraction before the trigger",
);
/// `peak_inbound`.
pub(crate) const PEAK_INBOUND: Column = measure(
    "peak_inbound",
    "attempts/s",
    AMOUNT,
    "busiest bucket's inbound rate",
);
/// `herd_peak`.
pub(crate) const HERD_PEAK: Column = count("herd_peak", "busiest fine bucket's inbound attempts")
    .with_unit("attempts per fine bucket");
/// `last_completion_s`.
pub(crate) const LAST_COMPLETION_S: Column = measure(
    "last_completion_s",
    "s",
    TIME,
    "time of the last completion",
);
/// `offered_rate`.
pub(crate) const OFFERED_RATE: Column = not_compared(measure(
    "offered_rate",
    "requests/s",
    AMOUNT,
    "offered load (an input, not an outcome)",
));
/// `events`.
pub(crate) const EVENTS: Column =
    not_compared(count("events", "engine events processed (bookkeeping)"));
/// `truncated`.
pub(crate) const TRUNCATED: Column =
    not_compared(flag("truncated", "the run stopped early at a limit"));

/// `success_latency_mean_ms`.
pub(crate) const SUCCESS_LATENCY_MEAN_MS: Column = measure(
    "success_latency_mean_ms",
    "ms",
    TIME,
    "mean latency of successes, logical arrival to successful answer",
);
/// `success_latency_p50_ms`.
pub(crate) const SUCCESS_LATENCY_P50_MS: Column = measure(
    "success_latency_p50_ms",
    "ms",
    TIME,
    "median latency of successes",
);
/// `success_latency_p90_ms`.
pub(crate) const SUCCESS_LATENCY_P90_MS: Column = measure(
    "success_latency_p90_ms",
    "ms",
    TIME,
    "90th percentile latency of successes",
);
/// `success_latency_p99_ms`.
pub(crate) const SUCCESS_LATENCY_P99_MS: Column = measure(
    "success_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile latency of successes",
);
/// `success_latency_p999_ms`.
pub(crate) const SUCCESS_LATENCY_P999_MS: Column = measure(
    "success_latency_p999_ms",
    "ms",
    TIME,
    "99.9th percentile latency of successes",
);
/// `failure_latency_mean_ms`.
pub(crate) const FAILURE_LATENCY_MEAN_MS: Column = measure(
    "failure_latency_mean_ms",
    "ms",
    TIME,
    "mean time to failure, logical arrival to the final failure",
);
/// `failure_latency_p50_ms`.
pub(crate) const FAILURE_LATENCY_P50_MS: Column = measure(
    "failure_latency_p50_ms",
    "ms",
    TIME,
    "median time to failure",
);
/// `failure_latency_p99_ms`.
pub(crate) const FAILURE_LATENCY_P99_MS: Column = measure(
    "failure_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile time to failure",
);
/// `admitted`.
pub(crate) const ADMITTED: Column = count(
    "admitted",
    "attempts the dependency admitted, to a free server or its queue",
);
/// `waited`.
pub(crate) const WAITED: Column = count(
    "waited",
    "admitted attempts that found every server busy and queued",
);
/// `blocked`.
pub(crate) const BLOCKED: Column = count(
    "blocked",
    "attempts the dependency's full queue refused at arrival",
);
/// `wait_mean_ms`.
pub(crate) const WAIT_MEAN_MS: Column = measure(
    "wait_mean_ms",
    "ms",
    TIME,
    "mean time an attempt waited in the queue for a server (over attempts that reached one)",
);
/// `wait_p99_ms`.
pub(crate) const WAIT_P99_MS: Column = measure(
    "wait_p99_ms",
    "ms",
    TIME,
    "99th percentile of that wait (0 when most found a free server)",
);
/// `p_wait`.
pub(crate) const P_WAIT: Column = measure(
    "p_wait",
    "fraction",
    FRACTION,
    "waited / admitted: the fraction of admitted attempts that had to queue",
);
/// `blocking_fraction`.
pub(crate) const BLOCKING_FRACTION: Column = measure(
    "blocking_fraction",
    "fraction",
    FRACTION,
    "blocked / attempts: attempts refused at arrival over attempts arriving",
);
/// `carried_rate`.
pub(crate) const CARRIED_RATE: Column = measure(
    "carried_rate",
    "attempts/s",
    AMOUNT,
    "attempts served per second over [0, duration)",
);
/// `in_system_mean`.
pub(crate) const IN_SYSTEM_MEAN: Column = measure(
    "in_system_mean",
    "attempts",
    FRACTION,
    "time-weighted mean of attempts queued or in service over [0, duration) (Little's L)",
);
/// `collapsed_fraction`.
pub(crate) const COLLAPSED_FRACTION: Column = measure(
    "collapsed_fraction",
    "fraction",
    FRACTION,
    "fraction of the time from the first trigger to the end in which goodput < 50% of offered",
);
/// `collapse_start_s`.
pub(crate) const COLLAPSE_START_S: Column = measure(
    "collapse_start_s",
    "s",
    TIME,
    "start of the first bucket after the trigger with goodput < 50% of offered",
);
/// `recovery_queue_s`.
pub(crate) const RECOVERY_QUEUE_S: Column = measure(
    "recovery_queue_s",
    "s",
    TIME,
    "time from the trigger's end until the queue stays below servers × attempt timeout / mean service for recovery_hold buckets",
);

/// Summary columns after the per-layer ones.
pub(crate) const SUMMARY_EXTRA: [Column; 34] = [
    CONFLICTS,
    WRITE_CALLS,
    COMPLETION_TIME_S,
    SERVED,
    SHED,
    DUPLICATE_APPLIES,
    BREAKER_TRIPS,
    BASELINE_SUCCESS,
    PEAK_INBOUND,
    HERD_PEAK,
    LAST_COMPLETION_S,
    OFFERED_RATE,
    EVENTS,
    TRUNCATED,
    SUCCESS_LATENCY_MEAN_MS,
    SUCCESS_LATENCY_P50_MS,
    SUCCESS_LATENCY_P90_MS,
    SUCCESS_LATENCY_P99_MS,
    SUCCESS_LATENCY_P999_MS,
    FAILURE_LATENCY_MEAN_MS,
    FAILURE_LATENCY_P50_MS,
    FAILURE_LATENCY_P99_MS,
    ADMITTED,
    WAITED,
    BLOCKED,
    WAIT_MEAN_MS,
    WAIT_P99_MS,
    P_WAIT,
    BLOCKING_FRACTION,
    CARRIED_RATE,
    IN_SYSTEM_MEAN,
    COLLAPSED_FRACTION,
    COLLAPSE_START_S,
    RECOVERY_QUEUE_S,
];

/// `logical`.
pub(crate) const FLEET_LOGICAL: Column = count("logical", "the fleet's logical requests");
/// `success_fraction`.
pub(crate) const FLEET_SUCCESS_FRACTION: Column = measure(
    "success_fraction",
    "fraction",
    FRACTION,
    "the fleet's succeeded / logical",
);
/// `amplification`.
pub(crate) const FLEET_AMPLIFICATION: Column = measure(
    "amplification",
    PER_REQUEST,
    FRACTION,
    "the fleet's attempts / logical",
);
/// `failed`.
pub(crate) const FLEET_FAILED: Column = count("failed", "the fleet's failed logical requests");

/// Per-fleet summary columns `fleet_<name>_<column>`, when there are several fleets.
pub(crate) const FLEET_COLUMNS: [Column; 4] = [
    FLEET_LOGICAL,
    FLEET_SUCCESS_FRACTION,
    FLEET_AMPLIFICATION,
    FLEET_FAILED,
];

/// The per-fleet columns, `fleet_<name>_<column>` for each fleet of a scenario with
/// several.
pub(crate) const FLEET_GROUP: Group = Group {
    name: "fleets",
    instances: Instances::Named {
        prefix: "fleet_",
        names: fleet_names,
    },
    summary: &FLEET_COLUMNS,
    cells: fleet_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "only when a scenario has several fleets",
};

fn fleet_names(scn: &Scenario) -> Vec<String> {
    if scn.fleets.len() > 1 {
        scn.fleets.iter().map(|f| f.name.clone()).collect()
    } else {
        Vec::new()
    }
}

/// A fleet the run's scenario lacks counts 0 requests.
fn fleet_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let ft = scn
        .fleets
        .iter()
        .position(|f| f.name == name)
        .and_then(|i| m.totals.fleets.get(i));
    let (l, s, a, f) = ft.map_or((0, 0, 0, 0), |x| {
        (x.logical, x.succeeded, x.attempts, x.failed)
    });
    out.extend([
        Cell::Int(l),
        Cell::ratio(s as f64, l as f64),
        Cell::ratio(a as f64, l as f64),
        Cell::Int(f),
    ]);
}
