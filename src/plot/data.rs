//! Reading a result folder back: the CSV files into typed columns, and the manifest.
//!
//! The CSVs are the plots' only input, so a folder can be redrawn long after its run.
//! Empty cells are `None`; a cell that is neither empty nor a number is an error that
//! names the file, the line and the column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::PlotError;

/// A CSV file held as text cells, with its header.
#[derive(Debug, Clone)]
pub struct CsvTable {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// Column names.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as the header.
    pub rows: Vec<Vec<String>>,
    /// The line of each row in the file (1-based; the header is line 1).
    pub lines: Vec<u64>,
}

impl CsvTable {
    /// Reads `path`; every row must have as many fields as the header.
    pub fn read(path: &Path) -> Result<CsvTable, PlotError> {
        let bytes = std::fs::read(path).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &bytes)
    }

    /// Parses CSV bytes, naming `path` in errors.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<CsvTable, PlotError> {
        let bad = |message: String| PlotError::Csv {
            path: path.to_path_buf(),
            message,
        };
        let mut r = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(bytes);
        let headers: Vec<String> = r
            .headers()
            .map_err(|e| bad(e.to_string()))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(bad("the file has no header line".into()));
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            lines.push(rec.position().map_or(0, |p| p.line()));
            rows.push(rec.iter().map(|c| c.trim().to_string()).collect());
        }
        Ok(CsvTable {
            path: path.to_path_buf(),
            headers,
            rows,
            lines,
        })
    }

    /// Whether the table has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h == name)
    }

    /// The index of column `name`, or an error naming the file.
    pub fn index(&self, name: &str) -> Result<usize, PlotError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PlotError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
            })
    }

    /// Column `name` as numbers: empty cells are `None`, `true`/`false` are 1/0.
    pub fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>, PlotError> {
        let i = self.index(name)?;
        self.rows
            .iter()
            .zip(&self.lines)
            .map(|(row, line)| self.number_at(&row[i], *line, name))
            .collect()
    }

    /// Column `name` as numbers when the column exists, else all `None`.
    pub fn numbers_or_empty(&self, name: &str) -> Result<Vec<Option<f64>>, PlotError> {
        if self.has(name) {
            self.numbers(name)
        } else {
            Ok(vec![None; self.rows.len()])
        }
    }

    /// Column `name` as text.
    pub fn texts(&self, name: &str) -> Result<Vec<&str>, PlotError> {
        let i = self.index(name)?;
        Ok(self.rows.iter().map(|r| r[i].as_str()).collect())
    }

    /// Column `name` as non-negative integers (run indices); empty cells are errors.
    pub fn integers(&self, name: &str) -> Result<Vec<u64>, PlotError> {
        let i = self.index(name)?;
        self.rows
            .iter()
            .zip(&self.lines)
            .map(|(row, line)| integer_cell(&self.path, &row[i], *line, name))
            .collect()
    }

    fn number_at(&self, cell: &str, line: u64, column: &str) -> Result<Option<f64>, PlotError> {
        number_cell(&self.path, cell, line, column)
    }
}

/// A cell of a number column: empty = `None`, else a number, or an error naming the
/// file, the line and the column.
fn number_cell(path: &Path, cell: &str, line: u64, column: &str) -> Result<Option<f64>, PlotError> {
    parse_number(cell).map_err(|_| PlotError::BadValue {
        path: path.to_path_buf(),
        line,
        column: column.to_string(),
        expected: "a number or an empty cell",
        found: cell.to_string(),
    })
}

/// A cell of a run-index column: a non-negative integer, or an error as [`number_cell`].
fn integer_cell(path: &Path, cell: &str, line: u64, column: &str) -> Result<u64, PlotError> {
    cell.parse::<u64>().map_err(|_| PlotError::BadValue {
        path: path.to_path_buf(),
        line,
        column: column.to_string(),
        expected: "a whole number",
        found: cell.to_string(),
    })
}

