//! The output schema: every column of `summary.csv`, `timeseries.csv` and `herd.csv`,
//! with its unit, its kind and how `retrysim check` compares it.
//!
//! This catalog is the one place that names a column. The writers lay their rows out
//! on it ([`crate::metrics::summary::Layout::columns`], [`TIMESERIES_COLUMNS`]), the
//! aggregate and the checks pick metrics by [`Kind`] and [`Column::compared`], the
//! baseline's drift uses [`Column::floor`], and the charts label axes with
//! [`Column::unit`]. Templated summary columns (`attempts_layer_<i>`,
//! `fleet_<name>_<k>`) are looked up by [`summary_column`].

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Which run a row is (`run`, `replication`, `seed`): not a metric.
    Identity,
    /// A whole number of things.
    Count,
    /// A measured quantity (a rate, a time, a fraction).
    Measure,
    /// `true` / `false` (a mean of it is a fraction of runs).
    Flag,
}

/// One column of an output table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The header name (for a template, the part after its prefix: see
    /// [`LAYER_COLUMN`], [`FLEET_COLUMNS`]).
    pub name: &'static str,
    /// The unit, as axis labels show it.
    pub unit: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether `retrysim check --baseline` compares it by default (otherwise only when
    /// `[check.tolerance]` names it).
    pub compared: bool,
    /// The absolute floor under `|old|` in the baseline's relative drift.
    pub floor: f64,
    /// One line of what it is.
    pub description: &'static str,
}

/// Floors of the drift (see [`crate::check::baseline`]).
const FRACTION: f64 = 0.01;
const TIME: f64 = 1.0;
const AMOUNT: f64 = 10.0;

const fn id(name: &'static str, unit: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit,
        kind: Kind::Identity,
        compared: false,
        floor: AMOUNT,
        description,
    }
}

const fn count(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit: "count",
        kind: Kind::Count,
        compared: true,
        floor: AMOUNT,
        description,
    }
}

const fn measure(
    name: &'static str,
    unit: &'static str,
    floor: f64,
    description: &'static str,
) -> Column {
    Column {
        name,
        unit,
        kind: Kind::Measure,
        compared: true,
        floor,
        description,
    }
}

const fn flag(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit: "fraction of runs",
        kind: Kind::Flag,
        compared: true,
        floor: FRACTION,
        description,
    }
}

/// The same column, written to a baseline but compared only when named.
const fn not_compared(c: Column) -> Column {
    Column {
        compared: false,
        ..c
    }
}

/// Units shared by several columns.
const PER_REQUEST: &str = "attempts per logical request";

/// `run`.
pub const RUN: Column = id("run", "index", "global run index, in plan order");
/// `replication`.
pub const REPLICATION: Column = id(
    "replication",
    "index",
    "replication index within the grid cell",
);
/// `seed`.
pub const SEED: Column = id("seed", "seed", "the run's seed");
/// `logical`.
pub const LOGICAL: Column = count("logical", "logical requests that arrived");
/// `succeeded`.
pub const SUCCEEDED: Column = count("succeeded", "logical requests that succeeded");
/// `failed`.
pub const FAILED: Column = count("failed", "logical requests that failed");
/// `attempts`.
pub const ATTEMPTS: Column = count("attempts", "attempts sent to the dependency");
/// `amplification`.
pub const AMPLIFICATION: Column = measure(
    "amplification",
    PER_REQUEST,
    FRACTION,
    "attempts / logical requests",
);
/// `success_fraction`.
pub const SUCCESS_FRACTION: Column = measure(
    "success_fraction",
    "fraction",
    FRACTION,
    "succeeded / logical requests",
);
/// `rejected`.
pub const REJECTED: Column = count("rejected", "attempts rejected by a full queue");
/// `errors`.
pub const ERRORS: Column = count("errors", "attempts that failed with an error");
/// `timeouts`.
pub const TIMEOUTS: Column = count("timeouts", "attempts that timed out");
/// `breaker_open`.
pub const BREAKER_OPEN: Column = count("breaker_open", "calls failed fast by an open breaker");
/// `budget_exhausted`.
pub const BUDGET_EXHAUSTED: Column = count("budget_exhausted", "retries denied by a retry budget");
/// `deadline_exceeded`.
pub const DEADLINE_EXCEEDED: Column =
    count("deadline_exceeded", "requests stopped by their deadline");
