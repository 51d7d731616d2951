//! The summary row of one run: MODEL.md §6's columns, in order, then extras.
//!
//! A summary is an ordered list of named cells, so CSV export, expectations and
//! aggregation all read columns by name.

use crate::engine::time::{to_millis, to_secs};
use crate::model::config::Scenario;
use crate::model::outage::Window;
use crate::model::outcome::Class;

use super::collapse;
use super::columns::{
    group_index, layer_column, Group, GroupFile, GROUPS, SUMMARY_BASE, SUMMARY_EXTRA,
};
use super::recorder::RunMetrics;
use super::recovery;

/// The queue length the servers clear within one attempt timeout: `servers ×
/// attempt_timeout / mean service time`, with the shortest attempt timeout of the
/// layers that call the dependency. `None` without servers, timeouts or service time.
fn backlog_threshold(scn: &Scenario) -> Option<f64> {
    let servers = f64::from(scn.dependency.servers?);
    let timeout = scn
        .fleets
        .iter()
        .filter_map(|f| f.layers.last()?.attempt_timeout)
        .min()?;
    let service = scn.dependency.service_time.mean_ns();
    (service > 0.0).then(|| servers * timeout as f64 / service)
}

/// One value of a summary or time-series row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A count.
    Int(u64),
    /// A measurement.
    Float(f64),
    /// A flag.
    Bool(bool),
    /// Text.
    Text(String),
    /// No value (written as an empty field).
    Empty,
}

impl Cell {
    /// The value as a number, if it is one (flags count as 0/1).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Float(v) => Some(*v),
            Cell::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Cell::Text(t) => t.parse().ok(),
            Cell::Empty => None,
        }
    }

    /// `Float(x)` when `x` is finite, else `Empty`.
    pub fn float(x: f64) -> Cell {
        if x.is_finite() {
            Cell::Float(x)
        } else {
            Cell::Empty
        }
    }

    /// The `q`-quantile of a histogram in µs, in ms (`Empty` when it is empty).
    pub fn quantile_ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> Cell {
        if h.is_empty() {
            Cell::Empty
        } else {
            Cell::float(h.value_at_quantile(q) as f64 / 1000.0)
        }
    }

    /// `num / den`, or `Empty` when `den` is 0.
    pub fn ratio(num: f64, den: f64) -> Cell {
        if den == 0.0 {
            Cell::Empty
        } else {
            Cell::float(num / den)
        }
    }

    /// The text written to CSV.
    pub fn render(&self) -> String {
        match self {
            Cell::Int(v) => v.to_string(),
            Cell::Float(v) => format_float(*v),
            Cell::Bool(b) => b.to_string(),
            Cell::Text(t) => t.clone(),
            Cell::Empty => String::new(),
        }
    }
}

/// The CSV float format ([`shortest`](super::format::shortest)), by its older name.
pub(crate) use super::format::shortest as format_float;

/// Columns every run shares: which layer depths to report, and which optional column
/// groups ([`GROUPS`]) with which instances.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Deepest layer stack over all fleets (and all cells of a sweep).
    pub max_layers: usize,
    /// Per group of [`GROUPS`], in its order, the instances written (see
    /// [`Group::instances_of`]): fleet or service names, `[""]` for a group written
    /// once, none when no scenario (no cell of a sweep) uses it.
    pub groups: Vec<Vec<String>>,
}

impl Layout {
    /// The layout of one scenario.
    pub fn of(scn: &Scenario) -> Layout {
        Layout {
            max_layers: scn.fleets.iter().map(|f| f.layers.len()).max().unwrap_or(0),
            groups: GROUPS.iter().map(|g| g.instances_of(scn)).collect(),
        }
    }

    /// The union of two layouts (for a sweep over cells).
    pub fn merge(&mut self, other: &Layout) {
        self.max_layers = self.max_layers.max(other.max_layers);
        for (mine, theirs) in self.groups.iter_mut().zip(&other.groups) {
            for name in theirs {
                if !mine.contains(name) {
                    mine.push(name.clone());
                }
            }
        }
    }

    /// Whether the columns of group `g` are written.
    pub fn uses(&self, g: &Group) -> bool {
        self.groups
            .get(group_index(g))
            .is_some_and(|names| !names.is_empty())
    }

    /// The groups written, in [`GROUPS`] order, with their instances.
    pub fn used_groups(&self) -> impl Iterator<Item = (&'static Group, &[String])> {
        GROUPS
            .iter()
            .zip(&self.groups)
            .filter(|(_, names)| !names.is_empty())
            .map(|(g, names)| (*g, names.as_slice()))
    }