/// A CSV file read one record at a time (the time series can have millions of rows:
/// they are parsed into typed columns as they are read, never held as text).
struct CsvStream {
    path: PathBuf,
    reader: ::csv::Reader<std::io::BufReader<std::fs::File>>,
    headers: Vec<String>,
    record: ::csv::StringRecord,
}

impl CsvStream {
    /// Opens `path` and reads its header, with the errors of [`CsvTable::read`].
    fn open(path: &Path) -> Result<CsvStream, PlotError> {
        let file = std::fs::File::open(path).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(std::io::BufReader::with_capacity(1 << 16, file));
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| csv_error(path, &e))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(PlotError::Csv {
                path: path.to_path_buf(),
                message: "the file has no header line".into(),
            });
        }
        Ok(CsvStream {
            path: path.to_path_buf(),
            reader,
            headers,
            record: ::csv::StringRecord::new(),
        })
    }

    /// The index of column `name`, or an error naming the file.
    fn index(&self, name: &str) -> Result<usize, PlotError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PlotError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
            })
    }

    /// Reads the next record; its line (1-based) when there is one.
    fn next(&mut self) -> Result<Option<u64>, PlotError> {
        if !self
            .reader
            .read_record(&mut self.record)
            .map_err(|e| csv_error(&self.path, &e))?
        {
            return Ok(None);
        }
        Ok(Some(self.record.position().map_or(0, |p| p.line())))
    }

    /// Cell `i` of the current record, trimmed.
    fn cell(&self, i: usize) -> &str {
        self.record.get(i).unwrap_or("").trim()
    }

    /// Cell `i` of the current record (at `line`) as a number or `None`.
    fn number(&self, i: usize, line: u64) -> Result<Option<f64>, PlotError> {
        number_cell(&self.path, self.cell(i), line, &self.headers[i])
    }

    /// Cell `i` of the current record (at `line`) as a run index.
    fn integer(&self, i: usize, line: u64) -> Result<u64, PlotError> {
        integer_cell(&self.path, self.cell(i), line, &self.headers[i])
    }
}

fn csv_error(path: &Path, e: &::csv::Error) -> PlotError {
    PlotError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A cell that is neither empty nor a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotANumber;

/// Parses a cell: empty = `None`, `true`/`false` = 1/0, else a finite number.
pub fn parse_number(cell: &str) -> Result<Option<f64>, NotANumber> {
    match cell {
        "" => Ok(None),
        "true" => Ok(Some(1.0)),
        "false" => Ok(Some(0.0)),
        _ => match cell.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(NotANumber),
        },
    }
}

/// What kind of folder a manifest describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderKind {
    /// One scenario's runs (its replications).
    Run,
    /// A grid of cells times replications.
    Sweep,
}

/// The parts of `manifest.toml` the plots use.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// `run` or `sweep`.
    pub kind: FolderKind,
    /// Swept dotted keys, in column order (empty for a run).
    pub params: Vec<String>,
    /// Scenario name.
    pub scenario_name: String,
    /// Base seed.
    pub seed: Option<i64>,
    /// Number of runs.
    pub runs: Option<i64>,
    /// Capacity of the dependency, attempts per second (absent when unlimited).
    pub capacity_per_s: Option<f64>,
    /// Offered load, logical requests per second.
    pub offered_per_s: Option<f64>,
    /// The scenario table after overrides.
    pub scenario: toml::Table,
    /// Warnings of `retrysim explain`, when the manifest records them (`[explain] lints`).
    pub lints: Vec<String>,
    /// The manifest text without its `[output]` file list (shown in the report).
    pub text: String,
}

