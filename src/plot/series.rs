//! The per-run series of a result folder: `timeseries.csv` per bucket and `herd.csv` per
//! fine bucket, parsed into typed columns as they are read.

use std::collections::BTreeMap;
use std::path::Path;

use crate::metrics::columns::{
    HERD_INBOUND, HERD_T, LIMIT_SERIES, REPLICATION, RUN, TS_BREAKER_OPEN,
    TS_BREAKER_OPEN_FRACTION, TS_BUDGET_EXHAUSTED, TS_FAILURE_LATENCY_P50_MS, TS_GOODPUT,
    TS_INBOUND, TS_IN_SYSTEM_MEAN, TS_LATENCY_P50_MS, TS_LATENCY_P99_MS, TS_OFFERED, TS_OUTAGE,
    TS_SUCCESS_LATENCY_P50_MS, TS_SUCCESS_LATENCY_P99_MS, TS_SUCCESS_RATE, TS_T,
};

use super::table::CsvStream;
use super::PlotError;

/// The time series of one run (`timeseries.csv` rows with one `run` value).
#[derive(Debug, Clone, Default)]
pub struct RunSeries {
    /// Run index.
    pub run: u64,
    /// Replication index.
    pub replication: u64,
    /// Bucket starts, seconds.
    pub t: Vec<f64>,
    /// Logical arrivals per second.
    pub offered: Vec<Option<f64>>,
    /// Attempts arriving at the dependency per second.
    pub inbound: Vec<Option<f64>>,
    /// Logical successes per second.
    pub goodput: Vec<Option<f64>>,
    /// Logical successes / completions.
    pub success_rate: Vec<Option<f64>>,
    /// Mean fraction of breaker instances open.
    pub breaker_open_fraction: Vec<Option<f64>>,
    /// Attempts failed by an open breaker, count in the bucket.
    pub breaker_open: Vec<Option<f64>>,
    /// Retries denied by a budget, count in the bucket.
    pub budget_exhausted: Vec<Option<f64>>,
    /// Median latency, ms.
    pub latency_p50: Vec<Option<f64>>,
    /// 99th percentile latency, ms.
    pub latency_p99: Vec<Option<f64>>,
    /// Median latency of successes, ms.
    pub success_latency_p50: Vec<Option<f64>>,
    /// 99th percentile latency of successes, ms.
    pub success_latency_p99: Vec<Option<f64>>,
    /// Median time to failure, ms.
    pub failure_latency_p50: Vec<Option<f64>>,
    /// Fraction of the bucket covered by outages.
    pub outage: Vec<Option<f64>>,
    /// Time-weighted mean concurrency limit of the service the fleets call (empty
    /// without one).
    pub limit: Vec<Option<f64>>,
    /// Mean requests at the dependency, queued or in service (what a limit counts).
    pub in_system: Vec<Option<f64>>,
    /// Attempts the concurrency limits refused, count in the bucket.
    pub limit_rejected: Vec<Option<f64>>,
}

impl RunSeries {
    /// Bucket width in seconds (the smallest step between bucket starts; 1 if unknown).
    pub fn bucket(&self) -> f64 {
        self.t
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))))
            .unwrap_or(1.0)
    }

    /// The end of the last bucket, seconds.
    pub fn end(&self) -> f64 {
        self.t.last().map_or(1.0, |t| t + self.bucket())
    }

    /// The middle of each bucket, seconds (where the bucket's rates are drawn).
    pub fn midpoints(&self) -> Vec<f64> {
        let half = self.bucket() / 2.0;
        self.t.iter().map(|t| t + half).collect()
    }

    /// Spans `[start, end)` where `flag(i)` holds, merged over consecutive buckets.
    pub fn spans(&self, flag: impl Fn(usize) -> bool) -> Vec<(f64, f64)> {
        let b = self.bucket();
        let mut out: Vec<(f64, f64)> = Vec::new();
        for (i, t) in self.t.iter().enumerate() {
            if !flag(i) {
                continue;
            }
            match out.last_mut() {
                Some(last) if (last.1 - t).abs() < b * 1e-6 => last.1 = t + b,
                _ => out.push((*t, t + b)),
            }
        }
        out
    }

    /// Spans `[start, end)` of the buckets an outage covers (shaded in the charts).
    pub fn outage_spans(&self) -> Vec<(f64, f64)> {
        self.spans(|i| self.outage[i].unwrap_or(0.0) > 0.0)
    }

    /// Spans where a breaker was open (some instance open, or an attempt refused).
    pub fn breaker_spans(&self) -> Vec<(f64, f64)> {
        self.spans(|i| {
            self.breaker_open_fraction[i].unwrap_or(0.0) > 0.0
                || self.breaker_open[i].unwrap_or(0.0) > 0.0
        })
    }

    /// Whether the run has a concurrency limit at the service the fleets call.
    pub fn has_limit(&self) -> bool {
        self.limit.iter().any(Option::is_some)
    }

    /// Spans where a retry budget denied retries.
    pub fn budget_spans(&self) -> Vec<(f64, f64)> {
        self.spans(|i| self.budget_exhausted[i].unwrap_or(0.0) > 0.0)
    }
}

