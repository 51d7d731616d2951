//! Comparing two result folders metric by metric: the review of a policy change.
//!
//! Two folders written by `retrysim run` or `retrysim sweep` (each holds `summary.csv`
//! and `manifest.toml`) are compared run by run: the row of run `i` in A's summary is
//! paired with the row of run `i` in B's (the same grid cell and replication), once both
//! are known to hold the same runs, each once, with the same `param_` columns and
//! values. Every value compared must be a finite number (or empty): NaN or an infinity
//! would pass any gate.
//! For each cell (the rows sharing their `param_` values; the whole folder without a
//! sweep) and each numeric metric, [`compare`] gives the means of A and B, the mean
//! paired difference `B − A` with its 95% Student t interval on the differences
//! (`n − 1` degrees of freedom, [`Moments::ci`]), and the relative change.
//!
//! When both folders ran the same seeds (common random numbers), the noise common to
//! the two runs of a pair cancels in the difference and the interval is tight: the
//! result says whether the `seed` columns match.
//!
//! A [`FailOn`] bound (`--fail-on METRIC:BOUND`) turns the comparison into a gate:
//! `BOUND` is a number with an explicit sign, an absolute bound on the mean of `B − A`
//! (`-0.01`: fail when it is below −0.01; `+5`: fail when it is above 5), or with a
//! trailing `%` a bound relative to A's mean (`+10%`: fail when `B − A` exceeds 10% of
//! `|mean A|`).

use std::path::{Path, PathBuf};

use crate::metrics::columns::{is_identity, is_metric, PARAM_PREFIX};
use crate::metrics::interval::Moments;
use crate::Error;

/// One folder's summary as read: its scenario, header and rows.
#[derive(Debug, Clone)]
pub(crate) struct Side {
    /// The folder.
    pub dir: PathBuf,
    /// The scenario's name, from `manifest.toml`.
    pub scenario: String,
    /// The header of `summary.csv`.
    pub columns: Vec<String>,
    /// The rows of `summary.csv`, as written.
    pub rows: Vec<Vec<String>>,
}

/// One metric of one cell compared.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricDiff {
    /// The summary column.
    pub metric: String,
    /// Pairs in which both runs have a value.
    pub n: u64,
    /// Mean of A over those pairs.
    pub mean_a: f64,
    /// Mean of B over those pairs.
    pub mean_b: f64,
    /// Mean paired difference `B − A`.
    pub diff: f64,
    /// Low end of the difference's 95% interval (equal to `diff` for one pair).
    pub low: f64,
    /// High end of the difference's 95% interval.
    pub high: f64,
    /// `diff / |mean_a|`; `None` when A's mean is 0.
    pub relative: Option<f64>,
}

/// One grid cell compared.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CellDiff {
    /// The cell's `param_` values as `key=value, ...` (empty without a sweep).
    pub label: String,
    /// The runs (pairs) of the cell.
    pub pairs: usize,
    /// The metrics, in summary column order.
    pub metrics: Vec<MetricDiff>,
}

/// The comparison of two folders.
#[derive(Debug, Clone)]
pub(crate) struct Diff {
    /// Folder A, as read.
    pub a: Side,
    /// Folder B, as read.
    pub b: Side,
    /// Pairs whose two runs have the same seed.
    pub same_seeds: usize,
    /// The metrics both summaries have, in A's column order.
    pub known: Vec<String>,
    /// The metrics skipped because every pair lacks a value in A or B.
    pub skipped: Vec<String>,
    /// One entry per cell, in plan order.
    pub cells: Vec<CellDiff>,
}

impl Diff {
    /// Number of paired runs.
    pub(crate) fn pairs(&self) -> usize {
        self.a.rows.len()
    }
}

