//! The `[[expect]]` results of a result folder, for the report: the expectations its
//! manifest records resolved against its grid (`[[plot.expect]]`, see
//! [`crate::export::manifest::Plot`]), evaluated on its `summary.csv` with the helpers
//! `retrysim check` uses (the value of a cell, the bound, the pass), so the report's
//! PASS/FAIL rows are the ones `check` prints for the same runs. The scenario is not
//! read again: an old folder is judged by the expectations it was written with.
//!
//! A run folder holds the base scenario's runs only (no grid): its expectations that
//! select sweep cells with `where` were left out when it was written, and counted.

use std::collections::BTreeMap;

use crate::check::{bound_text, render_number, short_keys, within, GroupValue};
use crate::export::manifest::{Expect, ExpectPer};
use crate::metrics::columns::RUN;

use super::table::{parse_number, CsvTable};
use super::Folder;

/// Why the expectations of a folder whose manifest predates `[plot]` are not evaluated.
pub(crate) const OLD_MANIFEST: &str = "this folder's manifest.toml was written by an older retrysim, without the [plot] table that holds them resolved (run the same command again to write it, or evaluate them with `retrysim check`)";

/// One PASS/FAIL row of the report: an expectation against a cell's (or a run's) value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExpectRow {
    /// The summary column.
    pub(crate) metric: String,
    /// The bound (`<= 1.5`, `>= 0.9`, `in [0.9, 1]`).
    pub(crate) bound: String,
    /// The value found (`1.23`, `1.23 (mean of 5)`, `(empty)`).
    pub(crate) value: String,
    /// The grid cell (`max_attempts=3, rate=200`), a run (`run 4`), or `-`.
    pub(crate) cell: String,
    /// Whether the value meets the bound.
    pub(crate) pass: bool,
}

/// What the report says about the folder's expectations.
#[derive(Debug, Default)]
pub(crate) struct Expectations {
    /// One row per expectation and cell (or run), in the order `check` prints them.
    pub(crate) rows: Vec<ExpectRow>,
    /// Expectations left out: they select sweep cells and the folder is a run's.
    pub(crate) skipped: usize,
    /// Why none could be evaluated.
    pub(crate) error: Option<String>,
}

impl Expectations {
    /// The metrics the expectations name, in their order, once each.
    pub(crate) fn metrics(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.metric.as_str()) {
                out.push(&r.metric);
            }
        }
        out
    }

    fn failed(error: String) -> Expectations {
        Expectations {
            error: Some(error),
            ..Expectations::default()
        }
    }
}

/// One row of `summary.csv`: a run and its values.
struct Row<'a> {
    table: &'a CsvTable,
    run: u64,
    row: usize,
}

impl Row<'_> {
    /// The run's value of `metric`, `None` when empty or not finite.
    fn value(&self, metric: &str) -> Option<f64> {
        let i = self.table.index(metric).ok()?;
        parse_number(&self.table.rows[self.row][i])
            .ok()
            .flatten()
            .filter(|x| x.is_finite())
    }
}

/// The folder's grid as its manifest records it: per swept key the labels of its
/// values, and the keys' short names (`check`'s, for the cell labels).
struct Grid<'a> {
    labels: &'a [Vec<String>],
    short: Vec<String>,
    /// How many cells: the product of the keys' numbers of values.
    cells: u64,
}