/// `in_flight`.
pub const IN_FLIGHT: Column = count("in_flight", "requests still in flight at the end");
/// `duplicates`.
pub const DUPLICATES: Column = count("duplicates", "attempts served after their caller gave up");
/// `wasted_fraction`.
pub const WASTED_FRACTION: Column = measure(
    "wasted_fraction",
    "fraction",
    FRACTION,
    "service time spent on attempts nobody waited for",
);
/// `latency_mean_ms`.
pub const LATENCY_MEAN_MS: Column = measure(
    "latency_mean_ms",
    "ms",
    TIME,
    "mean latency of completed requests",
);
/// `latency_p50_ms`.
pub const LATENCY_P50_MS: Column = measure("latency_p50_ms", "ms", TIME, "median latency");
/// `latency_p90_ms`.
pub const LATENCY_P90_MS: Column = measure("latency_p90_ms", "ms", TIME, "90th percentile latency");
/// `latency_p99_ms`.
pub const LATENCY_P99_MS: Column = measure("latency_p99_ms", "ms", TIME, "99th percentile latency");
/// `latency_p999_ms`.
pub const LATENCY_P999_MS: Column =
    measure("latency_p999_ms", "ms", TIME, "99.9th percentile latency");
/// `peak_inbound_ratio`.
pub const PEAK_INBOUND_RATIO: Column = measure(
    "peak_inbound_ratio",
    "× capacity",
    FRACTION,
    "busiest bucket's inbound rate / capacity",
);
/// `recovery_time_s`.
pub const RECOVERY_TIME_S: Column = measure(
    "recovery_time_s",
    "s",
    TIME,
    "time from the trigger's end until success holds near baseline",
);
/// `metastable`.
pub const METASTABLE: Column = flag("metastable", "success never recovered after the trigger");