/// Reads a folder's `summary.csv` and its manifest's scenario name.
pub(crate) fn read_side(dir: &Path) -> Result<Side, Error> {
    let manifest = dir.join("manifest.toml");
    let text = crate::export::read::read_to_string(&manifest, crate::export::MAX_MANIFEST_BYTES)
        .map_err(|e| {
            Error::bad_input(format!(
                "'{}' is not a result folder: cannot read '{}': {e}",
                dir.display(),
                manifest.display()
            ))
        })?;
    let table: toml::Table = text.parse().map_err(|e| {
        Error::bad_input(format!(
            "'{}' is not a manifest retrysim wrote: {e}",
            manifest.display()
        ))
    })?;
    let scenario = table
        .get("run")
        .and_then(|r| r.get("scenario"))
        .and_then(|s| s.as_str())
        .ok_or_else(|| {
            Error::bad_input(format!(
                "'{}': no [run] scenario name (is it a manifest retrysim wrote?)",
                manifest.display()
            ))
        })?
        .to_string();
    let file = dir.join("summary.csv");
    let bad = |e: csv::Error| Error::bad_input(format!("'{}': {e}", file.display()));
    let opened = crate::export::read::open_capped(&file, crate::export::read::MAX_TABLE_BYTES)
        .map_err(|e| Error::bad_input(format!("'{}': {e}", file.display())))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(std::io::BufReader::new(opened));
    let columns: Vec<String> = reader
        .headers()
        .map_err(bad)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for r in reader.records() {
        rows.push(r.map_err(bad)?.iter().map(str::to_string).collect());
    }
    Ok(Side {
        dir: dir.to_path_buf(),
        scenario,
        columns,
        rows,
    })
}

/// A summary cell as a number: `true`/`false` are 1/0, empty is `None`; NaN and the
/// infinities are refused (a NaN difference crosses no bound).
fn number(side: &Side, row: usize, col: usize) -> Result<Option<f64>, Error> {
    let s = side.rows[row].get(col).map_or("", |f| f.trim());
    let bad = |what: &str| {
        Error::bad_input(format!(
            "'{}': row {}, column '{}': '{}' is not {what}",
            side.dir.join("summary.csv").display(),
            row + 1,
            side.columns[col],
            crate::scenario::error::shown(s)
        ))
    };
    match s {
        "" => Ok(None),
        "true" => Ok(Some(1.0)),
        "false" => Ok(Some(0.0)),
        _ => match s.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            Ok(_) => Err(bad(
                "a finite number (NaN and infinities cannot be compared)",
            )),
            Err(_) => Err(bad("a number")),
        },
    }
}

fn param_columns(s: &Side) -> Vec<&str> {
    s.columns
        .iter()
        .filter(|c| c.starts_with(PARAM_PREFIX))
        .map(String::as_str)
        .collect()
}

fn index(s: &Side, name: &str) -> Option<usize> {
    s.columns.iter().position(|c| c == name)
}

