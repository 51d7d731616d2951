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
//! `expect`: by default a bound applies to the value of every grid cell selected by
//! `where` (all cells when absent); `per = "run"` applies it to every run instead.
//!
//! # Baselines
//!
//! A baseline is a CSV file with one row per cell: `cell`, the `param_` columns, then every
//! numeric summary column (means over replications). [`baseline`] describes how a run is
//! compared with it (relative drift, per-metric tolerances, absolute floors).

pub mod baseline;
pub(crate) mod expect;
pub mod report;
pub(crate) mod run;

use thiserror::Error;

use crate::metrics::format::shortest as format_float;
use crate::run::RunResult;
use crate::sweep::aggregate::mean_ci;
use crate::sweep::plan::Plan;

pub use expect::{bound_text, check_groups, check_plan, resolve, within, Expectation, RunValues};
pub use report::{render_failures, render_table};
pub use run::{prepare, run_all, Checked, Request};

/// One line of the check table: a bound (or a baseline value) against what a cell or
/// run produced. The text fields are what the table prints; [`CheckRow::data`] holds
/// the same row as numbers, for the JSON and JUnit reports ([`report`]).
#[derive(Debug, Clone, PartialEq)]
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
    /// The row as data.
    pub data: RowData,
}

/// A check row as data: the cell, the value and the bound as numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct RowData {
    /// The grid cell (an index into the plan's cells); `None` for a metric the baseline
    /// has and this run lacks.
    pub cell: Option<usize>,
    /// The cell's label (`max_attempts=3, rate=200`, `-` without a sweep).
    pub label: String,
    /// The cell's swept values: each key and its value as its `param_` column shows it.
    pub params: Vec<(String, String)>,
    /// The run, for a `per = "run"` expectation.
    pub run: Option<u64>,
    /// The value found (the mean over `runs`, `None` when empty).
    pub value: GroupValue,
    /// What the value is held to.
    pub bound: Bound,
}

/// What a check row's value is held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// An `[[expect]]` bound (`index` in the file's list): `min <= value <= max`.
    Expect {
        /// Its index in the scenario's `[[expect]]` list.
        index: usize,
        /// Lower bound.
        min: Option<f64>,
        /// Upper bound.
        max: Option<f64>,
    },
    /// Drift from a baseline's value: `|drift| <= tolerance`.
    Baseline {
        /// The baseline's value (`None` when the file's field is empty).
        baseline: Option<f64>,
        /// The largest relative drift allowed.
        tolerance: f64,
        /// The relative drift found, when both values are present.
        drift: Option<f64>,
    },
    /// A metric this run has and the baseline lacks: it passes.
    NotInBaseline {
        /// The tolerance it would have been held to.
        tolerance: f64,
    },
    /// A metric the baseline has and this run lacks: it fails.
    Absent,
}

impl RowData {
    /// The data of a row about cell `cell` of `plan`, labelled `label`.
    pub fn of_cell(
        plan: &Plan,
        cell: usize,
        label: &str,
        value: GroupValue,
        bound: Bound,
    ) -> RowData {
        let params = plan
            .params()
            .into_iter()
            .zip(plan.labels(cell).into_iter().map(str::to_string))
            .collect();
        RowData {
            cell: Some(cell),
            label: label.to_string(),
            params,
            run: None,
            value,
            bound,
        }
    }
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
    /// `--write-baseline` would replace a file that is not a baseline.
    #[error("--write-baseline would overwrite '{path}', which is not a retrysim baseline ({reason}); use --force to replace it, or choose another --baseline file")]
    NotABaseline {
        /// The file as given.
        path: String,
        /// Why it does not read as a baseline.
        reason: String,
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
    /// One run's value.
    pub fn single(x: Option<f64>) -> GroupValue {
        GroupValue {
            mean: x,
            empty: usize::from(x.is_none()),
            runs: 1,
        }
    }

    /// The value of `metric` over `runs`, summed in their order (deterministic).
    pub fn of(runs: &[RunResult], metric: &str) -> GroupValue {
        let values: Vec<Option<f64>> = runs
            .iter()
            .map(|r| r.summary.get(metric).and_then(|c| c.as_f64()))
            .map(|v| v.filter(|x| x.is_finite()))
            .collect();
        GroupValue::of_values(&values)
    }

    /// The value over runs whose values are `values` (`None`: empty), summed in order.
    pub fn of_values(values: &[Option<f64>]) -> GroupValue {
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
                .zip(plan.labels(c.index))
                .map(|(k, v)| crate::sweep::label::with_key(k, v))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
