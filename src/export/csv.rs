//! CSV rendering of summaries, time series and herd series.
//!
//! Rows are rendered per run into strings, so files can be assembled from runs in plan
//! order whatever order they finished in (and shards can be merged byte for byte).

use crate::engine::time::{to_millis, to_secs};
use crate::metrics::summary::{Cell, Summary};
use crate::run::RunResult;

/// Columns of `timeseries.csv`.
pub const TIMESERIES_COLUMNS: [&str; 25] = [
    "run",
    "replication",
    "t",
    "offered",
    "inbound",
    "served",
    "goodput",
    "success_rate",
    "amplification",
    "queue_mean",
    "queue_max",
    "utilisation",
    "wasted",
    "breaker_open_fraction",
    "budget_level",
    "completions",
    "rejected",
    "errors",
    "timeouts",
    "breaker_open",
    "budget_exhausted",
    "deadline_exceeded",
    "latency_p50_ms",
    "latency_p99_ms",
    "outage",
];

/// Columns of `herd.csv`.
pub const HERD_COLUMNS: [&str; 4] = ["run", "replication", "t", "inbound"];

/// Renders one CSV record and a newline (RFC 4180 quoting: a field holding a comma,
/// quote or line break is quoted, its quotes doubled).
///
/// ```
/// use retrysim::export::csv::record;
/// assert_eq!(record(["a", "b,c", "say \"hi\""]), "a,\"b,c\",\"say \"\"hi\"\"\"\n");
/// ```
pub fn record<I, S>(fields: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let f = f.as_ref();
        if f.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push('\n');
    out
}

/// The header line of `summary.csv`.
pub fn summary_header(columns: &[String]) -> String {
    record(columns)
}

/// One summary row laid out on `columns` (missing columns are empty).
pub fn summary_row(s: &Summary, columns: &[String]) -> String {
    record(
        columns
            .iter()
            .map(|c| s.get(c).map_or(String::new(), Cell::render)),
    )
}

/// The time-series rows of a run.
pub fn timeseries_rows(r: &RunResult, dependency_servers: Option<u32>) -> String {
    let m = &r.metrics;
    let bs = to_secs(m.bucket);
    let bns = m.bucket as f64;
    let mut out = String::new();
    let outage = outage_per_bucket(r);
    for (i, (b, &outage_ns)) in m.buckets.iter().zip(&outage).enumerate() {
        let per_s = |x: u64| Cell::float(x as f64 / bs);
        let cells = [
            Cell::Int(r.run),
            Cell::Int(u64::from(r.replication)),
            Cell::float(to_secs(b.t)),
            per_s(b.offered),
            per_s(b.inbound),
            per_s(b.served),
            per_s(b.successes),
            Cell::ratio(b.successes as f64, b.completions as f64),
            Cell::ratio(b.inbound as f64, b.offered as f64),
            Cell::float(b.queue_area as f64 / bns),
            Cell::Int(b.queue_max),
            match dependency_servers {
                Some(s) => Cell::float(b.busy_area as f64 / bns / f64::from(s)),
                None => Cell::Empty,
            },
            Cell::float(b.wasted_ns as f64 / 1e9),
            if r.breaker_instances == 0 {
                Cell::Empty
            } else {
                Cell::float(b.breaker_area as f64 / bns / r.breaker_instances as f64)
            },
            b.budget_level.map_or(Cell::Empty, Cell::float),
            Cell::Int(b.completions),
            Cell::Int(b.outcomes[1]),
            Cell::Int(b.outcomes[2]),
            Cell::Int(b.outcomes[3]),
            Cell::Int(b.outcomes[4]),
            Cell::Int(b.outcomes[5]),
            Cell::Int(b.outcomes[6]),
            b.latency_p50
                .map_or(Cell::Empty, |v| Cell::float(to_millis(v))),
            b.latency_p99
                .map_or(Cell::Empty, |v| Cell::float(to_millis(v))),
            Cell::float((outage_ns as f64 / bns).min(1.0)),
        ];
        let row = record(cells.iter().map(Cell::render));
        if i == 0 {
            // Sized from the first row (plus a margin), so a long run's text is not
            // grown by doubling: this string is most of the memory that grows with
            // the horizon.
            out.reserve(row.len() * m.buckets.len() * 9 / 8);
        }
        out.push_str(&row);
    }
    out
}

/// Outage time (ns, summed over windows) in each bucket. Each window visits only the
/// buckets it overlaps, so a run with many windows and many buckets stays linear.
fn outage_per_bucket(r: &RunResult) -> Vec<u64> {
    let m = &r.metrics;
    let mut ns = vec![0u64; m.buckets.len()];
    for w in &r.windows {
        let first = w.start / m.bucket;
        let last = w.end.saturating_sub(1) / m.bucket;
        if w.end <= w.start || first >= ns.len() as u64 {
            continue;
        }
        for i in first as usize..=(last as usize).min(ns.len() - 1) {
            let t = m.buckets[i].t;
            let overlap = w
                .end
                .min(t.saturating_add(m.bucket))
                .saturating_sub(w.start.max(t));
            ns[i] = ns[i].saturating_add(overlap);
        }
    }
    ns
}

/// The herd rows of a run (fine-bucket inbound counts).
pub fn herd_rows(r: &RunResult) -> String {
    let mut out = String::new();
    if let Some((start, width, counts)) = &r.metrics.herd {
        for (i, c) in counts.iter().enumerate() {
            let t = start + i as u64 * width;
            out.push_str(&record([
                r.run.to_string(),
                r.replication.to_string(),
                Cell::float(to_secs(t)).render(),
                c.to_string(),
            ]));
        }
    }
    out
}