/// The run index of every row of `side` (its `run` column), each run once.
fn run_indices(side: &Side) -> Result<Vec<u64>, Error> {
    let file = side.dir.join("summary.csv");
    let col = index(side, "run").ok_or_else(|| {
        Error::bad_input(format!(
            "'{}' has no 'run' column: it is not a summary retrysim wrote",
            file.display()
        ))
    })?;
    let mut seen = std::collections::HashMap::with_capacity(side.rows.len());
    let mut runs = Vec::with_capacity(side.rows.len());
    for (i, row) in side.rows.iter().enumerate() {
        let text = row.get(col).map_or("", String::as_str);
        let run: u64 = text.trim().parse().map_err(|_| {
            Error::bad_input(format!(
                "'{}': row {}, column 'run': '{}' is not a run index (a whole number)",
                file.display(),
                i + 1,
                crate::scenario::error::shown(text)
            ))
        })?;
        if let Some(j) = seen.insert(run, i) {
            return Err(Error::bad_input(format!(
                "'{}': rows {} and {} are both run {run}: a summary holds each run once",
                file.display(),
                j + 1,
                i + 1
            )));
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Pairs the rows of `a` and `b` by run index: for each row of A (in A's order), the
/// row of B with the same `run`. Both must hold the same runs.
fn pair_rows(a: &Side, b: &Side) -> Result<Vec<usize>, Error> {
    let (ra, rb) = (run_indices(a)?, run_indices(b)?);
    let in_b: std::collections::HashMap<u64, usize> =
        rb.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    ra.iter()
        .map(|r| {
            in_b.get(r).copied().ok_or_else(|| {
                Error::bad_input(format!(
                    "the folders do not pair: run {r} is in '{}' but not in '{}' (compare folders of the same plan: cells × replications)",
                    a.dir.display(),
                    b.dir.display()
                ))
            })
        })
        .collect()
}

/// Checks that `a` and `b` pair run by run: the same runs, the same `param_` columns,
/// and the same values in the two rows of each run; returns B's row of each of A's.
fn check_pairing(a: &Side, b: &Side) -> Result<Vec<usize>, Error> {
    let (pa, pb) = (param_columns(a), param_columns(b));
    if pa != pb {
        return Err(Error::bad_input(format!(
            "the folders do not pair: '{}' has swept columns [{}], '{}' has [{}]",
            a.dir.display(),
            pa.join(", "),
            b.dir.display(),
            pb.join(", ")
        )));
    }
    if a.rows.len() != b.rows.len() {
        return Err(Error::bad_input(format!(
            "the folders do not pair: '{}' has {} runs, '{}' has {} (compare folders of the same plan: cells × replications)",
            a.dir.display(),
            a.rows.len(),
            b.dir.display(),
            b.rows.len()
        )));
    }
    let pairs = pair_rows(a, b)?;
    let run = index(a, "run").unwrap_or(0);
    for p in &pa {
        let (ia, ib) = (index(a, p).unwrap_or(0), index(b, p).unwrap_or(0));
        for (ra, &j) in a.rows.iter().zip(&pairs) {
            let rb = &b.rows[j];
            if ra.get(ia) != rb.get(ib) {
                return Err(Error::bad_input(format!(
                    "the folders do not pair: run {} has {p} = '{}' in '{}' but '{}' in '{}'",
                    ra.get(run).map_or("", String::as_str),
                    ra.get(ia).map_or("", String::as_str),
                    a.dir.display(),
                    rb.get(ib).map_or("", String::as_str),
                    b.dir.display()
                )));
            }
        }
    }
    Ok(pairs)
}

/// The cells of `side`: a label and its row indices, in order of first appearance.
fn cells(side: &Side) -> Vec<(String, Vec<usize>)> {
    let params: Vec<(usize, &str)> = side
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.starts_with(PARAM_PREFIX))
        .map(|(i, c)| (i, &c[PARAM_PREFIX.len()..]))
        .collect();
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (r, row) in side.rows.iter().enumerate() {
        let label = params
            .iter()
            .map(|(i, k)| format!("{k}={}", row.get(*i).map_or("", String::as_str)))
            .collect::<Vec<_>>()
            .join(", ");
        match at.get(&label) {
            Some(&c) => out[c].1.push(r),
            None => {
                at.insert(label.clone(), out.len());
                out.push((label, vec![r]));
            }
        }
    }
    out
}

/// Compares folders `a` and `b`; `only` (when not empty) restricts to those metrics.
/// Bad input (exit 2): a folder that is not one, summaries that do not pair, a metric
/// of `only` that is not in both summaries, a value that is not a finite number.
pub(crate) fn compare(a: &Path, b: &Path, only: &[String]) -> Result<Diff, Error> {
    let (a, b) = (read_side(a)?, read_side(b)?);
    // B's row of each of A's rows.
    let pairs = check_pairing(&a, &b)?;
    let known: Vec<String> = a
        .columns
        .iter()
        .filter(|c| is_metric(c) && !is_identity(c) && index(&b, c).is_some())
        .cloned()
        .collect();
    for m in only {
        if !known.contains(m) {
            return Err(unknown_metric("--metric", m, &known));
        }
    }
    let chosen: Vec<&String> = known
        .iter()
        .filter(|m| only.is_empty() || only.contains(m))
        .collect();
    let same_seeds = match (index(&a, "seed"), index(&b, "seed")) {
        (Some(ia), Some(ib)) => a
            .rows
            .iter()
            .zip(&pairs)
            .filter(|(ra, &j)| ra.get(ia) == b.rows[j].get(ib))
            .count(),
        _ => 0,
    };
    let mut out = Vec::new();
    let mut seen = vec![false; chosen.len()];
    let cols: Vec<(usize, usize)> = chosen
        .iter()
        .map(|m| (index(&a, m).unwrap_or(0), index(&b, m).unwrap_or(0)))
        .collect();
    for (label, rows) in cells(&a) {
        let mut metrics = Vec::new();
        for (k, m) in chosen.iter().enumerate() {
            let (ia, ib) = cols[k];
            let (mut ma, mut mb, mut md) =
                (Moments::default(), Moments::default(), Moments::default());
            for &r in &rows {
                if let (Some(x), Some(y)) = (number(&a, r, ia)?, number(&b, pairs[r], ib)?) {
                    ma.push(x);
                    mb.push(y);
                    md.push(y - x);
                }
            }
            let (Some((mean_a, _, _)), Some((mean_b, _, _)), Some((diff, low, high))) =
                (ma.ci(), mb.ci(), md.ci())
            else {
                continue;
            };
            seen[k] = true;
            metrics.push(MetricDiff {
                metric: (*m).clone(),
                n: md.n(),
                mean_a,
                mean_b,
                diff,
                low,
                high,
                relative: (mean_a != 0.0).then(|| diff / mean_a.abs()),
            });
        }
        out.push(CellDiff {
            label,
            pairs: rows.len(),
            metrics,
        });
    }
    let skipped = chosen
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(m, _)| (*m).clone())
        .collect();
    Ok(Diff {
        a,
        b,
        same_seeds,
        known,
        skipped,
        cells: out,
    })
}

/// The error of a metric name (of `flag`) not among `known`.
pub(crate) fn unknown_metric(flag: &str, name: &str, known: &[String]) -> Error {
    Error::bad_input(format!(
        "{flag} '{name}': no such metric in both summaries; known: {}",
        known.join(", ")
    ))
}

/// A `--fail-on METRIC:BOUND` gate (see the module docs for the syntax).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FailOn {
    /// The metric.
    pub metric: String,
    /// The bound: positive an upper bound on `B − A`, negative a lower one.
    pub bound: f64,
    /// Whether the bound is a fraction of `|mean A|` (written with `%`).
    pub relative: bool,
    /// The bound as written.
    pub text: String,
}

/// Reads `METRIC:BOUND`, `BOUND` being `+X`, `-X`, `+X%` or `-X%` (X a number > 0).
pub(crate) fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    let shown = crate::scenario::error::shown(s);
    let syntax = "expected METRIC:BOUND with BOUND a signed number, optionally with %: \
                  `success_fraction:-0.01` (fail when B − A < −0.01), \
                  `latency_p99_ms:+10%` (fail when B − A > 10% of A's mean)";
    let Some((metric, bound)) = s.rsplit_once(':') else {
        return Err(format!("'{shown}': {syntax}"));
    };
    let b = bound.trim();
    let (sign, rest) = match b.chars().next() {
        Some('+') => (1.0, &b[1..]),
        Some('-') => (-1.0, &b[1..]),
        _ => {
            return Err(format!(
                "'{shown}': the bound needs its sign (`+` an upper bound on B − A, `-` a lower bound); {syntax}"
            ))
        }
    };
    let (num, relative) = match rest.strip_suffix('%') {
        Some(n) => (n, true),
        None => (rest, false),
    };
    let x: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("'{shown}': the bound's size must be a number above 0; {syntax}"))?;
    if metric.trim().is_empty() {
        return Err(format!("'{shown}': no metric; {syntax}"));
    }
    Ok(FailOn {
        metric: metric.trim().to_string(),
        bound: sign * if relative { x / 100.0 } else { x },
        relative,
        text: b.to_string(),
    })
}