/// MODEL.md §6's summary columns, in its order.
pub const SUMMARY_BASE: [Column; 26] = [
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
pub const LAYER_COLUMN: Column = measure(
    "attempts_layer_",
    "calls per logical request",
    FRACTION,
    "calls into layer i / logical requests",
);

/// `conflicts`.
pub const CONFLICTS: Column = count("conflicts", "writes that conflicted");
/// `write_calls`.
pub const WRITE_CALLS: Column = count("write_calls", "write calls");
/// `completion_time_s`.
pub const COMPLETION_TIME_S: Column =
    measure("completion_time_s", "s", TIME, "time of the last success");
/// `served`.
pub const SERVED: Column = count("served", "attempts the dependency served");
/// `shed`.
pub const SHED: Column = count("shed", "queued attempts dropped once expired");
/// `duplicate_applies`.
pub const DUPLICATE_APPLIES: Column = count("duplicate_applies", "writes applied more than once");
/// `breaker_trips`.
pub const BREAKER_TRIPS: Column = count("breaker_trips", "times a breaker opened");
/// `baseline_success`.
pub const BASELINE_SUCCESS: Column = measure(
    "baseline_success",
    "fraction",
    FRACTION,
    "success fraction before the trigger",
);
/// `peak_inbound`.
pub const PEAK_INBOUND: Column = measure(
    "peak_inbound",
    "attempts/s",
    AMOUNT,
    "busiest bucket's inbound rate",
);
/// `herd_peak`.
pub const HERD_PEAK: Column = count("herd_peak", "busiest fine bucket's inbound attempts")
    .with_unit("attempts per fine bucket");
/// `last_completion_s`.
pub const LAST_COMPLETION_S: Column = measure(
    "last_completion_s",
    "s",
    TIME,
    "time of the last completion",
);
/// `offered_rate`.
pub const OFFERED_RATE: Column = not_compared(measure(
    "offered_rate",
    "requests/s",
    AMOUNT,
    "offered load (an input, not an outcome)",
));
/// `events`.
pub const EVENTS: Column = not_compared(count("events", "engine events processed (bookkeeping)"));
/// `truncated`.
pub const TRUNCATED: Column = not_compared(flag("truncated", "the run stopped early at a limit"));

/// `success_latency_mean_ms`.
pub const SUCCESS_LATENCY_MEAN_MS: Column = measure(
    "success_latency_mean_ms",
    "ms",
    TIME,
    "mean latency of successes, logical arrival to successful answer",
);
/// `success_latency_p50_ms`.
pub const SUCCESS_LATENCY_P50_MS: Column = measure(
    "success_latency_p50_ms",
    "ms",
    TIME,
    "median latency of successes",
);
/// `success_latency_p90_ms`.
pub const SUCCESS_LATENCY_P90_MS: Column = measure(
    "success_latency_p90_ms",
    "ms",
    TIME,
    "90th percentile latency of successes",
);
/// `success_latency_p99_ms`.
pub const SUCCESS_LATENCY_P99_MS: Column = measure(
    "success_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile latency of successes",
);
/// `success_latency_p999_ms`.
pub const SUCCESS_LATENCY_P999_MS: Column = measure(
    "success_latency_p999_ms",
    "ms",
    TIME,
    "99.9th percentile latency of successes",
);
/// `failure_latency_mean_ms`.
pub const FAILURE_LATENCY_MEAN_MS: Column = measure(
    "failure_latency_mean_ms",
    "ms",
    TIME,
    "mean time to failure, logical arrival to the final failure",
);
/// `failure_latency_p50_ms`.
pub const FAILURE_LATENCY_P50_MS: Column = measure(
    "failure_latency_p50_ms",
    "ms",
    TIME,
    "median time to failure",
);
/// `failure_latency_p99_ms`.
pub const FAILURE_LATENCY_P99_MS: Column = measure(
    "failure_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile time to failure",
);
/// `admitted`.
pub const ADMITTED: Column = count(
    "admitted",
    "attempts the dependency admitted, to a free server or its queue",
);
/// `waited`.
pub const WAITED: Column = count(
    "waited",
    "admitted attempts that found every server busy and queued",
);
/// `blocked`.
pub const BLOCKED: Column = count(
    "blocked",
    "attempts the dependency's full queue refused at arrival",
);
/// `wait_mean_ms`.
pub const WAIT_MEAN_MS: Column = measure(
    "wait_mean_ms",
    "ms",
    TIME,
    "mean time an attempt waited in the queue for a server (over attempts that reached one)",
);
/// `wait_p99_ms`.
pub const WAIT_P99_MS: Column = measure(
    "wait_p99_ms",
    "ms",
    TIME,
    "99th percentile of that wait (0 when most found a free server)",
);
/// `p_wait`.
pub const P_WAIT: Column = measure(
    "p_wait",
    "fraction",
    FRACTION,
    "waited / admitted: the fraction of admitted attempts that had to queue",
);
/// `blocking_fraction`.
pub const BLOCKING_FRACTION: Column = measure(
    "blocking_fraction",
    "fraction",
    FRACTION,
    "blocked / attempts: attempts refused at arrival over attempts arriving",
);
/// `carried_rate`.
pub const CARRIED_RATE: Column = measure(
    "carried_rate",
    "attempts/s",
    AMOUNT,
    "attempts served per second over [0, duration)",
);
/// `in_system_mean`.
pub const IN_SYSTEM_MEAN: Column = measure(
    "in_system_mean",
    "attempts",
    FRACTION,
    "time-weighted mean of attempts queued or in service over [0, duration) (Little's L)",
);
/// `collapsed_fraction`.
pub const COLLAPSED_FRACTION: Column = measure(
    "collapsed_fraction",
    "fraction",
    FRACTION,
    "fraction of the time from the first trigger to the end in which goodput < 50% of offered",
);
/// `collapse_start_s`.
pub const COLLAPSE_START_S: Column = measure(
    "collapse_start_s",
    "s",
    TIME,
    "start of the first bucket after the trigger with goodput < 50% of offered",
);
/// `recovery_queue_s`.
pub const RECOVERY_QUEUE_S: Column = measure(
    "recovery_queue_s",
    "s",
    TIME,
    "time from the trigger's end until the queue stays below servers × attempt timeout / mean service for recovery_hold buckets",
);

/// Summary columns after the per-layer ones.
pub const SUMMARY_EXTRA: [Column; 34] = [
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
pub const FLEET_LOGICAL: Column = count("logical", "the fleet's logical requests");
/// `success_fraction`.
pub const FLEET_SUCCESS_FRACTION: Column = measure(
    "success_fraction",
    "fraction",
    FRACTION,
    "the fleet's succeeded / logical",
);
/// `amplification`.
pub const FLEET_AMPLIFICATION: Column = measure(
    "amplification",
    PER_REQUEST,
    FRACTION,
    "the fleet's attempts / logical",
);
/// `failed`.
pub const FLEET_FAILED: Column = count("failed", "the fleet's failed logical requests");

/// Per-fleet summary columns `fleet_<name>_<column>`, when there are several fleets.
pub const FLEET_COLUMNS: [Column; 4] = [
    FLEET_LOGICAL,
    FLEET_SUCCESS_FRACTION,
    FLEET_AMPLIFICATION,
    FLEET_FAILED,
];

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
pub const TS_T: Column = series("t", "s", "bucket start");
/// `offered`.
pub const TS_OFFERED: Column = series("offered", "requests/s", "logical arrivals");
/// `inbound`.
pub const TS_INBOUND: Column = series(
    "inbound",
    "attempts/s",
    "attempts arriving at the dependency",
);
/// `served`.
pub const TS_SERVED: Column = series("served", "attempts/s", "attempts served");
/// `goodput`.
pub const TS_GOODPUT: Column = series("goodput", "requests/s", "logical successes");
/// `success_rate`.
pub const TS_SUCCESS_RATE: Column = series(
    "success_rate",
    "fraction",
    "logical successes / completions",
);
/// `amplification`.
pub const TS_AMPLIFICATION: Column = series("amplification", PER_REQUEST, "inbound / offered");
/// `queue_mean`.
pub const TS_QUEUE_MEAN: Column =
    series("queue_mean", "attempts", "time-weighted mean queue length");
/// `queue_max`.
pub const TS_QUEUE_MAX: Column = series_count("queue_max", "longest queue");
/// `utilisation`.
pub const TS_UTILISATION: Column = series("utilisation", "fraction", "busy servers / servers");
/// `wasted`.
pub const TS_WASTED: Column = series("wasted", "s", "service time spent on abandoned attempts");
/// `breaker_open_fraction`.
pub const TS_BREAKER_OPEN_FRACTION: Column = series(
    "breaker_open_fraction",
    "fraction",
    "mean fraction of breaker instances open",
);
/// `budget_level`.
pub const TS_BUDGET_LEVEL: Column = series("budget_level", "tokens", "retry budget level");
/// `completions`.
pub const TS_COMPLETIONS: Column = series_count("completions", "logical completions");
/// `rejected`.
pub const TS_REJECTED: Column = series_count("rejected", "attempts rejected");
/// `errors`.
pub const TS_ERRORS: Column = series_count("errors", "attempts failed with an error");
/// `timeouts`.
pub const TS_TIMEOUTS: Column = series_count("timeouts", "attempts timed out");
/// `breaker_open`.
pub const TS_BREAKER_OPEN: Column = series_count("breaker_open", "calls failed by an open breaker");
/// `budget_exhausted`.
pub const TS_BUDGET_EXHAUSTED: Column =
    series_count("budget_exhausted", "retries denied by a budget");
/// `deadline_exceeded`.
pub const TS_DEADLINE_EXCEEDED: Column =
    series_count("deadline_exceeded", "requests stopped by their deadline");
/// `latency_p50_ms`.
pub const TS_LATENCY_P50_MS: Column = series(
    "latency_p50_ms",
    "ms",
    "median latency of the bucket's completions",
);
/// `latency_p99_ms`.
pub const TS_LATENCY_P99_MS: Column = series("latency_p99_ms", "ms", "99th percentile latency");
/// `outage`.
pub const TS_OUTAGE: Column = series(
    "outage",
    "fraction",
    "fraction of the bucket inside an outage",
);

/// `success_latency_p50_ms`.
pub const TS_SUCCESS_LATENCY_P50_MS: Column = series(
    "success_latency_p50_ms",
    "ms",
    "median latency of the bucket's successes",
);
/// `success_latency_p99_ms`.
pub const TS_SUCCESS_LATENCY_P99_MS: Column = series(
    "success_latency_p99_ms",
    "ms",
    "99th percentile latency of the bucket's successes",
);
/// `failure_latency_p50_ms`.
pub const TS_FAILURE_LATENCY_P50_MS: Column = series(
    "failure_latency_p50_ms",
    "ms",
    "median time to failure of the bucket's failed requests",
);
/// `wait_mean_ms`.
pub const TS_WAIT_MEAN_MS: Column = series(
    "wait_mean_ms",
    "ms",
    "mean queueing wait of attempts that reached a server in the bucket",
);
/// `p_wait`.
pub const TS_P_WAIT: Column = series(
    "p_wait",
    "fraction",
    "fraction of the bucket's admitted attempts that queued",
);
/// `blocking_fraction`.
pub const TS_BLOCKING_FRACTION: Column = series(
    "blocking_fraction",
    "fraction",
    "fraction of the bucket's arriving attempts refused by a full queue",
);
/// `in_system_mean`.
pub const TS_IN_SYSTEM_MEAN: Column = series(
    "in_system_mean",
    "attempts",
    "time-weighted mean of attempts queued or in service",
);

/// Columns of `timeseries.csv`, one row per run and bucket.
pub const TIMESERIES: [Column; 32] = [
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
pub const HERD_T: Column = series("t", "s", "fine bucket start");
/// `inbound`.
pub const HERD_INBOUND: Column = Column {
    kind: Kind::Count,
    ..series(
        "inbound",
        "attempts per fine bucket",
        "attempts arriving in the fine bucket",
    )
};

/// Columns of `herd.csv`, one row per run and fine bucket.
pub const HERD: [Column; 4] = [RUN, REPLICATION, HERD_T, HERD_INBOUND];

impl Column {
    /// The same column with another unit.
    const fn with_unit(self, unit: &'static str) -> Column {
        Column { unit, ..self }
    }

    /// Whether the column is a metric (aggregated, checked, charted).
    pub fn is_metric(&self) -> bool {
        self.kind != Kind::Identity
    }
}

/// The names of `columns`, in order.
pub const fn names<const N: usize>(columns: &[Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = columns[i].name;
        i += 1;
    }
    out
}

/// Header of `timeseries.csv`.
pub const TIMESERIES_COLUMNS: [&str; 32] = names(&TIMESERIES);

/// Header of `herd.csv`.
pub const HERD_COLUMNS: [&str; 4] = names(&HERD);

/// The prefix of a swept parameter's summary column (`param_<dotted key>`).
pub const PARAM_PREFIX: &str = "param_";

/// The summary column `name`: a fixed column, `attempts_layer_<i>` or
/// `fleet_<name>_<column>`. `None` for a `param_` column or an unknown name.
///
/// ```
/// use retrysim::metrics::columns::summary_column;
/// assert_eq!(summary_column("latency_p99_ms").unwrap().unit, "ms");
/// assert_eq!(summary_column("attempts_layer_2").unwrap().floor, 0.01);
/// assert_eq!(summary_column("fleet_web_failed").unwrap().name, "failed");
/// assert!(summary_column("param_x").is_none());
/// ```
pub fn summary_column(name: &str) -> Option<&'static Column> {
    if let Some(c) = SUMMARY_BASE
        .iter()
        .chain(&SUMMARY_EXTRA)
        .find(|c| c.name == name)
    {
        return Some(c);
    }
    if let Some(i) = name.strip_prefix(LAYER_COLUMN.name) {
        if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) {
            return Some(&LAYER_COLUMN);
        }
    }
    let rest = name.strip_prefix("fleet_")?;
    FLEET_COLUMNS.iter().find(|c| {
        rest.strip_suffix(c.name)
            .is_some_and(|f| f.len() > 1 && f.ends_with('_'))
    })
}

/// The name of the per-layer column of depth `i`.
pub fn layer_column(i: usize) -> String {
    format!("{}{i}", LAYER_COLUMN.name)
}

/// The name of fleet `fleet`'s column `c` (one of [`FLEET_COLUMNS`]).
pub fn fleet_column(fleet: &str, c: &Column) -> String {
    format!("fleet_{fleet}_{}", c.name)
}

/// Whether summary column `name` is a metric: not the run's identity, not a swept
/// parameter.
///
/// ```
/// use retrysim::metrics::columns::is_metric;
/// assert!(is_metric("amplification"));
/// assert!(!is_metric("seed"));
/// assert!(!is_metric("param_fleets.0.arrival.rate"));
/// ```
pub fn is_metric(name: &str) -> bool {
    !name.starts_with(PARAM_PREFIX) && summary_column(name).is_none_or(Column::is_metric)
}

/// Whether summary column `name` identifies a run (`run`, `replication`, `seed`).
pub fn is_identity(name: &str) -> bool {
    summary_column(name).is_some_and(|c| c.kind == Kind::Identity)
}

/// The unit of a summary metric, for axis labels (`count` for a name not in the
/// catalog).
pub fn unit(name: &str) -> &'static str {
    summary_column(name).map_or("count", |c| c.unit)
}