impl Manifest {
    /// Reads and checks `path`.
    pub fn read(path: &Path) -> Result<Manifest, PlotError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, text)
    }

    /// Parses manifest text, naming `path` in errors.
    pub fn parse(path: &Path, text: String) -> Result<Manifest, PlotError> {
        let bad = |message: String| PlotError::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let root: toml::Table = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let run = root
            .get("run")
            .and_then(toml::Value::as_table)
            .ok_or_else(|| bad("has no [run] table".into()))?;
        let kind = match run.get("kind").and_then(toml::Value::as_str) {
            Some("run") | None => FolderKind::Run,
            Some("sweep") => FolderKind::Sweep,
            Some(other) => {
                return Err(bad(format!(
                    "run.kind must be \"run\" or \"sweep\" (found \"{other}\")"
                )))
            }
        };
        let params = match run.get("params") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        bad(format!(
                            "run.params must hold dotted keys as strings (found {v})"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(bad(format!(
                    "run.params must be an array of dotted keys (found {v})"
                )))
            }
        };
        if kind == FolderKind::Sweep && params.is_empty() {
            return Err(bad("a sweep's run.params must name at least one key".into()));
        }
        let resolved = root.get("resolved").and_then(toml::Value::as_table);
        let num = |k: &str| {
            resolved
                .and_then(|r| r.get(k))
                .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                .filter(|v| v.is_finite())
        };
        let lints = root
            .get("explain")
            .and_then(|e| e.get("lints"))
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Manifest {
            kind,
            params,
            scenario_name: run
                .get("scenario")
                .and_then(toml::Value::as_str)
                .unwrap_or("unnamed")
                .to_string(),
            seed: run.get("seed").and_then(toml::Value::as_integer),
            runs: run.get("runs").and_then(toml::Value::as_integer),
            capacity_per_s: num("capacity_per_s"),
            offered_per_s: num("offered_per_s"),
            scenario: root
                .get("scenario")
                .and_then(toml::Value::as_table)
                .cloned()
                .unwrap_or_default(),
            lints,
            // The file list changes as charts are drawn: the report shows the rest.
            text: crate::export::owner::without_output(&text).to_string(),
        })
    }
}

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
    /// Fraction of the bucket covered by outages.
    pub outage: Vec<Option<f64>>,
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
}

/// Columns of `timeseries.csv` the plots read, in the order of [`RunSeries`]'s fields.
const SERIES_COLUMNS: [&str; 10] = [
    "offered",
    "inbound",
    "goodput",
    "success_rate",
    "breaker_open_fraction",
    "breaker_open",
    "budget_exhausted",
    "latency_p50_ms",
    "latency_p99_ms",
    "outage",
];