impl FailOn {
    /// The limit on `B − A` for a cell whose A mean is `mean_a`.
    pub(crate) fn limit(&self, mean_a: f64) -> f64 {
        if self.relative {
            self.bound * mean_a.abs()
        } else {
            self.bound
        }
    }

    /// Whether `m`'s mean difference crosses the bound (below a lower one, above an
    /// upper one).
    pub(crate) fn crossed(&self, m: &MetricDiff) -> bool {
        let limit = self.limit(m.mean_a);
        if self.bound < 0.0 {
            m.diff < limit
        } else {
            m.diff > limit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        let m = MetricDiff {
            metric: "x".into(),
            n: 2,
            mean_a: 100.0,
            mean_b: 111.0,
            diff: 11.0,
            low: 10.0,
            high: 12.0,
            relative: Some(0.11),
        };
        assert!(parse_fail_on("x:+10%").unwrap().crossed(&m));
        assert!(!parse_fail_on("x:+11").unwrap().crossed(&m));
        assert!(!parse_fail_on("x:-1").unwrap().crossed(&m));
        assert!(parse_fail_on("x:+").is_err());
        assert!(parse_fail_on("x:+0").is_err());
        assert!(parse_fail_on(":+1").is_err());
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn parse_fail_on_example() {
        use crate::diff::parse_fail_on;
        let f = parse_fail_on("latency_p99_ms:+10%").unwrap();
        assert_eq!((f.bound, f.relative), (0.1, true));
        assert_eq!(
            parse_fail_on("success_fraction:-0.01").unwrap().bound,
            -0.01
        );
        assert!(parse_fail_on("amplification:0.1").is_err());
    }
}