/// Summary columns shown first wherever a few stand for a run (the report's cell
/// table).
pub const HEADLINE: [&str; 6] = [
    SUCCESS_FRACTION.name,
    AMPLIFICATION.name,
    SUCCESS_LATENCY_P99_MS.name,
    PEAK_INBOUND_RATIO.name,
    RECOVERY_TIME_S.name,
    METASTABLE.name,
];

/// The first column of `aggregate.csv` and of a baseline: the grid cell's index.
pub const CELL: &str = "cell";

/// The column of `aggregate.csv` after the parameters: replications aggregated.
pub const RUNS: &str = "runs";

/// Suffixes of `aggregate.csv`'s three columns per metric: the mean and its 95% interval.
pub const MEAN_SUFFIX: &str = "_mean";
/// See [`MEAN_SUFFIX`].
pub const CI_LOW_SUFFIX: &str = "_ci_low";
/// See [`MEAN_SUFFIX`].
pub const CI_HIGH_SUFFIX: &str = "_ci_high";

/// `aggregate.csv`'s columns of metric `m`: mean, interval low, interval high.
pub fn aggregate_columns(m: &str) -> [String; 3] {
    [
        format!("{m}{MEAN_SUFFIX}"),
        format!("{m}{CI_LOW_SUFFIX}"),
        format!("{m}{CI_HIGH_SUFFIX}"),
    ]
}

