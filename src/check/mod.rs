//! `retrysim check`: expectations on summary columns, and drift against a committed
//! baseline, for gating a change in CI.
//!
//! ```text
//! Loaded ─► sweep::plan ─► expect::resolve, baseline::tolerances   (bad input: exit 2,
//!                          baseline::read + shape                    before anything runs)
//!        ─► sweep::run_in_memory (results in plan order)
//!        ─► check_plan (expectations)  ─┐
//!        ─► baseline::compare or write ─┴─► CheckRow table ─► exit 0 (all pass) / 1
//! ```
//!
//! # What a value is
//!
//! The runs of a plan are grouped by grid cell (a scenario without `[sweep]` is one cell).
//! A metric's value for a cell is the mean of its value over the cell's replications
//! ([`GroupValue`]); it is *empty* when any replication's value is empty (for example
//! `recovery_time_s` of a run that did not recover), so one bad replication cannot hide
//! behind the mean. An empty value fails every `min` or `max` bound.
//!
//! # Expectations
//!
//! `[[expect]]` entries (`metric`, `min`, `max`, `where`, `per`) are described in
//! [`expect`]: by default a bound applies to the value of every grid cell selected by
//! `where` (all cells when absent); `per = "run"` applies it to every run instead.
//!
//! # Baselines
//!
//! A baseline is a CSV file with one row per cell: `cell`, the `param_` columns, then every
//! numeric summary column (means over replications). [`baseline`] describes how a run is
//! compared with it (relative drift, per-metric tolerances, absolute floors).

pub mod baseline;
pub(crate) mod expect;
pub(crate) mod run;

use thiserror::Error;

use crate::metrics::format::shortest as format_float;
use crate::run::RunResult;
use crate::sweep::aggregate::mean_ci;
use crate::sweep::plan::{render_value, Plan};

pub use expect::{check_plan, resolve, Expectation};
pub use run::{prepare, run_all, Checked, Request};

/// One line of the check table: a bound (or a baseline value) against what a cell or
/// run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRow {
    /// The scenario file as given.
    pub scenario: String,
    /// The grid cell (`max_attempts=3, rate=200`), a run (`run 4`), or `-`.
    pub cell: String,
    /// The summary column.
    pub metric: String,
    /// The bound (`<= 1.5`, `>= 0.9`, `in [0.9, 1]`, `within 5% of 0.98`).
    pub bound: String,
    /// The value found (`1.23`, `1.23 (mean of 5)`, `(empty)`).
    pub value: String,
    /// Whether the value meets the bound.
    pub pass: bool,
}

/// What can be wrong with a baseline file (exit 2, bad input).
#[derive(Debug, Error)]
pub enum CheckError {
    /// The file does not exist.
    #[error("baseline '{path}' does not exist: create it with --write-baseline")]
    Missing {
        /// The file as given.
        path: String,
    },
    /// The file could not be read.
    #[error("cannot read baseline '{path}': {source}")]
    Read {
        /// The file as given.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a baseline of this scenario.
    #[error("baseline '{path}': {message}")]
    Baseline {
        /// The file as given.
        path: String,
        /// The rule and what was found.
        message: String,
    },
}

/// A metric's value over a group of runs (a cell's replications, or one run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupValue {
    /// The mean; `None` when no run or any run has no value.
    pub mean: Option<f64>,
    /// Runs whose value is empty.
    pub empty: usize,
    /// Runs in the group.
    pub runs: usize,
}

impl GroupValue {
    /// The value of `metric` over `runs`, summed in their order (deterministic).
    pub fn of(runs: &[RunResult], metric: &str) -> GroupValue {
        let values: Vec<Option<f64>> = runs
            .iter()
            .map(|r| r.summary.get(metric).and_then(|c| c.as_f64()))
            .map(|v| v.filter(|x| x.is_finite()))
            .collect();
        let xs: Vec<f64> = values.iter().flatten().copied().collect();
        let empty = values.len() - xs.len();
        GroupValue {
            mean: if empty == 0 {
                mean_ci(&xs).map(|(m, _, _)| m)
            } else {
                None
            },
            empty,
            runs: values.len(),
        }
    }

    /// The text of the table: `1.23`, `1.23 (mean of 5)`, `(empty)`, `(empty in 2 of 5)`.
    pub fn render(&self) -> String {
        match (self.mean, self.runs) {
            (Some(m), 1) => format_float(m),
            (Some(m), n) => format!("{} (mean of {n})", format_float(m)),
            (None, n) if n > 1 => format!("(empty in {} of {n})", self.empty),
            (None, _) => "(empty)".to_string(),
        }
    }
}

/// Renders a plain value: shortest form, or `(empty)`.
pub fn render_number(x: Option<f64>) -> String {
    x.map_or_else(|| "(empty)".to_string(), format_float)
}

