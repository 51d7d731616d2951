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
    fleet_column, layer_column, service_column, BULKHEAD_COLUMNS, FLEET_COLUMNS, HEDGE_COLUMNS,
    OVERLOADED, POOL_COLUMNS, QUEUE_SUMMARY, SERVICE_COLUMNS, SUMMARY_BASE, SUMMARY_EXTRA,
};
use super::recorder::RunMetrics;
use super::recovery;

/// The `q`-quantile of a histogram in µs, in ms (`Empty` when it is empty).
fn quantile_ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> Cell {
    if h.is_empty() {
        Cell::Empty
    } else {
        Cell::float(h.value_at_quantile(q) as f64 / 1000.0)
    }
}

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
pub use super::format::shortest as format_float;

/// Columns every run shares: which layer depths and fleets to report.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Deepest layer stack over all fleets (and all cells of a sweep).
    pub max_layers: usize,
    /// Fleet names, when there is more than one fleet.
    pub fleets: Vec<String>,
    /// Service names, for a service graph (`[[services]]`).
    pub services: Vec<String>,
    /// Whether a fleet is a queue fleet: the queue columns are written.
    pub queue: bool,
    /// Whether a fleet or a call has a bulkhead (`bulkhead_full`).
    pub bulkheads: bool,
    /// Whether a fleet or a call has a connection pool (the `pool_` columns, and
    /// `pool_in_use` in `timeseries.csv`).
    pub pools: bool,
    /// Whether a layer hedges (`hedges`, `hedge_wins`, `hedge_losers`).
    pub hedging: bool,
}

impl Layout {
    /// The layout of one scenario.
    pub fn of(scn: &Scenario) -> Layout {
        Layout {
            max_layers: scn.fleets.iter().map(|f| f.layers.len()).max().unwrap_or(0),
            fleets: if scn.fleets.len() > 1 {
                scn.fleets.iter().map(|f| f.name.clone()).collect()
            } else {
                Vec::new()
            },
            services: if scn.graph {
                scn.services.iter().map(|s| s.name.clone()).collect()
            } else {
                Vec::new()
            },
            queue: scn.fleets.iter().any(|f| f.queue.is_some()),
            bulkheads: scn.uses_bulkheads(),
            pools: scn.uses_pools(),
            hedging: scn.uses_hedging(),
        }
    }

    /// The union of two layouts (for a sweep over cells).
    pub fn merge(&mut self, other: &Layout) {
        self.max_layers = self.max_layers.max(other.max_layers);
        self.queue |= other.queue;
        for f in &other.fleets {
            if !self.fleets.contains(f) {
                self.fleets.push(f.clone());
            }
        }
        for sv in &other.services {
            if !self.services.contains(sv) {
                self.services.push(sv.clone());
            }
        }
        self.bulkheads |= other.bulkheads;
        self.pools |= other.pools;
        self.hedging |= other.hedging;
    }