/// The summary column of swept key `key`.
pub fn param_column(key: &str) -> String {
    format!("{PARAM_PREFIX}{key}")
}

impl Kind {
    /// The kind as the dictionary writes it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Identity => "identity",
            Kind::Count => "count",
            Kind::Measure => "measure",
            Kind::Flag => "flag",
        }
    }
}

/// One row of the column dictionary: a column of one output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file (`summary.csv`, `timeseries.csv`, `herd.csv`).
    pub file: &'static str,
    /// The header name, or its template (`attempts_layer_<i>`) without a scenario.
    pub column: String,
    /// The unit.
    pub unit: &'static str,
    /// What it holds ([`Kind::name`]).
    pub kind: &'static str,
    /// One line of what it is.
    pub description: String,
}

/// The header of the dictionary as `retrysim columns` prints it.
pub const DICTIONARY_HEADER: [&str; 5] = ["file", "column", "unit", "kind", "description"];

/// Every column of `summary.csv`, `timeseries.csv` and `herd.csv`, in file order: for
/// a scenario's layout (its layers and fleets by name), or with the templated columns
/// written as templates (`attempts_layer_<i>`, `fleet_<name>_logical`) when `None`.
///
/// ```
/// use retrysim::metrics::columns::dictionary;
/// let d = dictionary(None);
/// assert!(d.iter().any(|e| e.file == "summary.csv" && e.column == "attempts_layer_<i>"));
/// assert!(d.iter().all(|e| !e.unit.is_empty() && !e.description.is_empty()));
/// ```
pub fn dictionary(layout: Option<&crate::metrics::summary::Layout>) -> Vec<Entry> {
    let entry = |file: &'static str, column: String, c: &Column| Entry {
        file,
        column,
        unit: c.unit,
        kind: c.kind.name(),
        description: c.description.to_string(),
    };
    let mut out: Vec<Entry> = SUMMARY_BASE
        .iter()
        .map(|c| entry("summary.csv", c.name.to_string(), c))
        .collect();
    match layout {
        Some(l) => out.extend((0..l.max_layers).map(|i| {
            let mut e = entry("summary.csv", layer_column(i), &LAYER_COLUMN);
            e.description = format!("{} (layer {i}, 0 = the top)", LAYER_COLUMN.description);
            e
        })),
        None => out.push(entry(
            "summary.csv",
            format!("{}<i>", LAYER_COLUMN.name),
            &LAYER_COLUMN,
        )),
    }
    out.extend(
        SUMMARY_EXTRA
            .iter()
            .map(|c| entry("summary.csv", c.name.to_string(), c)),
    );
    let fleets: Vec<String> = match layout {
        Some(l) => l.fleets.clone(),
        None => vec!["<name>".to_string()],
    };
    for f in &fleets {
        for c in &FLEET_COLUMNS {
            let mut e = entry("summary.csv", fleet_column(f, c), c);
            if layout.is_none() {
                e.description = format!(
                    "{} (only when a scenario has several fleets)",
                    e.description
                );
            }
            out.push(e);
        }
    }
    out.extend(
        TIMESERIES
            .iter()
            .map(|c| entry("timeseries.csv", c.name.to_string(), c)),
    );
    out.extend(
        HERD.iter()
            .map(|c| entry("herd.csv", c.name.to_string(), c)),
    );
    out.extend(
        ATTEMPTS_BY_ORDINAL
            .iter()
            .map(|c| entry("attempts_by_ordinal.csv", c.name.to_string(), c)),
    );
    out
}