    /// The columns of results file `name` the used groups write, in order (none
    /// when no group used writes it).
    pub fn file_groups(&self, name: &str) -> Vec<&'static GroupFile> {
        self.used_groups()
            .filter_map(|(g, _)| g.file.as_ref())
            .filter(|f| f.name == name)
            .collect()
    }

    /// The groups written that have `timeseries.csv` columns, in order, each with
    /// whether `scn` (a run's scenario) uses it.
    pub fn series_groups(&self, scn: &Scenario) -> Vec<(&'static Group, bool)> {
        self.used_groups()
            .filter(|(g, _)| !g.series.is_empty())
            .map(|(g, _)| (g, g.used_by(scn)))
            .collect()
    }

    /// The column names, in order.
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<String> = SUMMARY_BASE.iter().map(|c| c.name.to_string()).collect();
        c.extend((0..self.max_layers).map(layer_column));
        c.extend(SUMMARY_EXTRA.iter().map(|c| c.name.to_string()));
        for (g, names) in self.used_groups() {
            for name in names {
                c.extend(g.summary.iter().map(|k| g.column(name, k)));
            }
        }
        c
    }
}

/// Without outages, the trigger of a storm can be a load spike: the span from the first
/// time any open fleet's load profile rises above its base rate to the last time it
/// comes back down, when that is inside the arrival window.
fn load_trigger(scn: &Scenario) -> Option<(crate::engine::Nanos, crate::engine::Nanos)> {
    let spans: Vec<_> = scn
        .fleets
        .iter()
        .filter_map(|f| f.load_profile.as_ref()?.excursion())
        .collect();
    let start = spans.iter().map(|s| s.0).min()?;
    let end = spans.iter().map(|s| s.1).max()?;
    (start < scn.duration && end <= scn.duration).then_some((start, end))
}

/// A summary row.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Named cells, in column order.
    pub cells: Vec<(String, Cell)>,
}

