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

/// Text as a spreadsheet shows it and never evaluates it: a cell that starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's rule
/// against formula injection).
///
/// ```
/// use retrysim::export::csv::spreadsheet_safe;
/// assert_eq!(spreadsheet_safe("=2+5".into()), "'=2+5");
/// assert_eq!(spreadsheet_safe("@SUM(1)".into()), "'@SUM(1)");
/// assert_eq!(spreadsheet_safe("exponential".into()), "exponential");
/// ```
pub fn spreadsheet_safe(text: String) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text
    }
}

/// One summary row laid out on `columns` (missing columns are empty).
pub fn summary_row(s: &Summary, columns: &[String]) -> String {
    record(
        columns
            .iter()
            .map(|c| s.get(c).map_or(String::new(), Cell::render)),
    )
}

/// The time-series rows of a run. Rates and time-weighted means are normalised by each
/// bucket's real width: a partial last bucket `[t, duration)` by `duration - t`.
pub fn timeseries_rows(r: &RunResult, dependency_servers: Option<u32>) -> String {
    let m = &r.metrics;
    let mut out = String::new();
    let outage = outage_per_bucket(r);
    for (i, (b, &outage_ns)) in m.buckets.iter().zip(&outage).enumerate() {
        let width = m.width(b);
        let bs = to_secs(width);
        let bns = width as f64;
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

/// Outage time (ns, summed over windows) in each bucket, within the bucket's real width.
/// Each window visits only the buckets it overlaps, so a run with many windows and many
/// buckets stays linear.
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
                .min(t.saturating_add(m.width(&m.buckets[i])))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summary::Layout;
    use crate::run::run_one;
    use crate::scenario::{load, Source};

    /// 2.5 s of constant arrivals at 10/s (at 0, 0.1, ..., 2.4 s) in 1 s buckets, each
    /// served for 300 ms at once (10 servers): the last bucket is [2, 2.5), and the
    /// completions at 2.5, 2.6 and 2.7 s are drain.
    const PARTIAL: &str = r#"
name = "partial"
duration = "2.5s"
bucket = "1s"

[dependency]
servers = 10
queue_limit = "unlimited"
service_time = { kind = "deterministic", value = "300ms" }

[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 10 }

[[outages]]
start = "2s"
end = "3s"
mode = { kind = "slow", factor = 1 }
"#;

    fn run(text: &str) -> RunResult {
        let src = Source {
            path: "partial.toml".into(),
            stem: "partial".into(),
            text: text.into(),
        };
        let l = load(src, &[]).expect("scenario loads");
        run_one(&l.scenario, &Layout::of(&l.scenario), 0, 0)
    }

    fn rows(r: &RunResult) -> Vec<Vec<String>> {
        timeseries_rows(r, Some(10))
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    }

    fn col(name: &str) -> usize {
        TIMESERIES_COLUMNS.iter().position(|c| *c == name).unwrap()
    }

    #[test]
    fn a_partial_last_bucket_is_normalised_by_its_real_width() {
        let r = run(PARTIAL);
        let rows = rows(&r);
        assert_eq!(rows.len(), 3);
        let last = &rows[2];
        assert_eq!(last[col("t")], "2");
        // 5 arrivals in half a second: 10 per second, not 5.
        assert_eq!(last[col("offered")], "10");
        assert_eq!(last[col("inbound")], "10");
        // Completions at 2.0 ... 2.4 s only; those at 2.5 s and later are drain.
        assert_eq!(last[col("completions")], "5");
        assert_eq!(last[col("served")], "10");
        assert_eq!(last[col("goodput")], "10");
        // 3 of 10 servers busy all through [2, 2.5): the drain's tail is not in it.
        assert_eq!(last[col("utilisation")], "0.3");
        // The outage [2, 3) covers all of the last bucket's real width.
        assert_eq!(last[col("outage")], "1");
        // The summary still counts the drain.
        assert_eq!(r.summary.get("logical"), Some(&Cell::Int(25)));
        assert_eq!(r.summary.get("succeeded"), Some(&Cell::Int(25)));
        assert_eq!(r.summary.get("served"), Some(&Cell::Int(25)));
    }

    #[test]
    fn a_partial_last_bucket_sets_the_peak_by_its_rate() {
        // Twice the rate from 2 s: 10 arrivals in [2, 2.5) = 20/s, the busiest bucket
        // (capacity 10 / 0.3 s = 33.3/s).
        let text = PARTIAL.replace(
            "rate = 10 }",
            "rate = 10 }\nload_profile = [{ at = \"2s\", multiplier = 2 }]",
        );
        let r = run(&text);
        assert_eq!(rows(&r)[2][col("inbound")], "20");
        let peak = r.summary.get("peak_inbound").and_then(Cell::as_f64);
        assert_eq!(peak, Some(20.0));
        let ratio = r.summary.get("peak_inbound_ratio").and_then(Cell::as_f64);
        assert!((ratio.unwrap() - 0.6).abs() < 1e-9, "{ratio:?}");
    }
}