// Intervals of `aggregate.csv`, and the columns of `aggregate_long.csv`.

use super::interval::{Domain, Method};

/// Fractions whose counts are summary columns, `(metric, numerator, denominator)`:
/// `aggregate.csv` pools their counts over a cell's runs (one line adds a pair).
pub const POOLED_FRACTIONS: [(&str, &str, &str); 2] = [
    (SUCCESS_FRACTION.name, SUCCEEDED.name, LOGICAL.name),
    ("blocking_fraction", "blocked", ATTEMPTS.name),
];

/// The `(numerator, denominator)` columns of pooled fraction `metric`, when `has` says
/// the row has both.
pub fn pooled_counts(
    metric: &str,
    has: impl Fn(&str) -> bool,
) -> Option<(&'static str, &'static str)> {
    POOLED_FRACTIONS
        .iter()
        .find(|(m, a, b)| *m == metric && has(a) && has(b))
        .map(|&(_, a, b)| (a, b))
}

/// The 95% interval `aggregate.csv` gives summary metric `metric` in a row whose
/// columns `has` tells: Wilson on the pooled counts of a [`POOLED_FRACTIONS`] entry
/// (its mean is the pooled ratio), Wilson over the runs for a flag, else Student t
/// clipped to `[0, 1]` for a fraction and at 0 for the rest.
///
/// ```
/// use retrysim::metrics::columns::interval_method;
/// use retrysim::metrics::interval::{Domain, Method};
/// let all = |_: &str| true;
/// assert_eq!(interval_method("success_fraction", all), Method::WilsonPooled);
/// assert_eq!(interval_method("metastable", all), Method::WilsonRuns);
/// assert_eq!(interval_method("wasted_fraction", all), Method::StudentT(Domain::Fraction));
/// // Without its counts in the row, a fraction falls back to the clipped t.
/// assert_eq!(interval_method("success_fraction", |c: &str| c != "logical"),
///            Method::StudentT(Domain::Fraction));
/// assert_eq!(interval_method("latency_p99_ms", all).name(), "student t, clipped at 0");
/// ```
pub fn interval_method(metric: &str, has: impl Fn(&str) -> bool) -> Method {
    if pooled_counts(metric, has).is_some() {
        return Method::WilsonPooled;
    }
    match summary_column(metric) {
        Some(c) if c.kind == Kind::Flag => Method::WilsonRuns,
        Some(c) if c.unit == "fraction" => Method::StudentT(Domain::Fraction),
        _ => Method::StudentT(Domain::NonNegative),
    }
}

