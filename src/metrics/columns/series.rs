//! `timeseries.csv` (one row per run and bucket) and `herd.csv` (one row per run and
//! fine bucket).

use super::*;

const fn series(name: &'static str, unit: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit,
        kind: Kind::Measure,
        compared: false,
        floor: AMOUNT,
        description,
    }
}

const fn series_count(name: &'static str, description: &'static str) -> Column {
    Column {
        kind: Kind::Count,
        ..series(name, "count", description)
    }
}

/// `t`.
pub(crate) const TS_T: Column = series("t", "s", "bucket start");
/// `offered`.
pub(crate) const TS_OFFERED: Column = series("offered", "requests/s", "logical arrivals");
/// `inbound`.
pub(crate) const TS_INBOUND: Column = series(
    "inbound",
    "attempts/s",
    "attempts arriving at the dependency",
);
/// `served`.
pub(crate) const TS_SERVED: Column = series("served", "attempts/s", "attempts served");
/// `goodput`.
pub(crate) const TS_GOODPUT: Column = series("goodput", "requests/s", "logical successes");
/// `success_rate`.
pub(crate) const TS_SUCCESS_RATE: Column = series(
    "success_rate",
    "fraction",
    "logical successes / completions",
);
/// `amplification`.
pub(crate) const TS_AMPLIFICATION: Column =
    series("amplification", PER_REQUEST, "inbound / offered");
/// `queue_mean`.
pub(crate) const TS_QUEUE_MEAN: Column =
    series("queue_mean", "attempts", "time-weighted mean queue length");
/// `queue_max`.
pub(crate) const TS_QUEUE_MAX: Column = series_count("queue_max", "longest queue");
/// `utilisation`.
pub(crate) const TS_UTILISATION: Column =
    series("utilisation", "fraction", "busy servers / servers");
/// `wasted`.
pub(crate) const TS_WASTED: Column =
    series("wasted", "s", "service time spent on abandoned attempts");
/// `breaker_open_fraction`.
pub(crate) const TS_BREAKER_OPEN_FRACTION: Column = series(
    "breaker_open_fraction",
    "fraction",
    "mean fraction of breaker instances open",
);
/// `budget_level`.
pub(crate) const TS_BUDGET_LEVEL: Column = series("budget_level", "tokens", "retry budget level");
/// `completions`.
pub(crate) const TS_COMPLETIONS: Column = series_count("completions", "logical completions");
/// `rejected`.
pub(crate) const TS_REJECTED: Column = series_count("rejected", "attempts rejected");
/// `errors`.
pub(crate) const TS_ERRORS: Column = series_count("errors", "attempts failed with an error");
/// `timeouts`.
pub(crate) const TS_TIMEOUTS: Column = series_count("timeouts", "attempts timed out");
/// `breaker_open`.
pub(crate) const TS_BREAKER_OPEN: Column =
    series_count("breaker_open", "calls failed by an open breaker");
/// `budget_exhausted`.
pub(crate) const TS_BUDGET_EXHAUSTED: Column =
    series_count("budget_exhausted", "retries denied by a budget");
/// `deadline_exceeded`.
pub(crate) const TS_DEADLINE_EXCEEDED: Column =
    series_count("deadline_exceeded", "requests stopped by their deadline");
/// `latency_p50_ms`.
pub(crate) const TS_LATENCY_P50_MS: Column = series(
    "latency_p50_ms",
    "ms",
    "median latency of the bucket's completions",
);
/// `latency_p99_ms`.
pub(crate) const TS_LATENCY_P99_MS: Column =
    series("latency_p99_ms", "ms", "99th percentile latency");
/// `outage`.
pub(crate) const TS_OUTAGE: Column = series(
    "outage",
    "fraction",
    "fraction of the bucket inside an outage",
);

/// `success_latency_p50_ms`.
pub(crate) const TS_SUCCESS_LATENCY_P50_MS: Column = series(
    "success_latency_p50_ms",
    "ms",
    "median latency of the bucket's successes",
);
/// `success_latency_p99_ms`.
pub(crate) const TS_SUCCESS_LATENCY_P99_MS: Column = series(
    "success_latency_p99_ms",
    "ms",
    "99th percentile latency of the bucket's successes",
);
/// `failure_latency_p50_ms`.
pub(crate) const TS_FAILURE_LATENCY_P50_MS: Column = series(
    "failure_latency_p50_ms",
    "ms",
    "median time to failure of the bucket's failed requests",
);
/// `wait_mean_ms`.
pub(crate) const TS_WAIT_MEAN_MS: Column = series(
    "wait_mean_ms",
    "ms",
    "mean queueing wait of attempts that reached a server in the bucket",
);
/// `p_wait`.
pub(crate) const TS_P_WAIT: Column = series(
    "p_wait",
    "fraction",
    "fraction of the bucket's admitted attempts that queued",
);
/// `blocking_fraction`.
pub(crate) const TS_BLOCKING_FRACTION: Column = series(
    "blocking_fraction",
    "fraction",
    "fraction of the bucket's arriving attempts refused by a full queue",
);
/// `in_system_mean`.
pub(crate) const TS_IN_SYSTEM_MEAN: Column = series(
    "in_system_mean",
    "attempts",
    "time-weighted mean of attempts queued or in service",
);

/// Columns of `timeseries.csv`, one row per run and bucket.
pub(crate) const TIMESERIES: [Column; 32] = [
    RUN,
    REPLICATION,
    TS_T,
    TS_OFFERED,
    TS_INBOUND,
    TS_SERVED,
    TS_GOODPUT,
    TS_SUCCESS_RATE,
    TS_AMPLIFICATION,
    TS_QUEUE_MEAN,
    TS_QUEUE_MAX,
    TS_UTILISATION,
    TS_WASTED,
    TS_BREAKER_OPEN_FRACTION,
    TS_BUDGET_LEVEL,
    TS_COMPLETIONS,
    TS_REJECTED,
    TS_ERRORS,
    TS_TIMEOUTS,
    TS_BREAKER_OPEN,
    TS_BUDGET_EXHAUSTED,
    TS_DEADLINE_EXCEEDED,
    TS_LATENCY_P50_MS,
    TS_LATENCY_P99_MS,
    TS_OUTAGE,
    TS_SUCCESS_LATENCY_P50_MS,
    TS_SUCCESS_LATENCY_P99_MS,
    TS_FAILURE_LATENCY_P50_MS,
    TS_WAIT_MEAN_MS,
    TS_P_WAIT,
    TS_BLOCKING_FRACTION,
    TS_IN_SYSTEM_MEAN,
];

/// `t`.
pub(crate) const HERD_T: Column = series("t", "s", "fine bucket start");
/// `inbound`.
pub(crate) const HERD_INBOUND: Column = Column {
    kind: Kind::Count,
    ..series(
        "inbound",
        "attempts per fine bucket",
        "attempts arriving in the fine bucket",
    )
};

/// Columns of `herd.csv`, one row per run and fine bucket.
pub(crate) const HERD: [Column; 4] = [RUN, REPLICATION, HERD_T, HERD_INBOUND];

/// Header of `timeseries.csv`.
pub(crate) const TIMESERIES_COLUMNS: [&str; 32] = names(&TIMESERIES);

/// Header of `herd.csv`.
pub(crate) const HERD_COLUMNS: [&str; 4] = names(&HERD);
