//! A run folder: the base point of a scenario and its replications, written as the
//! runs finish in plan order.

use std::path::{Path, PathBuf};

use crate::export::manifest::{FolderKind, Origin};
use crate::export::owner::{Staged, Want};
use crate::export::{write_atomic, AtomicFile};
use crate::run::{run_one, RunResult};
use crate::scenario::{Loaded, ScenarioError};
use crate::truncation::Truncation;

use super::{batch_size, claim, io_err, plan, run_runs, slim, store, SweepError};

/// What a run folder holds once written.
#[derive(Debug, Clone)]
pub struct RunFolder {
    /// The folder, as the file system resolves it.
    pub dir: PathBuf,
    /// The folder as given.
    pub out: PathBuf,
    /// Runs written.
    pub runs: u64,
    /// The first runs' results, without their series (for a table on screen).
    pub first: Vec<RunResult>,
    /// The runs that stopped early at a limit.
    pub truncation: Option<Truncation>,
}

/// How many runs' results [`RunFolder::first`] keeps.
pub(crate) const RUNS_SHOWN: usize = 20;

/// The plan of a run folder: the scenario's base point, any `[sweep]` left out.
pub(crate) fn base_plan(loaded: &Loaded) -> Result<plan::Plan, SweepError> {
    let mut base = loaded.clone();
    base.file.sweep = None;
    base.table.remove("sweep");
    base.resolved.remove("sweep");
    Ok(plan::plan(base)?)
}

/// One replication of a run folder's tables, in memory: the rows [`run_folder`]
/// writes for it, each table with its header, and the run itself.
#[derive(Debug, Clone)]
pub struct RunTables {
    /// The run (its summary, series and herd).
    pub result: RunResult,
    /// The columns of `summary.csv`, in order.
    pub summary_columns: Vec<String>,
    /// The run's `summary.csv` row, one value a column, as a CSV reader reads the
    /// file's fields back (unquoted).
    pub summary_values: Vec<String>,
    /// `timeseries.csv`: its header and the run's rows.
    pub timeseries: String,
    /// `herd.csv`: its header and the run's rows.
    pub herd: String,
}

/// Runs replication `replication` of the base point of a scenario (any `[sweep]` left
/// out) in memory and renders the rows `retrysim run` writes for it, with the same
/// code and in the same columns, touching no file: the playground runs scenarios so.
/// A replication the scenario does not have is refused.
pub(crate) fn run_tables(loaded: &Loaded, replication: u32) -> Result<RunTables, SweepError> {
    let plan = base_plan(loaded)?;
    if replication >= plan.replications {
        return Err(ScenarioError::Field {
            path: loaded.source.path.clone(),
            field: "replications".into(),
            message: format!(
                "the scenario has {} replications: replication {replication} is not one of them",
                plan.replications
            ),
        }
        .into());
    }
    let run = u64::from(replication);
    let spec = plan.spec(run);
    let scn = plan.loaded(spec.cell)?.scenario;
    let result = run_one(&scn, &plan.layout, run, spec.replication);
    let chunk = store::render_chunk(&plan, &result, &scn);
    let summary_values = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(chunk.summary.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(str::to_string).collect())
        .unwrap_or_default();
    Ok(RunTables {
        result,
        summary_columns: plan.columns.clone(),
        summary_values,
        timeseries: store::timeseries_header_of(&plan) + &chunk.timeseries,
        herd: store::herd_header() + &chunk.herd,
    })
}

/// The files of a traced run: `traces.csv`, `trace.json`.
pub(crate) const TRACE_FILES: [&str; 2] = ["traces.csv", "trace.json"];

