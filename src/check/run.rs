//! A whole `check`: every scenario validated (plan, expectations, tolerances, baseline)
//! before any runs, then each run in memory and checked, or its baseline written.

use std::path::PathBuf;

use crate::error::{Error, Truncation};
use crate::scenario::{load_file, Overrides};
use crate::sweep::{self, Plan};

use super::baseline::{self, Baseline, Tolerances};
use super::{check_plan, resolve, CheckRow, Expectation};

/// What to check.
#[derive(Debug, Clone)]
pub struct Request {
    /// Scenario files.
    pub scenarios: Vec<PathBuf>,
    /// Overrides applied to every scenario.
    pub overrides: Overrides,
    /// The baseline to compare with (or to write).
    pub baseline: Option<PathBuf>,
    /// Largest relative drift from the baseline (`[check.tolerance]` overrides it).
    pub tolerance: f64,
    /// Write the baseline instead of comparing with it.
    pub write_baseline: bool,
    /// Let `write_baseline` replace a file that is not a baseline.
    pub force: bool,
    /// Worker threads (`None` = all cores).
    pub jobs: Option<usize>,
}

/// A scenario of a check, validated before anything runs.
#[derive(Debug)]
pub struct Prepared {
    /// Its plan.
    pub plan: Plan,
    expectations: Vec<Expectation>,
    tolerances: Tolerances,
    baseline: Option<Baseline>,
}

/// What checking one scenario found.
#[derive(Debug)]
pub struct Checked {
    /// The scenario file as given.
    pub path: String,
    /// The scenario's name.
    pub name: String,
    /// Its grid cells (1 without `[sweep]`).
    pub cells: usize,
    /// Replications per cell.
    pub replications: u32,
    /// Its check rows (expectations, then baseline drift).
    pub rows: Vec<CheckRow>,
    /// The baseline written, and its cells.
    pub wrote_baseline: Option<(PathBuf, usize)>,
    /// It has no expectation and no baseline was given.
    pub nothing_to_check: bool,
    /// Its runs that stopped early: the check cannot pass.
    pub truncation: Option<Truncation>,
}

/// Checks the request's flags and every scenario; each bad one is an error, and
/// nothing runs if any is.
pub fn prepare(req: &Request) -> Result<Vec<Prepared>, Vec<Error>> {
    if req.write_baseline && req.baseline.is_none() {
        return Err(vec![Error::bad_input(
            "--write-baseline needs --baseline FILE.csv: the file to write",
        )]);
    }
    if req.baseline.is_some() && req.scenarios.len() != 1 {
        return Err(vec![Error::bad_input(format!(
            "--baseline holds the summary of one scenario: give exactly one (found {})",
            req.scenarios.len()
        ))]);
    }
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for p in &req.scenarios {
        match prepare_one(p, req) {
            Ok(c) => ok.push(c),
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        Err(bad)
    }
}

fn prepare_one(path: &std::path::Path, req: &Request) -> Result<Prepared, Error> {
    let plan = sweep::plan(load_file(Some(path), &req.overrides)?)?;
    let expectations = resolve(&plan)?;
    let tolerances = baseline::tolerances(&plan, req.tolerance)?;
    let baseline = match &req.baseline {
        Some(b) if !req.write_baseline => {
            let base = baseline::read(b)?;
            base.check_shape(&plan)?;
            Some(base)
        }
        Some(b) => {
            baseline::may_overwrite(b, req.force)?;
            None
        }
        None => None,
    };
    Ok(Prepared {
        plan,
        expectations,
        tolerances,
        baseline,
    })
}

/// Runs and checks every prepared scenario in order; `starting` is told of each
/// before its runs start.
pub fn run_all(
    req: &Request,
    prepared: &[Prepared],
    starting: &mut dyn FnMut(&Plan),
) -> Result<Vec<Checked>, Error> {
    let pool = sweep::pool(req.jobs)?;
    let mut out = Vec::new();
    for c in prepared {
        starting(&c.plan);
        let plan = &c.plan;
        let path = plan.base.source.path.clone();
        let results = sweep::install(pool.as_ref(), || sweep::run_in_memory(plan))?;
        let stopped = crate::run::stopped_at_limits(&results);
        let mut rows = check_plan(plan, &c.expectations, &results);
        if let Some(b) = &c.baseline {
            rows.extend(baseline::compare(plan, b, &c.tolerances, &results)?);
        }
        let writing = req.baseline.as_ref().filter(|_| req.write_baseline);
        let mut wrote_baseline = None;
        if let (Some(file), true) = (writing, stopped.is_empty()) {
            // Again: the file may have changed while the runs ran.
            baseline::may_overwrite(file, req.force)?;
            let text = baseline::render(plan, &results);
            crate::export::write_atomic(file, text.as_bytes())
                .map_err(|e| Error::io("cannot write baseline", file, e))?;
            wrote_baseline = Some((file.clone(), plan.cells.len()));
        }
        let mut consequence = "the summary is incomplete, so the check cannot pass (raise [limits] or shorten the scenario)".to_string();
        if let Some(file) = writing {
            consequence.push_str(&format!("; baseline '{}' was not written", file.display()));
        }
        out.push(Checked {
            nothing_to_check: writing.is_none()
                && c.expectations.is_empty()
                && c.baseline.is_none(),
            truncation: Truncation::of(
                format!("scenario '{path}'"),
                results.len() as u64,
                stopped,
                consequence,
            ),
            path,
            name: plan.base.scenario.name.clone(),
            cells: plan.cells.len(),
            replications: plan.replications,
            rows,
            wrote_baseline,
        });
    }
    Ok(out)
}