    /// The column names, in order.
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<String> = SUMMARY_BASE.iter().map(|c| c.name.to_string()).collect();
        c.extend((0..self.max_layers).map(layer_column));
        c.extend(SUMMARY_EXTRA.iter().map(|c| c.name.to_string()));
        for f in &self.fleets {
            c.extend(FLEET_COLUMNS.iter().map(|k| fleet_column(f, k)));
        }
        if !self.services.is_empty() {
            c.push(OVERLOADED.name.to_string());
        }
        for sv in &self.services {
            c.extend(SERVICE_COLUMNS.iter().map(|k| service_column(sv, k)));
        }
        if self.queue {
            c.extend(QUEUE_SUMMARY.iter().map(|k| k.name.to_string()));
        }
        if self.bulkheads {
            c.extend(BULKHEAD_COLUMNS.iter().map(|k| k.name.to_string()));
        }
        if self.pools {
            c.extend(POOL_COLUMNS.iter().map(|k| k.name.to_string()));
        }
        if self.hedging {
            c.extend(HEDGE_COLUMNS.iter().map(|k| k.name.to_string()));
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
        let q = |p: f64| quantile_ms(&m.latency, p);
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
            quantile_ms(&m.success_latency, 0.5),
            quantile_ms(&m.success_latency, 0.9),
            quantile_ms(&m.success_latency, 0.99),
            quantile_ms(&m.success_latency, 0.999),
            // failure_latency_mean_ms, _p50_ms, _p99_ms
            Cell::ratio(t.failure_latency_sum_ns as f64 / 1e6, t.failed as f64),
            quantile_ms(&m.failure_latency, 0.5),
            quantile_ms(&m.failure_latency, 0.99),
            Cell::Int(t.admitted),
            Cell::Int(t.waited),
            Cell::Int(t.blocked),
            // wait_mean_ms, wait_p99_ms
            Cell::ratio(t.wait_ns as f64 / 1e6, t.started as f64),
            quantile_ms(&m.wait, 0.99),
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
        for name in &layout.fleets {
            let ft = scn
                .fleets
                .iter()
                .position(|f| &f.name == name)
                .and_then(|i| t.fleets.get(i));
            let (l, s, a, f) = ft.map_or((0, 0, 0, 0), |x| {
                (x.logical, x.succeeded, x.attempts, x.failed)
            });
            let values: [Cell; FLEET_COLUMNS.len()] = [
                Cell::Int(l),
                Cell::ratio(s as f64, l as f64),
                Cell::ratio(a as f64, l as f64),
                Cell::Int(f),
            ];
            cells.extend(
                FLEET_COLUMNS
                    .iter()
                    .map(|c| fleet_column(name, c))
                    .zip(values),
            );
        }
        if !layout.services.is_empty() {
            cells.push((OVERLOADED.name.to_string(), o(Class::Overloaded)));
        }
        for name in &layout.services {
            let i = scn.services.iter().position(|s| &s.name == name);
            let track = i.zip(m.services.as_ref());
            let values: [Cell; SERVICE_COLUMNS.len()] = match track {
                Some((i, s)) => {
                    let t = &s.services[i].totals;
                    [
                        Cell::ratio(t.inbound as f64, logical),
                        Cell::Int(t.rejected),
                        Cell::Int(t.shed),
                        s.utilisation_peak(i).map_or(Cell::Empty, Cell::float),
                    ]
                }
                None => [Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty],
            };
            cells.extend(
                SERVICE_COLUMNS
                    .iter()
                    .map(|c| service_column(name, c))
                    .zip(values),
            );
        }
        if layout.queue {
            let values: [Cell; QUEUE_SUMMARY.len()] = match &m.queue {
                Some(q) => {
                    let t = &q.totals;
                    [
                        Cell::Int(t.messages),
                        Cell::Int(t.deliveries),
                        Cell::Int(t.redeliveries),
                        Cell::Int(t.duplicate_deliveries),
                        Cell::Int(t.dlq),
                        Cell::Int(t.left),
                        quantile_ms(&q.end_to_end, 0.5),
                        quantile_ms(&q.end_to_end, 0.99),
                    ]
                }
                None => std::array::from_fn(|_| Cell::Empty),
            };
            cells.extend(QUEUE_SUMMARY.iter().map(|c| c.name.to_string()).zip(values));
        }
        let g = m.guards.as_ref();
        if layout.bulkheads {
            let full = match g {
                Some(g) if scn.uses_bulkheads() => Cell::Int(g.bulkhead_full),
                _ => Cell::Empty,
            };
            cells.push((BULKHEAD_COLUMNS[0].name.to_string(), full));
        }
        if layout.pools {
            let pool = scn.uses_pools();
            let values: [Cell; POOL_COLUMNS.len()] = match g {
                Some(g) if pool => [
                    Cell::Int(g.pool_exhausted),
                    Cell::ratio(g.pool_wait_ns as f64 / 1e6, g.pool_waits as f64),
                    quantile_ms(&g.pool_wait, 0.99),
                ],
                _ => [Cell::Empty, Cell::Empty, Cell::Empty],
            };
            cells.extend(POOL_COLUMNS.iter().map(|c| c.name.to_string()).zip(values));
        }
        if layout.hedging {
            let values: [Cell; HEDGE_COLUMNS.len()] = if scn.uses_hedging() {
                [
                    Cell::Int(t.hedges),
                    Cell::Int(t.hedge_wins),
                    Cell::Int(t.hedge_losers),
                ]
            } else {
                [Cell::Empty, Cell::Empty, Cell::Empty]
            };
            cells.extend(HEDGE_COLUMNS.iter().map(|c| c.name.to_string()).zip(values));
        }
        Summary { cells }
    }
}