/// Columns of `timeseries.csv` the plots read, in the order of [`RunSeries`]'s fields.
const SERIES_COLUMNS: [&str; 10] = [
    TS_OFFERED.name,
    TS_INBOUND.name,
    TS_GOODPUT.name,
    TS_SUCCESS_RATE.name,
    TS_BREAKER_OPEN_FRACTION.name,
    TS_BREAKER_OPEN.name,
    TS_BUDGET_EXHAUSTED.name,
    TS_LATENCY_P50_MS.name,
    TS_LATENCY_P99_MS.name,
    TS_OUTAGE.name,
];

/// Columns the plots read when a folder has them (folders written before they existed
/// do not): success latency, in the order of [`RunSeries`]'s fields, and time to
/// failure. Without them the success lines fall back to the latency of all completions.
const LATER_COLUMNS: [&str; 3] = [
    TS_SUCCESS_LATENCY_P50_MS.name,
    TS_SUCCESS_LATENCY_P99_MS.name,
    TS_FAILURE_LATENCY_P50_MS.name,
];

/// Columns written only with a mechanism (the concurrency limit's), read when there:
/// in the order of [`RunSeries`]'s fields.
const OPTIONAL_COLUMNS: [&str; 3] = [
    LIMIT_SERIES[0].name,
    TS_IN_SYSTEM_MEAN.name,
    LIMIT_SERIES[1].name,
];

#[cfg(not(target_arch = "wasm32"))]
/// Reads `timeseries.csv` into one series per run, in order of first appearance, one
/// record at a time (O(rows), nothing held as text).
pub(crate) fn read_timeseries(path: &Path) -> Result<Vec<RunSeries>, PlotError> {
    timeseries_of(CsvStream::open(path)?)
}

/// [`read_timeseries`] of the text of a file `path`.
pub(crate) fn timeseries_of_text(path: &Path, text: &str) -> Result<Vec<RunSeries>, PlotError> {
    timeseries_of(CsvStream::of_text(path, text)?)
}