/// Traces replication 0 of `plan`'s base point, whose run started `population`
/// logical requests, and writes its `sample` traced requests into `into` (the folder
/// `dir` names, or its staging folder), streaming each file.
fn write_traces(
    plan: &plan::Plan,
    into: &Path,
    population: u64,
    sample: u64,
    dir: &Path,
) -> Result<(), SweepError> {
    use crate::export::trace::{write_csv, write_json};
    let scn = plan.loaded(plan.spec(0).cell)?.scenario;
    let log = crate::run::trace_run(&scn, 0, population, sample);
    let write = |name: &str, render: &dyn Fn(&mut AtomicFile) -> std::io::Result<()>| {
        let mut f = AtomicFile::create(&into.join(name))?;
        render(&mut f)?;
        f.commit()
    };
    let [csv, json] = TRACE_FILES;
    write(csv, &|f| write_csv(&log, f)).map_err(io_err("cannot write the traces of", dir))?;
    write(json, &|f| write_json(&log, f)).map_err(io_err("cannot write the traces of", dir))?;
    Ok(())
}

/// Runs the base point of a scenario (its replications, in parallel; any `[sweep]` is
/// left out) into a run folder: the manifest, then the tables (`aggregate.csv` and
/// `aggregate_long.csv` with replications), written as the runs finish in plan order,
/// so memory does not grow with the number of replications. A folder holding earlier
/// results keeps them until the new ones are complete ([`Staged`]).
pub(crate) fn run_folder(
    loaded: &Loaded,
    dir: &Path,
    origin: &Origin,
    force: bool,
) -> Result<RunFolder, SweepError> {
    let plan = base_plan(loaded)?;
    let want = Want {
        kind: FolderKind::Run,
        identity: origin.identity.clone(),
        fingerprint: None,
        shard: None,
    };
    let claimed = claim(dir, &want, force)?;
    let aggregate = plan.replications > 1;
    let mut files = store::table_files(
        aggregate,
        plan.layout.uses(&crate::metrics::columns::SERVICE_GROUP),
    );
    let trace = loaded.scenario.trace;
    if trace.is_some() {
        files.extend(TRACE_FILES.map(String::from));
    }
    files.sort();
    // Every file may be written (no one else's file in the way) before anything is.
    for f in &files {
        claimed.target(f)?;
    }
    let staged = Staged::begin(claimed)?;
    let d = staged.dir();
    // The manifest first: in a folder written directly, a run killed before its tables
    // leaves a folder that says what it is for, and vouches for the files it was
    // writing.
    let plot = super::plot_table::of(&plan, FolderKind::Run)?;
    let text = super::manifest_of(&plan, FolderKind::Run, origin, &files, &plot).render();
    let m = d.join("manifest.toml");
    write_atomic(&m, text.as_bytes()).map_err(io_err("cannot write", &m))?;
    let mut tables = store::Tables::create(d, &plan, aggregate)
        .map_err(io_err("cannot write the tables of", dir))?;
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    let mut first = Vec::new();
    let mut truncated = Vec::new();
    for batch in all.chunks(batch_size()) {
        for (r, loaded) in run_runs(&plan, batch)? {
            let chunk = store::render_chunk(&plan, &r, &loaded.scenario);
            tables
                .push(&chunk)
                .map_err(io_err("cannot write the tables of", dir))?;
            if let Some(t) = &r.metrics.totals.truncated {
                truncated.push((r.run, Some(t.clone())));
            }
            if first.len() < RUNS_SHOWN {
                first.push(slim(r));
            }
        }
    }
    tables
        .commit()
        .map_err(io_err("cannot write the tables of", dir))?;
    if let (Some(t), Some(r0)) = (trace, first.first()) {
        write_traces(&plan, d, r0.metrics.totals.logical, t.sample, dir)?;
    }
    let out = staged.claimed().dir.clone();
    staged.commit(&files)?;
    Ok(RunFolder {
        dir: out,
        out: dir.to_path_buf(),
        runs: plan.total_runs(),
        first,
        truncation: Truncation::of(
            format!("scenario '{}'", loaded.source.path),
            plan.total_runs(),
            truncated,
            Truncation::marked_in(dir),
        ),
    })
}