/// The runs of each cell of `plan`, in cell order (results are in plan order).
pub fn cell_runs<'a>(plan: &Plan, results: &'a [RunResult]) -> Vec<&'a [RunResult]> {
    results
        .chunks(plan.replications.max(1) as usize)
        .take(plan.cells.len())
        .collect()
}

/// For each swept key, the shortest dotted suffix that tells it apart from the other
/// keys (`fleets.0.layers.0.max_attempts` → `max_attempts`).
///
/// ```
/// use retrysim::check::short_keys;
/// let keys = ["fleets.0.arrival.rate".to_string(), "fleets.1.arrival.rate".to_string(),
///             "fleets.0.layers.0.max_attempts".to_string()];
/// assert_eq!(short_keys(&keys), ["0.arrival.rate", "1.arrival.rate", "max_attempts"]);
/// ```
pub fn short_keys(keys: &[String]) -> Vec<String> {
    let suffix = |k: &str, n: usize| {
        let parts: Vec<&str> = k.split('.').collect();
        parts[parts.len().saturating_sub(n)..].join(".")
    };
    keys.iter()
        .map(|k| {
            let depth = k.split('.').count();
            (1..=depth)
                .map(|n| suffix(k, n))
                .find(|s| {
                    keys.iter()
                        .filter(|o| *o != k)
                        .all(|o| o != s && !o.ends_with(&format!(".{s}")))
                })
                .unwrap_or_else(|| k.clone())
        })
        .collect()
}

/// The label of each cell of `plan`: `max_attempts=3, rate=200`, or `-` without a sweep.
pub fn cell_labels(plan: &Plan) -> Vec<String> {
    if plan.axes.is_empty() {
        return vec!["-".to_string(); plan.cells.len()];
    }
    let short = short_keys(&plan.params());
    plan.cells
        .iter()
        .map(|c| {
            short
                .iter()
                .zip(&c.values)
                .map(|(k, v)| format!("{k}={}", render_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

/// Renders rows as a table with aligned columns (and a header line).
pub fn render_table(rows: &[CheckRow]) -> String {
    let header = ["scenario", "cell", "metric", "bound", "value", "result"];
    let lines: Vec<[&str; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.scenario.as_str(),
                r.cell.as_str(),
                r.metric.as_str(),
                r.bound.as_str(),
                r.value.as_str(),
                if r.pass { "pass" } else { "FAIL" },
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for l in &lines {
        for (w, f) in widths.iter_mut().zip(l) {
            *w = (*w).max(f.chars().count());
        }
    }
    let mut out = String::new();
    for l in std::iter::once(&header).chain(&lines) {
        let mut line = String::new();
        for (i, (f, w)) in l.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(f);
            line.extend(std::iter::repeat_n(' ', w - f.chars().count()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One line per failed row: `FAIL scenario cell metric: value not bound`.
pub fn render_failures(rows: &[CheckRow]) -> String {
    rows.iter()
        .filter(|r| !r.pass)
        .map(|r| {
            format!(
                "FAIL {} {} {}: {} not {}\n",
                r.scenario, r.cell, r.metric, r.value, r.bound
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cell: &str, pass: bool) -> CheckRow {
        CheckRow {
            scenario: "s.toml".into(),
            cell: cell.into(),
            metric: "amplification".into(),
            bound: "<= 1.5".into(),
            value: "2.25".into(),
            pass,
        }
    }

    #[test]
    fn the_table_aligns_its_columns_and_names_failures() {
        let rows = [row("max_attempts=1", true), row("max_attempts=10", false)];
        let t = render_table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        let col = |l: &str| l.find("amplification").unwrap();
        assert_eq!(col(lines[1]), col(lines[2]));
        assert_eq!(lines[0].find("metric"), Some(col(lines[1])));
        assert!(lines[1].ends_with("pass") && lines[2].ends_with("FAIL"));
        assert_eq!(
            render_failures(&rows),
            "FAIL s.toml max_attempts=10 amplification: 2.25 not <= 1.5\n"
        );
    }

    #[test]
    fn group_values_render_their_mean_and_their_empties() {
        let g = |mean, empty, runs| GroupValue { mean, empty, runs };
        assert_eq!(g(Some(1.5), 0, 1).render(), "1.5");
        assert_eq!(g(Some(1.5), 0, 5).render(), "1.5 (mean of 5)");
        assert_eq!(g(None, 1, 1).render(), "(empty)");
        assert_eq!(g(None, 2, 5).render(), "(empty in 2 of 5)");
    }

    #[test]
    fn short_keys_are_unique_suffixes() {
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(short_keys(&k(&["a.b.c"])), ["c"]);
        assert_eq!(short_keys(&k(&["x.c", "y.c"])), ["x.c", "y.c"]);
        assert_eq!(short_keys(&k(&["c", "x.c"])), ["c", "x.c"]);
        assert_eq!(
            short_keys(&k(&["fleets.*.layers.*.backoff.jitter", "duration"])),
            ["jitter", "duration"]
        );
    }
}
