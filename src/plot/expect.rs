//! The `[[expect]]` results of a result folder, for the report: the expectations of
//! the scenario its manifest records, evaluated on its `summary.csv` by the code
//! `retrysim check` uses ([`crate::check::check_groups`]), so the report's PASS/FAIL
//! rows are the ones `check` prints for the same runs.
//!
//! A run folder holds the base scenario's runs only (no grid): its expectations that
//! select sweep cells with `where` are left out, and counted.

use crate::check::{check_groups, resolve, CheckRow, RunValues};
use crate::metrics::columns::RUN;

use super::data::FolderKind;
use super::table::{parse_number, CsvTable};
use super::Folder;

/// What the report says about the folder's expectations.
#[derive(Debug, Default)]
pub(crate) struct Expectations {
    /// One row per expectation and cell (or run), in the order `check` prints them.
    pub(crate) rows: Vec<CheckRow>,
    /// Expectations left out: they select sweep cells and the folder is a run's.
    pub(crate) skipped: usize,
    /// Why none could be evaluated (the manifest's scenario no longer loads).
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
}

/// One row of `summary.csv`, as a run's values.
struct Row<'a> {
    table: &'a CsvTable,
    run: u64,
    row: usize,
}

impl RunValues for Row<'_> {
    fn run(&self) -> u64 {
        self.run
    }

    fn value(&self, metric: &str) -> Option<f64> {
        let i = self.table.index(metric).ok()?;
        parse_number(&self.table.rows[self.row][i])
            .ok()
            .flatten()
            .filter(|x| x.is_finite())
    }
}

/// Evaluates the expectations of `folder`'s scenario on its summary rows.
pub(crate) fn evaluate(folder: &Folder) -> Expectations {
    let m = &folder.manifest;
    let source = crate::scenario::Source {
        path: m
            .run
            .source
            .clone()
            .unwrap_or_else(|| "<manifest scenario>".into()),
        stem: m.scenario_name().to_string(),
        text: String::new(),
    };
    let failed = |e: String| Expectations {
        error: Some(e),
        ..Expectations::default()
    };
    let mut loaded = match crate::scenario::from_table(&source, m.scenario.clone()) {
        Ok(l) => l,
        Err(e) => return failed(e.to_string()),
    };
    let mut skipped = 0;
    if m.run.kind == FolderKind::Run {
        let before = loaded.file.expect.len();
        loaded.file.expect.retain(|e| e.where_.is_none());
        skipped = before - loaded.file.expect.len();
    }
    if loaded.file.expect.is_empty() {
        return Expectations {
            skipped,
            ..Expectations::default()
        };
    }
    let plan = match crate::sweep::plan::plan(loaded) {
        Ok(p) => p,
        Err(e) => return failed(e.to_string()),
    };
    let expectations = match resolve(&plan) {
        Ok(e) => e,
        Err(e) => return failed(e.to_string()),
    };
    let s = &folder.summary;
    let runs = match s.integers(RUN.name) {
        Ok(r) => r,
        Err(e) => return failed(e.to_string()),
    };
    let rows: Vec<Row> = runs
        .iter()
        .enumerate()
        .map(|(row, &run)| Row { table: s, run, row })
        .collect();
    // Runs are numbered in plan order: run r is of cell r / replications.
    let reps = u64::from(plan.replications.max(1));
    let mut groups: Vec<Vec<&Row>> = vec![Vec::new(); plan.cells.len()];
    for r in &rows {
        let cell = if plan.axes.is_empty() {
            0
        } else {
            (r.run / reps) as usize
        };
        if let Some(g) = groups.get_mut(cell) {
            g.push(r);
        }
    }
    Expectations {
        rows: check_groups(&plan, &expectations, &groups),
        skipped,
        error: None,
    }
}