impl Grid<'_> {
    /// Each key's value index in cell `cell`: `cell` in mixed radix, the last key
    /// fastest.
    fn picks(&self, cell: u64) -> Vec<usize> {
        let mut rest = cell;
        let mut picks = vec![0; self.labels.len()];
        for (a, l) in self.labels.iter().enumerate().rev() {
            let n = (l.len() as u64).max(1);
            picks[a] = (rest % n) as usize;
            rest /= n;
        }
        picks
    }

    /// A cell's label as `check` prints it: `max_attempts=3, rate=200`, `-` without a
    /// grid.
    fn label(&self, picks: &[usize]) -> String {
        if self.labels.is_empty() {
            return "-".to_string();
        }
        self.short
            .iter()
            .zip(self.labels.iter().zip(picks))
            .map(|(k, (l, &p))| {
                crate::sweep::label::with_key(k, l.get(p).map_or("", String::as_str))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An expectation's selection: per constrained key (its index), the labels selected.
type Selection<'a> = Vec<(usize, Vec<&'a str>)>;

/// The selection of `e` (the `i`th of the list) over the swept keys `params`.
fn selection<'a>(e: &'a Expect, i: usize, params: &[String]) -> Result<Selection<'a>, String> {
    let bad = |what: String| format!("manifest.toml: plot.expect[{i}].select: {what}");
    let mut out = Vec::new();
    for (key, v) in &e.select {
        let axis = params
            .iter()
            .position(|p| p == key)
            .ok_or_else(|| bad(format!("'{key}' is not a swept key of run.params")))?;
        let labels = v
            .as_array()
            .and_then(|a| {
                a.iter()
                    .map(toml::Value::as_str)
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| bad(format!("{key} must be a list of labels")))?;
        out.push((axis, labels));
    }
    Ok(out)
}

/// Evaluates the expectations `folder`'s manifest records on its summary rows.
pub(crate) fn evaluate(folder: &Folder) -> Expectations {
    let m = &folder.manifest;
    let Some(plot) = &m.plot else {
        let any = m
            .scenario
            .get("expect")
            .and_then(toml::Value::as_array)
            .is_some_and(|a| !a.is_empty());
        return if any {
            Expectations::failed(OLD_MANIFEST.to_string())
        } else {
            Expectations::default()
        };
    };
    if let Some(e) = &plot.expect_error {
        return Expectations::failed(e.clone());
    }
    let skipped = plot.expect_skipped as usize;
    if plot.expect.is_empty() {
        return Expectations {
            skipped,
            ..Expectations::default()
        };
    }
    let selections = match plot
        .expect
        .iter()
        .enumerate()
        .map(|(i, e)| selection(e, i, &m.run.params))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(s) => s,
        Err(e) => return Expectations::failed(e),
    };
    let s = &folder.summary;
    let runs = match s.integers(RUN.name) {
        Ok(r) => r,
        Err(e) => return Expectations::failed(e.to_string()),
    };
    let grid = Grid {
        labels: &plot.labels,
        short: short_keys(&m.run.params),
        cells: plot
            .labels
            .iter()
            .try_fold(1u64, |n, l| n.checked_mul(l.len() as u64))
            .unwrap_or(u64::MAX),
    };
    // Runs are numbered in plan order: run r is of cell r / replications.
    let reps = m.run.replications.unwrap_or(1).max(1) as u64;
    let mut groups: BTreeMap<u64, Vec<Row>> = BTreeMap::new();
    for (row, &run) in runs.iter().enumerate() {
        let cell = if grid.labels.is_empty() {
            0
        } else {
            run / reps
        };
        if cell < grid.cells {
            groups
                .entry(cell)
                .or_default()
                .push(Row { table: s, run, row });
        }
    }
    let cells: Vec<(Vec<usize>, &Vec<Row>)> =
        groups.iter().map(|(&c, g)| (grid.picks(c), g)).collect();
    let mut rows = Vec::new();
    for (e, sel) in plot.expect.iter().zip(&selections) {
        let bound = bound_text(e.min, e.max);
        for (picks, runs) in &cells {
            let selected = sel.iter().all(|(a, labels)| {
                grid.labels
                    .get(*a)
                    .and_then(|l| picks.get(*a).and_then(|&p| l.get(p)))
                    .is_some_and(|l| labels.contains(&l.as_str()))
            });
            if !selected {
                continue;
            }
            let label = grid.label(picks);
            let row = |cell: String, value: String, mean: Option<f64>| ExpectRow {
                metric: e.metric.clone(),
                bound: bound.clone(),
                value,
                cell,
                pass: within(e.min, e.max, mean),
            };
            match e.per {
                ExpectPer::Cell => {
                    let values: Vec<Option<f64>> =
                        runs.iter().map(|r| r.value(&e.metric)).collect();
                    let g = GroupValue::of_values(&values);
                    rows.push(row(label, g.render(), g.mean));
                }
                ExpectPer::Run => {
                    for r in runs.iter() {
                        let v = r.value(&e.metric);
                        let cell = if grid.labels.is_empty() {
                            format!("run {}", r.run)
                        } else {
                            format!("run {} ({label})", r.run)
                        };
                        rows.push(row(cell, render_number(v), v));
                    }
                }
            }
        }
    }
    Expectations {
        rows,
        skipped,
        error: None,
    }
}