impl Summary {
    /// The cell of column `name`.
    pub fn get(&self, name: &str) -> Option<&Cell> {
        self.cells.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Adds a column at the end.
    pub fn push(&mut self, name: impl Into<String>, cell: Cell) {
        self.cells.push((name.into(), cell));
    }

    /// Builds the summary of a finished run.
    pub fn build(
        m: &RunMetrics,
        scn: &Scenario,
        windows: &[Window],
        layout: &Layout,
        run: u64,
        replication: u32,
        seed: u64,
    ) -> Summary {
        let t = &m.totals;
        let logical = t.logical as f64;
        let o = |c: Class| Cell::Int(t.outcomes[c as usize]);
        let q = |p: f64| Cell::quantile_ms(&m.latency, p);
        let completed = t.succeeded + t.failed;
        let samples = recovery::samples(&m.buckets);
        let span = windows
            .iter()
            .filter(|w| w.start < scn.duration)
            .fold(None, |acc, w| {
                Some(match acc {
                    None => (w.start, w.end),
                    Some((s, e)) => (std::cmp::min(s, w.start), std::cmp::max(e, w.end)),
                })
            })
            .or_else(|| load_trigger(scn));
        let rec = recovery::analyse(
            &samples,
            m.bucket,
            scn.warmup,
            span,
            scn.recovery_tolerance,
            scn.recovery_hold,
        );
        // The busiest bucket's inbound rate, each bucket over its real width (a partial
        // last bucket is narrower).
        let peak = m
            .buckets
            .iter()
            .map(|b| b.inbound as f64 / to_secs(m.width(b)))
            .fold(0.0, f64::max);
        let peak_ratio = match scn.dependency.capacity() {
            Some(cap) => Cell::ratio(peak, cap),
            None => Cell::Empty,
        };
        let offered_rate: f64 = scn
            .fleets
            .iter()
            .filter_map(|f| f.offered_rate(scn.duration))
            .sum();
        let base: [Cell; SUMMARY_BASE.len()] = [
            Cell::Int(run),                    // run
            Cell::Int(u64::from(replication)), // replication
            Cell::Int(seed),                   // seed
            Cell::Int(t.logical),              // logical
            Cell::Int(t.succeeded),            // succeeded
            Cell::Int(t.failed),               // failed
            Cell::Int(t.attempts),             // attempts
            // amplification
            Cell::ratio(t.attempts as f64, logical),
            // success_fraction
            Cell::ratio(t.succeeded as f64, logical),
            o(Class::Rejected),         // rejected
            o(Class::Error),            // errors
            o(Class::Timeout),          // timeouts
            o(Class::BreakerOpen),      // breaker_open
            o(Class::BudgetExhausted),  // budget_exhausted
            o(Class::DeadlineExceeded), // deadline_exceeded
            Cell::Int(m.in_flight),     // in_flight
            Cell::Int(t.duplicates),    // duplicates
            // wasted_fraction
            if t.service_ns == 0 {
                Cell::Float(0.0)
            } else {
                Cell::ratio(t.wasted_ns as f64, t.service_ns as f64)
            },
            // latency_mean_ms
            Cell::ratio(
                to_millis(0) + t.latency_sum_ns as f64 / 1e6,
                completed as f64,
            ),
            q(0.5),     // latency_p50_ms
            q(0.9),     // latency_p90_ms
            q(0.99),    // latency_p99_ms
            q(0.999),   // latency_p999_ms
            peak_ratio, // peak_inbound_ratio
            // recovery_time_s
            rec.recovery_time_s.map_or(Cell::Empty, Cell::Float),
            Cell::Bool(rec.metastable), // metastable
        ];
        let mut cells: Vec<(String, Cell)> = SUMMARY_BASE
            .iter()
            .map(|c| c.name.to_string())
            .zip(base)
            .collect();
        for i in 0..layout.max_layers {
            let calls = t.layer_calls.get(i).copied().unwrap_or(0);
            cells.push((layer_column(i), Cell::ratio(calls as f64, logical)));
        }
        let (collapsed_fraction, collapse_start) = match span {
            Some((start, _)) => collapse::collapse(&m.buckets, m.bucket, start, |b| m.width(b)),
            None => (None, None),
        };
        let recovery_queue = span.zip(backlog_threshold(scn)).and_then(|((_, end), th)| {
            collapse::queue_recovery(&m.buckets, m.bucket, end, th, scn.recovery_hold)
        });
        let series_s = to_secs(m.duration);
        let served_in_series: u64 = m.buckets.iter().map(|b| b.served).sum();
        let in_system: u128 = m.buckets.iter().map(|b| b.queue_area + b.busy_area).sum();
        let opt = |x: Option<f64>| x.map_or(Cell::Empty, Cell::float);
        let herd_peak = m.herd.as_ref().map_or(Cell::Empty, |(_, _, c)| {
            Cell::Int(c.iter().copied().max().unwrap_or(0))
        });
        let extra: [Cell; SUMMARY_EXTRA.len()] = [
            o(Class::Conflict),
            Cell::Int(t.write_calls),
            t.last_success
                .map_or(Cell::Empty, |at| Cell::float(to_secs(at))),
            Cell::Int(t.served),
            Cell::Int(t.shed),
            Cell::Int(t.duplicate_applies),
            Cell::Int(t.breaker_trips),
            rec.baseline.map_or(Cell::Empty, Cell::float),
            Cell::float(peak),
            herd_peak,
            if completed == 0 {
                Cell::Empty
            } else {
                Cell::float(to_secs(t.last_completion))
            },
            Cell::float(offered_rate),
            Cell::Int(t.events),
            Cell::Bool(t.truncated.is_some()),
            // success_latency_mean_ms .. _p999_ms
            Cell::ratio(t.success_latency_sum_ns as f64 / 1e6, t.succeeded as f64),
            Cell::quantile_ms(&m.success_latency, 0.5),
            Cell::quantile_ms(&m.success_latency, 0.9),
            Cell::quantile_ms(&m.success_latency, 0.99),
            Cell::quantile_ms(&m.success_latency, 0.999),
            // failure_latency_mean_ms, _p50_ms, _p99_ms
            Cell::ratio(t.failure_latency_sum_ns as f64 / 1e6, t.failed as f64),
            Cell::quantile_ms(&m.failure_latency, 0.5),
            Cell::quantile_ms(&m.failure_latency, 0.99),
            Cell::Int(t.admitted),
            Cell::Int(t.waited),
            Cell::Int(t.blocked),
            // wait_mean_ms, wait_p99_ms
            Cell::ratio(t.wait_ns as f64 / 1e6, t.started as f64),
            Cell::quantile_ms(&m.wait, 0.99),
            Cell::ratio(t.waited as f64, t.admitted as f64), // p_wait
            Cell::ratio(t.blocked as f64, t.attempts as f64), // blocking_fraction
            Cell::ratio(served_in_series as f64, series_s),  // carried_rate
            // in_system_mean
            Cell::ratio(in_system as f64, m.duration as f64),
            opt(collapsed_fraction),
            opt(collapse_start),
            opt(recovery_queue),
        ];
        cells.extend(SUMMARY_EXTRA.iter().map(|c| c.name.to_string()).zip(extra));
        let mut values = Vec::new();
        for (g, names) in layout.used_groups() {
            for name in names {
                g.summary_cells(m, scn, name, &mut values);
                cells.extend(
                    g.summary
                        .iter()
                        .map(|c| g.column(name, c))
                        .zip(values.drain(..)),
                );
            }
        }
        Summary { cells }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::csv::{timeseries_header, timeseries_rows_laid};
    use crate::metrics::columns::{dictionary, HEDGE_GROUP, POOL_GROUP, TS_POOL_IN_USE};
    use crate::run::run_one;
    use crate::scenario::{load, Source};

    const PLAIN: &str = "duration = \"2s\"\n[dependency]\nservers = 4\nservice_time = \"1ms\"\n\
        [[fleets]]\nname = \"web\"\narrival = { kind = \"constant\", rate = 10 }\n\
        [[fleets.layers]]\nmax_attempts = 2\n";

    /// Two fleets, the second with a pool and a hedging layer.
    const GUARDED: &str = "duration = \"2s\"\n[dependency]\nservers = 4\nservice_time = \"1ms\"\n\
        [[fleets]]\nname = \"web\"\narrival = { kind = \"constant\", rate = 10 }\n\
        [[fleets.layers]]\nmax_attempts = 2\n\
        [[fleets]]\nname = \"api\"\narrival = { kind = \"constant\", rate = 10 }\n\
        pool = { size = 2, acquire_timeout = \"10ms\" }\n\
        [[fleets.layers]]\nmax_attempts = 1\n\
        hedging = { max_attempts = 2, delay = \"1ms\", non_fatal = [] }\n\
        [[fleets.layers]]\nmax_attempts = 1\n";

    fn scenario(text: &str) -> Scenario {
        let src = Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text: text.into(),
        };
        load(src, &[]).expect("scenario loads").scenario
    }

    #[test]
    fn a_group_is_written_only_when_used_and_empty_in_a_cell_without_it() {
        let (plain, guarded) = (scenario(PLAIN), scenario(GUARDED));
        let alone = Layout::of(&plain);
        assert!(alone.groups.iter().all(Vec::is_empty));
        assert!(!alone.columns().iter().any(|c| c == "hedges"));
        let mut sweep = alone.clone();
        sweep.merge(&Layout::of(&guarded));
        assert!(sweep.uses(&HEDGE_GROUP) && sweep.uses(&POOL_GROUP));
        let header = sweep.columns();
        let tail: Vec<&str> = header[header.len() - 14..]
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(
            tail,
            [
                "fleet_web_logical",
                "fleet_web_success_fraction",
                "fleet_web_amplification",
                "fleet_web_failed",
                "fleet_api_logical",
                "fleet_api_success_fraction",
                "fleet_api_amplification",
                "fleet_api_failed",
                "pool_exhausted",
                "pool_wait_mean_ms",
                "pool_wait_p99_ms",
                "hedges",
                "hedge_wins",
                "hedge_losers",
            ]
        );
        // The cell without them: empty hedging and pool cells; its missing fleet counts 0.
        let r = run_one(&plain, &sweep, 0, 0);
        let names: Vec<&str> = r.summary.cells.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, header);
        for c in ["hedges", "pool_exhausted", "pool_wait_p99_ms"] {
            assert_eq!(r.summary.get(c), Some(&Cell::Empty), "{c}");
        }
        assert_eq!(r.summary.get("fleet_api_logical"), Some(&Cell::Int(0)));
        assert_eq!(r.summary.get("fleet_web_logical"), Some(&Cell::Int(20)));
        let g = run_one(&guarded, &sweep, 1, 0);
        assert!(matches!(g.summary.get("hedges"), Some(Cell::Int(n)) if *n > 0));
        assert_eq!(g.summary.get("pool_exhausted"), Some(&Cell::Int(0)));
        // timeseries.csv: pool_in_use last, empty for the cell without a pool.
        assert!(timeseries_header(&sweep).ends_with(",pool_in_use\n"));
        assert!(!timeseries_header(&alone).contains("pool_in_use"));
        let last = |r: &crate::run::RunResult, s: &Scenario| {
            let text = timeseries_rows_laid(r, Some(4), &sweep.series_groups(s));
            let row = text.lines().next().unwrap().to_string();
            row.rsplit(',').next().unwrap().to_string()
        };
        assert_eq!(last(&r, &plain), "");
        assert!(last(&g, &guarded).parse::<f64>().unwrap() > 0.0);
        // The folder's dictionary lists the same columns.
        let d = dictionary(Some(&sweep));
        let listed: Vec<&str> = d
            .iter()
            .filter(|e| e.file == "summary.csv" && !e.column.starts_with("param_"))
            .map(|e| e.column.as_str())
            .collect();
        assert_eq!(listed, header);
        assert!(d
            .iter()
            .any(|e| e.file == "timeseries.csv" && e.column == TS_POOL_IN_USE.name));
    }
}