/// One line saying which interval `metric` gets, for the dictionary's aggregate
/// columns (`has` as in [`interval_method`]).
///
/// ```
/// use retrysim::metrics::columns::interval_note;
/// assert_eq!(interval_note("success_fraction", |_: &str| true),
///            "95% interval: wilson pooled counts (Σsucceeded / Σlogical over the cell's runs)");
/// ```
pub fn interval_note(metric: &str, has: impl Fn(&str) -> bool) -> String {
    match pooled_counts(metric, &has) {
        Some((a, b)) => format!(
            "95% interval: {} (Σ{a} / Σ{b} over the cell's runs)",
            Method::WilsonPooled.name()
        ),
        None => format!("95% interval: {}", interval_method(metric, has).name()),
    }
}

/// `aggregate_long.csv`: one row per grid cell and summary metric.
pub const AGGREGATE_LONG: [Column; 6] = [
    id(CELL, "index", "grid cell index, as in aggregate.csv"),
    id("metric", "name", "the summary column aggregated"),
    not_compared(count(
        "n",
        "values behind the interval: runs with a value, or for wilson pooled counts the pooled denominator (Σlogical for success_fraction)",
    ))
    .with_unit("runs, or trials when pooled"),
    not_compared(measure(
        "mean",
        "the metric's unit",
        FRACTION,
        "mean over the cell's runs; for wilson pooled counts Σnumerator / Σdenominator",
    )),
    not_compared(measure(
        "ci_low",
        "the metric's unit",
        FRACTION,
        "95% interval low (the method: wilson or student t, inside the metric's domain)",
    )),
    not_compared(measure(
        "ci_high",
        "the metric's unit",
        FRACTION,
        "95% interval high (the method: wilson or student t, inside the metric's domain)",
    )),
];