/// The series of each run of a `timeseries.csv`.
fn timeseries_of<R: std::io::Read>(mut csv: CsvStream<R>) -> Result<Vec<RunSeries>, PlotError> {
    let i_run = csv.index(RUN.name)?;
    let i_rep = csv.index(REPLICATION.name)?;
    let i_t = csv.index(TS_T.name)?;
    let mut cols = [0usize; SERIES_COLUMNS.len()];
    for (c, name) in cols.iter_mut().zip(SERIES_COLUMNS) {
        *c = csv.index(name)?;
    }
    let later = LATER_COLUMNS.map(|name| csv.index(name).ok());
    let optional = OPTIONAL_COLUMNS.map(|name| csv.index(name).ok());
    let mut out: Vec<RunSeries> = Vec::new();
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    // The run of the previous row: rows of one run are usually together.
    let mut last: Option<(u64, usize)> = None;
    while let Some(line) = csv.next()? {
        let run = csv.integer(i_run, line)?;
        let rep = csv.integer(i_rep, line)?;
        let Some(ti) = csv.number(i_t, line)? else {
            return Err(PlotError::BadValue {
                path: csv.path().to_path_buf(),
                line,
                column: TS_T.name.into(),
                expected: "a number",
                found: String::new(),
            });
        };
        let mut values = [None; SERIES_COLUMNS.len()];
        for (v, c) in values.iter_mut().zip(cols) {
            *v = csv.number(c, line)?;
        }
        let mut extra = [None; LATER_COLUMNS.len()];
        for (v, c) in extra.iter_mut().zip(later) {
            if let Some(c) = c {
                *v = csv.number(c, line)?;
            }
        }
        // An older folder: success lines from all completions, no failure line.
        let (p50, p99) = (values[7], values[8]);
        if later[0].is_none() {
            extra[0] = p50;
        }
        if later[1].is_none() {
            extra[1] = p99;
        }
        let k = match last {
            Some((r, k)) if r == run => k,
            _ => *at.entry(run).or_insert_with(|| {
                out.push(RunSeries {
                    run,
                    replication: rep,
                    ..RunSeries::default()
                });
                out.len() - 1
            }),
        };
        last = Some((run, k));
        let s = &mut out[k];
        s.t.push(ti);
        let fields = [
            &mut s.offered,
            &mut s.inbound,
            &mut s.goodput,
            &mut s.success_rate,
            &mut s.breaker_open_fraction,
            &mut s.breaker_open,
            &mut s.budget_exhausted,
            &mut s.latency_p50,
            &mut s.latency_p99,
            &mut s.outage,
        ];
        for (f, v) in fields.into_iter().zip(values) {
            f.push(v);
        }
        let fields = [
            &mut s.success_latency_p50,
            &mut s.success_latency_p99,
            &mut s.failure_latency_p50,
        ];
        for (f, v) in fields.into_iter().zip(extra) {
            f.push(v);
        }
        let fields = [&mut s.limit, &mut s.in_system, &mut s.limit_rejected];
        for (f, c) in fields.into_iter().zip(optional) {
            f.push(match c {
                Some(c) => csv.number(c, line)?,
                None => None,
            });
        }
    }
    Ok(out)
}

/// Fine-bucket attempt arrivals of one run (`herd.csv`).
#[derive(Debug, Clone, Default)]
pub struct HerdSeries {
    /// Run index.
    pub run: u64,
    /// Fine bucket starts, seconds.
    pub t: Vec<f64>,
    /// Attempts arriving in the fine bucket (a count).
    pub inbound: Vec<f64>,
}

impl HerdSeries {
    /// Fine bucket width in seconds (the smallest step; 0.01 if unknown).
    pub fn width(&self) -> f64 {
        self.t
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))))
            .unwrap_or(0.01)
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// Reads `herd.csv` (a header alone is fine: no series), one record at a time.
pub(crate) fn read_herd(path: &Path) -> Result<Vec<HerdSeries>, PlotError> {
    herd_of(CsvStream::open(path)?)
}

/// [`read_herd`] of the text of a file `path`.
pub(crate) fn herd_of_text(path: &Path, text: &str) -> Result<Vec<HerdSeries>, PlotError> {
    herd_of(CsvStream::of_text(path, text)?)
}

/// The herd series of each run of a `herd.csv`.
fn herd_of<R: std::io::Read>(mut csv: CsvStream<R>) -> Result<Vec<HerdSeries>, PlotError> {
    let i_run = csv.index(RUN.name)?;
    let i_t = csv.index(HERD_T.name)?;
    let i_inbound = csv.index(HERD_INBOUND.name)?;
    let mut out: Vec<HerdSeries> = Vec::new();
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    while let Some(line) = csv.next()? {
        let run = csv.integer(i_run, line)?;
        let (Some(ti), Some(v)) = (csv.number(i_t, line)?, csv.number(i_inbound, line)?) else {
            continue;
        };
        let k = *at.entry(run).or_insert_with(|| {
            out.push(HerdSeries {
                run,
                ..HerdSeries::default()
            });
            out.len() - 1
        });
        out[k].t.push(ti);
        out[k].inbound.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_consecutive_buckets() {
        let s = RunSeries {
            t: vec![0.0, 1.0, 2.0, 3.0, 4.0],
            outage: vec![None, Some(1.0), Some(0.5), None, Some(1.0)],
            ..RunSeries::default()
        };
        let spans = s.outage_spans();
        assert_eq!(spans, vec![(1.0, 3.0), (4.0, 5.0)]);
    }
}