/// Reads `timeseries.csv` into one series per run, in order of first appearance, one
/// record at a time (O(rows), nothing held as text).
pub fn read_timeseries(path: &Path) -> Result<Vec<RunSeries>, PlotError> {
    let mut csv = CsvStream::open(path)?;
    let i_run = csv.index("run")?;
    let i_rep = csv.index("replication")?;
    let i_t = csv.index("t")?;
    let mut cols = [0usize; SERIES_COLUMNS.len()];
    for (c, name) in cols.iter_mut().zip(SERIES_COLUMNS) {
        *c = csv.index(name)?;
    }
    let mut out: Vec<RunSeries> = Vec::new();
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    // The run of the previous row: rows of one run are usually together.
    let mut last: Option<(u64, usize)> = None;
    while let Some(line) = csv.next()? {
        let run = csv.integer(i_run, line)?;
        let rep = csv.integer(i_rep, line)?;
        let Some(ti) = csv.number(i_t, line)? else {
            return Err(PlotError::BadValue {
                path: path.to_path_buf(),
                line,
                column: "t".into(),
                expected: "a number",
                found: String::new(),
            });
        };
        let mut values = [None; SERIES_COLUMNS.len()];
        for (v, c) in values.iter_mut().zip(cols) {
            *v = csv.number(c, line)?;
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

/// Reads `herd.csv` (a header alone is fine: no series), one record at a time.
pub fn read_herd(path: &Path) -> Result<Vec<HerdSeries>, PlotError> {
    let mut csv = CsvStream::open(path)?;
    let i_run = csv.index("run")?;
    let i_t = csv.index("t")?;
    let i_inbound = csv.index("inbound")?;
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

/// A mean with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Mean over the replications.
    pub mean: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// One grid cell of a sweep.
#[derive(Debug, Clone)]
pub struct SweepCell {
    /// The swept values, as written, in the order of [`Sweep::keys`].
    pub values: Vec<String>,
    /// Replications aggregated.
    pub runs: u64,
    /// Metric name → statistic.
    pub metrics: BTreeMap<String, Stat>,
}

/// A sweep's cells, from `aggregate.csv` (or from `summary.csv` without intervals).
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Swept dotted keys.
    pub keys: Vec<String>,
    /// Cells in grid order.
    pub cells: Vec<SweepCell>,
    /// Metric names, in column order.
    pub metrics: Vec<String>,
    /// Whether the intervals come from `aggregate.csv` (false: means of `summary.csv`).
    pub has_intervals: bool,
    /// `(run, replication, cell index)` for every summary row.
    pub runs: Vec<(u64, u64, usize)>,
}

/// Summary columns that are not metrics.
const NOT_METRICS: [&str; 3] = ["run", "replication", "seed"];

impl Sweep {
    /// Reads the cells of a sweep folder: `aggregate.csv` when present, else cell means
    /// of `summary.csv`.
    pub fn read(
        keys: &[String],
        summary: &CsvTable,
        aggregate: Option<&CsvTable>,
    ) -> Result<Sweep, PlotError> {
        let cells = match aggregate {
            Some(a) => Self::cells_of_aggregate(keys, a)?,
            None => Self::cells_of_summary(keys, summary)?,
        };
        let mut metrics: Vec<String> = Vec::new();
        match aggregate {
            Some(a) => {
                for h in &a.headers {
                    if let Some(m) = h.strip_suffix("_mean") {
                        metrics.push(m.to_string());
                    }
                }
            }
            None => {
                for h in &summary.headers {
                    if !NOT_METRICS.contains(&h.as_str()) && !h.starts_with("param_") {
                        metrics.push(h.clone());
                    }
                }
            }
        }
        metrics.retain(|m| cells.iter().any(|c| c.metrics.contains_key(m)));
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| summary.texts(&format!("param_{k}")))
            .collect::<Result<_, _>>()?;
        let run_ids = summary.integers("run")?;
        let reps = summary.integers("replication")?;
        let mut runs = Vec::new();
        for (i, run) in run_ids.iter().enumerate() {
            let vals: Vec<&str> = value_cols.iter().map(|c| c[i]).collect();
            if let Some(ci) = cells.iter().position(|c| c.values == vals) {
                runs.push((*run, reps[i], ci));
            }
        }
        Ok(Sweep {
            keys: keys.to_vec(),
            cells,
            metrics,
            has_intervals: aggregate.is_some(),
            runs,
        })
    }

    fn cells_of_aggregate(keys: &[String], a: &CsvTable) -> Result<Vec<SweepCell>, PlotError> {
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| a.texts(&format!("param_{k}")))
            .collect::<Result<_, _>>()?;
        let runs = a.numbers_or_empty("runs")?;
        // (metric, means, lows, highs)
        type Columns = (String, Vec<Option<f64>>, Vec<Option<f64>>, Vec<Option<f64>>);
        let mut stats: Vec<Columns> = Vec::new();
        for h in &a.headers {
            if let Some(m) = h.strip_suffix("_mean") {
                stats.push((
                    m.to_string(),
                    a.numbers(h)?,
                    a.numbers_or_empty(&format!("{m}_ci_low"))?,
                    a.numbers_or_empty(&format!("{m}_ci_high"))?,
                ));
            }
        }
        let mut cells = Vec::with_capacity(a.rows.len());
        for i in 0..a.rows.len() {
            let mut metrics = BTreeMap::new();
            for (name, mean, low, high) in &stats {
                if let Some(m) = mean[i] {
                    let lo = low[i].unwrap_or(m).min(m);
                    let hi = high[i].unwrap_or(m).max(m);
                    metrics.insert(
                        name.clone(),
                        Stat {
                            mean: m,
                            low: lo,
                            high: hi,
                        },
                    );
                }
            }
            cells.push(SweepCell {
                values: value_cols.iter().map(|c| c[i].to_string()).collect(),
                runs: runs[i].map_or(1, |r| r.max(0.0) as u64),
                metrics,
            });
        }
        Ok(cells)
    }

    fn cells_of_summary(keys: &[String], s: &CsvTable) -> Result<Vec<SweepCell>, PlotError> {
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| s.texts(&format!("param_{k}")))
            .collect::<Result<_, _>>()?;
        let mut columns: Vec<(String, Vec<Option<f64>>)> = Vec::new();
        for h in &s.headers {
            if NOT_METRICS.contains(&h.as_str()) || h.starts_with("param_") {
                continue;
            }
            // Text columns (none today) are left out rather than failing the plots.
            if let Ok(v) = s.numbers(h) {
                columns.push((h.clone(), v));
            }
        }
        let mut cells: Vec<SweepCell> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for i in 0..s.rows.len() {
            let vals: Vec<String> = value_cols.iter().map(|c| c[i].to_string()).collect();
            match cells.iter().position(|c| c.values == vals) {
                Some(ci) => members[ci].push(i),
                None => {
                    cells.push(SweepCell {
                        values: vals,
                        runs: 0,
                        metrics: BTreeMap::new(),
                    });
                    members.push(vec![i]);
                }
            }
        }
        for (cell, rows) in cells.iter_mut().zip(&members) {
            cell.runs = rows.len() as u64;
            for (name, col) in &columns {
                let xs: Vec<f64> = rows.iter().filter_map(|&r| col[r]).collect();
                if xs.is_empty() {
                    continue;
                }
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                cell.metrics.insert(
                    name.clone(),
                    Stat {
                        mean,
                        low: mean,
                        high: mean,
                    },
                );
            }
        }
        Ok(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> CsvTable {
        CsvTable::parse(Path::new("d/x.csv"), text.as_bytes()).unwrap()
    }

    #[test]
    fn empty_cells_are_none_and_bad_cells_name_file_line_and_column() {
        let t = table("a,b\n1,\n2,x\n");
        assert_eq!(t.numbers("a").unwrap(), vec![Some(1.0), Some(2.0)]);
        let e = t.numbers("b").unwrap_err().to_string();
        assert!(e.contains("'d/x.csv'"), "{e}");
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("column 'b'"), "{e}");
        assert!(e.contains("found 'x'"), "{e}");
        let e = t.numbers("zz").unwrap_err().to_string();
        assert!(e.contains("no column 'zz'"), "{e}");
    }

    #[test]
    fn ragged_rows_are_an_error_not_a_panic() {
        let e = CsvTable::parse(Path::new("d/x.csv"), b"a,b\n1\n").unwrap_err();
        assert!(e.to_string().starts_with("cannot read 'd/x.csv'"), "{e}");
    }

    #[test]
    fn spans_merge_consecutive_buckets() {
        let s = RunSeries {
            t: vec![0.0, 1.0, 2.0, 3.0, 4.0],
            outage: vec![None, Some(1.0), Some(0.5), None, Some(1.0)],
            ..RunSeries::default()
        };
        let spans = s.spans(|i| s.outage[i].unwrap_or(0.0) > 0.0);
        assert_eq!(spans, vec![(1.0, 3.0), (4.0, 5.0)]);
    }

    #[test]
    fn summary_fallback_groups_runs_into_cells_in_order() {
        let s = table(
            "run,replication,seed,success_fraction,param_a\n0,0,1,0.5,1\n1,1,2,1,1\n2,0,1,0.25,2\n",
        );
        let sw = Sweep::read(&["a".into()], &s, None).unwrap();
        assert_eq!(sw.cells.len(), 2);
        assert_eq!(sw.cells[0].runs, 2);
        assert_eq!(sw.cells[0].metrics["success_fraction"].mean, 0.75);
        assert_eq!(sw.runs, vec![(0, 0, 0), (1, 1, 0), (2, 0, 1)]);
        assert!(!sw.has_intervals);
        assert_eq!(sw.metrics, vec!["success_fraction".to_string()]);
    }
}