/// Header of `aggregate_long.csv`.
pub const AGGREGATE_LONG_COLUMNS: [&str; 6] = names(&AGGREGATE_LONG);

// `attempts_by_ordinal.csv`: outcomes by attempt ordinal (see `metrics::ordinal`).

/// `layer` of `attempts_by_ordinal.csv`.
pub const ORDINAL_LAYER: Column = id(
    "layer",
    "depth",
    "layer depth, 0 = the outermost (the i of attempts_layer_<i>)",
);
/// `ordinal`.
pub const ORDINAL: Column = id(
    "ordinal",
    "attempt number",
    "which attempt of a layer call: 1 = its first, 2 = its first retry, ...; each is a call one level down (or at the dependency below the innermost layer)",
);
/// `outcome`.
pub const ORDINAL_OUTCOME: Column = id(
    "outcome",
    "outcome name",
    "how the attempt ended as its layer call saw it: an outcome class (the answer from below, its timer, or a refusal before it left: breaker_open, budget_exhausted for a retry denied by the budget or an attempt refused by a limiter, deadline_exceeded for one the deadline or total_timeout left no time to send), cancelled (the call above cancelled the call), or in_flight (still out when the run ended)",
);
/// `count`.
pub const ORDINAL_COUNT: Column = count(
    "count",
    "attempts of this layer and ordinal that ended so (only rows above 0)",
);

/// Columns of `attempts_by_ordinal.csv`, one row per run, layer, ordinal and outcome.
pub const ATTEMPTS_BY_ORDINAL: [Column; 5] =
    [RUN, ORDINAL_LAYER, ORDINAL, ORDINAL_OUTCOME, ORDINAL_COUNT];

/// Header of `attempts_by_ordinal.csv`.
pub const ATTEMPTS_BY_ORDINAL_COLUMNS: [&str; 5] = names(&ATTEMPTS_BY_ORDINAL);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_table() {
        let summary: Vec<&str> = SUMMARY_BASE
            .iter()
            .chain(&SUMMARY_EXTRA)
            .map(|c| c.name)
            .collect();
        for t in [&summary[..], &TIMESERIES_COLUMNS[..], &HERD_COLUMNS[..]] {
            let mut sorted = t.to_vec();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), t.len(), "{t:?}");
        }
        assert!(HEADLINE.iter().all(|h| summary_column(h).is_some()));
    }

    #[test]
    fn templates_resolve_and_identity_is_not_a_metric() {
        assert_eq!(
            summary_column("fleet_a_b_success_fraction").unwrap().name,
            "success_fraction"
        );
        assert!(summary_column("fleet__logical").is_none());
        assert!(summary_column("attempts_layer_").is_none());
        for c in ["run", "replication", "seed"] {
            assert!(is_identity(c) && !is_metric(c), "{c}");
        }
        assert!(is_metric("some_future_column"));
    }
}
