//! Sweeps: a grid of scenario variants times replications, run in parallel, written run
//! by run so a sweep can be resumed, sharded over machines and merged back into the
//! same bytes.
//!
//! ```text
//! Loaded ─► plan (cells × replications, validated) ─► runs (rayon, any order)
//!        ─► runs/<run>/ (atomic) ─► assemble in plan order ─► summary, timeseries,
//!           herd, aggregate, manifest
//! ```

pub(crate) mod aggregate;
pub(crate) mod folder;
pub(crate) mod label;
mod merge;
pub(crate) mod plan;
pub(crate) mod plot_table;
pub(crate) mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use thiserror::Error;

use crate::export::manifest::{self, FolderKind, Manifest, Origin, Plot};
use crate::export::owner::{self, Claimed, OwnerError, Refusal, Want};
use crate::export::write_atomic;
use crate::run::{run_one, run_one_until, RunResult};
use crate::scenario::{Loaded, ScenarioError};
use crate::truncation::Truncation;

pub(crate) use folder::{run_folder, run_tables, RunFolder, RunTables};
pub(crate) use merge::{merge, Merged};
pub(crate) use plan::{plan, Plan};

/// A shard: this process runs the runs with `run % count == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard's index, from 0.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "must be I/N, whole numbers with 0 <= I < N, such as 0/4 (found '{}')",
                crate::scenario::error::shown(s)
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// What can go wrong in a sweep or a merge.
#[derive(Debug, Error)]
pub enum SweepError {
    /// The scenario or its sweep is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A file could not be read or written.
    #[error("{what} '{path}': {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An output path cannot be written safely.
    #[error(transparent)]
    Output(#[from] OwnerError),
    /// The output folder holds something else.
    #[error("output folder '{path}' {reason}; use --force to replace it, or choose another --out")]
    Occupied {
        /// The folder.
        path: PathBuf,
        /// What it holds.
        reason: String,
    },
    /// Shards that do not belong together, or an incomplete set.
    #[error("cannot merge: {0}")]
    Merge(String),
    /// A pool of worker threads could not be started.
    #[error("{0}")]
    Pool(String),
    /// The stop flag was set (Ctrl-C).
    #[error("interrupted: {done} of {total} runs are on disk in '{path}'; run the same command again to finish the rest")]
    Interrupted {
        /// Runs finished.
        done: u64,
        /// Runs in the sweep (or shard).
        total: u64,
        /// The folder.
        path: PathBuf,
    },
}

fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> SweepError + 'a {
    move |source| SweepError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// How to run a sweep.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Output folder.
    pub out: PathBuf,
    /// Worker threads (`None` = all cores).
    pub jobs: Option<usize>,
    /// Run only this shard.
    pub shard: Option<Shard>,
    /// Replace a folder that holds other results.
    pub force: bool,
    /// Where the scenario came from (recorded in the manifest; decides ownership).
    pub origin: Origin,
}

/// The output folder of a scenario or sweep named `name` when none is given:
/// `output/<name>/`, or `output/<name>-shard-I-of-N/` for a shard.
pub(crate) fn default_out(name: &str, shard: Option<Shard>) -> PathBuf {
    let root = PathBuf::from("output");
    match shard {
        Some(s) => root.join(format!("{name}-shard-{}-of-{}", s.index, s.count)),
        None => root.join(name),
    }
}

/// Watches a sweep's runs as they finish (a progress bar); called from worker threads.
pub trait Progress: Sync {
    /// The sweep starts: `done` of its `total` runs are already on disk.
    fn start(&self, done: u64, total: u64);
    /// One more run is on disk.
    fn advance(&self);
    /// No more runs will finish.
    fn finish(&self);
}

/// No progress shown.
impl Progress for () {
    fn start(&self, _: u64, _: u64) {}
    fn advance(&self) {}
    fn finish(&self) {}
}

/// What a finished sweep wrote.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Runs in this sweep or shard.
    pub runs: u64,
    /// Runs that were already on disk and were skipped.
    pub resumed: u64,
    /// The runs that stopped early at a limit (a run resumed from disk says only
    /// that it stopped: its summary row does).
    pub truncation: Option<Truncation>,
    /// Runs whose folder on disk was not whole (a file missing or cut short), so they
    /// ran again: each run and what was wrong, naming its folder and file.
    pub rerun: Vec<(u64, String)>,
}

/// The manifest text of a sweep folder of `plan`, or of its shard `shard`.
fn manifest_text(
    plan: &Plan,
    shard: Option<Shard>,
    origin: &Origin,
    files: &[String],
    plot: &Plot,
) -> String {
    let mut m = manifest_of(plan, FolderKind::Sweep, origin, files, plot);
    m.run.shard = shard.map(|s| format!("{}/{}", s.index, s.count));
    m.render()
}

/// The manifest of a `kind` folder of `plan` that will write `files`, with its
/// `[plot]` table `plot` ([`plot_table::of`]).
pub(crate) fn manifest_of(
    plan: &Plan,
    kind: FolderKind,
    origin: &Origin,
    files: &[String],
    plot: &Plot,
) -> Manifest {
    let mut m = Manifest::of(&plan.base, origin, plan.total_runs(), files);
    if kind == FolderKind::Sweep {
        m.run.kind = FolderKind::Sweep;
        m.run.params = plan.params();
        m.run.cells = Some(plan.cells.len() as i64);
    }
    m.plot = Some(plot.clone());
    m
}

/// Reads a folder's manifest: `Ok(None)` when it has none.
pub(crate) fn read_manifest(dir: &Path) -> Result<Option<Manifest>, SweepError> {
    owner::read_manifest(dir)
        .map_err(|reason| SweepError::Merge(format!("'{}' {reason}", dir.display())))
}

/// Claims `dir` for `want` (see [`owner::claim`]), naming the folder as given.
pub(crate) fn claim(dir: &Path, want: &Want, force: bool) -> Result<Claimed, SweepError> {
    let claimed = owner::claim(dir, want, force).map_err(|r| match r {
        Refusal::Occupied(reason) => SweepError::Occupied {
            path: dir.to_path_buf(),
            reason,
        },
        Refusal::Error(e) => e.into(),
    })?;
    std::fs::create_dir_all(&claimed.dir).map_err(io_err("cannot create", dir))?;
    Ok(claimed)
}

/// Checks that every file of `files` may be written in the claimed folder, then writes
/// the manifest that lists them (and what the folder already vouched for).
fn write_manifest(
    claimed: &Claimed,
    files: &mut Vec<String>,
    text: impl FnOnce(&[String]) -> String,
) -> Result<(), SweepError> {
    files.extend(claimed.listed.iter().cloned());
    files.sort();
    files.dedup();
    for f in files.iter() {
        claimed.target(f)?;
    }
    let m = claimed.target("manifest.toml")?;
    write_atomic(&m, text(files).as_bytes()).map_err(io_err("cannot write", &m))
}

/// The files a sweep folder's tables are.
fn sweep_files(complete: bool, graph: bool) -> Vec<String> {
    let mut f = store::table_files(complete, graph);
    f.push(owner::RUNS_ENTRY.to_string());
    f
}

/// Checks that `dir` is empty, or holds results of this same sweep (same fingerprint and
/// shard) that can be resumed; with `force`, replaces what retrysim wrote there.
fn claim_folder(
    dir: &Path,
    plan: &Plan,
    shard: Option<Shard>,
    force: bool,
    origin: &Origin,
) -> Result<Claimed, SweepError> {
    let want = Want {
        kind: FolderKind::Sweep,
        identity: origin.identity.clone(),
        fingerprint: Some(manifest::fingerprint_of(&plan.base)),
        shard: shard.map(|s| format!("{}/{}", s.index, s.count)),
    };
    // What the charts need, every cell built, before the folder is touched.
    let plot = plot_table::of(plan, FolderKind::Sweep)?;
    let claimed = claim(dir, &want, force)?;
    let mut files = sweep_files(
        shard.is_none(),
        plan.layout.uses(&crate::metrics::columns::SERVICE_GROUP),
    );
    write_manifest(&claimed, &mut files, |f| {
        manifest_text(plan, shard, origin, f, &plot)
    })?;
    Ok(claimed)
}

/// Runs a sweep (or one shard of it) into `opts.out`, skipping runs already there, and
/// writes the tables. Plots are the caller's business. Once `stop` is set, no new run
/// starts (those running finish) and the sweep ends as [`SweepError::Interrupted`].
pub(crate) fn run(
    plan: &Plan,
    opts: &Options,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> Result<Outcome, SweepError> {
    let total = plan.total_runs();
    let mine: Vec<u64> = (0..total)
        .filter(|r| opts.shard.is_none_or(|s| r % s.count == s.index))
        .collect();
    // Every cell this process runs is valid before anything is written.
    plan.validate(&mine)?;
    let claimed = claim_folder(&opts.out, plan, opts.shard, opts.force, &opts.origin)?;
    let dir = &claimed.dir;
    let mut done = store::done_runs(dir).map_err(io_err("cannot read", dir))?;
    // A run folder counts as finished only when its files are whole; the others run
    // again.
    let on_disk: Vec<u64> = mine.iter().copied().filter(|r| done.contains(r)).collect();
    let rerun = incomplete(plan, dir, &on_disk, opts.jobs)?;
    for (run, _) in &rerun {
        let d = store::chunk_dir(dir, *run);
        if !std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
            return Err(SweepError::Occupied {
                path: opts.out.clone(),
                reason: format!(
                    "holds '{}', which is not a run folder",
                    store::chunk_dir(Path::new(""), *run).display()
                ),
            });
        }
        store::discard_chunk(dir, *run).map_err(io_err("cannot remove the incomplete run", &d))?;
        done.remove(run);
    }
    let rerun = rerun
        .into_iter()
        .map(|(r, why)| {
            let shown = store::chunk_dir(&opts.out, r);
            (r, format!("'{}': {why}", shown.display()))
        })
        .collect();
    let todo: Vec<u64> = mine.iter().copied().filter(|r| !done.contains(r)).collect();
    progress.start((mine.len() - todo.len()) as u64, mine.len() as u64);
    let work = || -> Result<Vec<Option<String>>, SweepError> {
        // One run per task, so uneven runs still keep every thread busy.
        todo.par_iter()
            .with_max_len(1)
            .map(|&run| {
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let spec = plan.spec(run);
                let loaded = plan.loaded(spec.cell)?;
                let scn = &loaded.scenario;
                let r = run_one(scn, &plan.layout, run, spec.replication);
                let chunk = store::render_chunk(plan, &r, scn);
                store::write_chunk(dir, run, &chunk)
                    .map_err(io_err("cannot write run into", dir))?;
                progress.advance();
                Ok(r.metrics.totals.truncated)
            })
            .collect()
    };
    let results = with_jobs(opts.jobs, work)??;
    progress.finish();
    let done_now = store::done_runs(dir).map_err(io_err("cannot read", dir))?;
    let finished = mine.iter().filter(|r| done_now.contains(r)).count() as u64;
    if finished < mine.len() as u64 {
        return Err(SweepError::Interrupted {
            done: finished,
            total: mine.len() as u64,
            path: opts.out.clone(),
        });
    }
    let on_disk = write_tables(plan, dir, &mine, opts.shard.is_none())?;
    // Runs of this process say why they stopped; runs resumed from disk only that
    // they did (their summary row says so).
    let mut why: std::collections::BTreeMap<u64, Option<String>> = todo
        .iter()
        .zip(results)
        .filter_map(|(&r, t)| t.map(|t| (r, Some(t))))
        .collect();
    for r in on_disk {
        why.entry(r).or_insert(None);
    }
    Ok(Outcome {
        runs: mine.len() as u64,
        resumed: (mine.len() - todo.len()) as u64,
        truncation: Truncation::of(
            format!("sweep '{}'", plan.base.scenario.name),
            mine.len() as u64,
            why.into_iter().collect(),
            Truncation::marked_in(&opts.out),
        ),
        rerun,
    })
}

/// The runs of `runs` in `dir` whose files are not whole, each with what is wrong
/// ([`store::check_chunk`]), in run order; checked in parallel on `jobs` threads.
fn incomplete(
    plan: &Plan,
    dir: &Path,
    runs: &[u64],
    jobs: Option<usize>,
) -> Result<Vec<(u64, String)>, SweepError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let shapes = plan.shapes(runs)?;
    let checked = with_jobs(jobs, || {
        runs.par_iter()
            .map(|&run| {
                let shape = shapes[&plan.spec(run).cell];
                store::check_run(dir, plan, run, shape).map(|why| why.map(|w| (run, w)))
            })
            .collect::<std::io::Result<Vec<_>>>()
    })?
    .map_err(io_err("cannot read the runs in", dir))?;
    Ok(checked.into_iter().flatten().collect())
}

/// Writes the tables of `runs` from their folders, streaming; returns the runs that
/// were truncated.
fn write_tables(
    plan: &Plan,
    dir: &Path,
    runs: &[u64],
    complete: bool,
) -> Result<Vec<u64>, SweepError> {
    let mut truncated = Vec::new();
    store::write_tables(
        dir,
        plan,
        runs,
        |r| {
            let c = store::read_chunk(dir, r)?;
            if store::truncated(plan, &c) {
                truncated.push(r);
            }
            Ok(c)
        },
        complete,
    )
    .map_err(io_err("cannot write the tables of", dir))?;
    Ok(truncated)
}

/// Most worker threads `--jobs` may ask for.
pub(crate) const MAX_JOBS: usize = 1024;

/// A pool of `jobs` worker threads (`None`: the global pool, one per core).
pub(crate) fn pool(jobs: Option<usize>) -> Result<Option<rayon::ThreadPool>, SweepError> {
    jobs.map(|j| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(j.clamp(1, MAX_JOBS))
            .build()
            .map_err(|e| SweepError::Pool(format!("cannot start {j} worker threads: {e}")))
    })
    .transpose()
}

/// Runs `work` on `pool`, or on the global pool when there is none.
pub(crate) fn install<T: Send>(
    pool: Option<&rayon::ThreadPool>,
    work: impl FnOnce() -> T + Send,
) -> T {
    match pool {
        Some(p) => p.install(work),
        None => work(),
    }
}

/// Runs `work` on a pool of `jobs` threads (`None`: the global pool, one per core).
pub(crate) fn with_jobs<T: Send>(
    jobs: Option<usize>,
    work: impl FnOnce() -> T + Send,
) -> Result<T, SweepError> {
    Ok(install(pool(jobs)?.as_ref(), work))
}

/// A run's result without its time series and latency histogram (the summary row has
/// the percentiles): what `check` and the run table need, about 3 KB instead of 75.
fn slim(mut r: RunResult) -> RunResult {
    r.metrics.buckets = Vec::new();
    r.metrics.herd = None;
    let empty = || hdrhistogram::Histogram::new(1).expect("1 significant figure is valid");
    let m = &mut r.metrics;
    (m.latency, m.success_latency, m.failure_latency, m.wait) =
        (empty(), empty(), empty(), empty());
    r
}

/// Runs `runs` of a plan in parallel on the current rayon pool; the results come back
/// in the order given.
fn run_runs(plan: &Plan, runs: &[u64]) -> Result<Vec<(RunResult, Loaded)>, SweepError> {
    runs.par_iter()
        .with_max_len(1)
        .map(|&run| {
            let spec = plan.spec(run);
            let loaded = plan.loaded(spec.cell)?;
            let r = run_one(&loaded.scenario, &plan.layout, run, spec.replication);
            Ok((r, loaded))
        })
        .collect()
}

/// Runs every run of a plan in memory (in parallel on the current rayon pool) and
/// returns the results in plan order, without their time series (a run's series are
/// dropped as it ends, so memory holds summaries only).
pub(crate) fn run_in_memory(plan: &Plan) -> Result<Vec<RunResult>, SweepError> {
    let never = AtomicBool::new(false);
    Ok(run_in_memory_until(plan, &never, true)?.unwrap_or_default())
}

/// [`run_in_memory`], each run slimmed when `slim_each` (else with its series), and
/// stoppable: once `stop` is set no new run starts, runs under way end within a few
/// hundred events, and the result is `None`.
pub(crate) fn run_in_memory_until(
    plan: &Plan,
    stop: &AtomicBool,
    slim_each: bool,
) -> Result<Option<Vec<RunResult>>, SweepError> {
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    plan.validate(&all)?;
    // One parallel pass, one run per task: the runs of a sweep differ in cost (its
    // cells differ in load), so batches with a barrier each, or tasks of several runs,
    // leave a thread idle while another finishes its share. Each run is slimmed as it
    // ends, so memory holds summaries only.
    //
    // The longest runs go first (by [`run_cost`]), so the last tasks are short and no
    // thread idles long while another finishes; the results come back in plan order.
    let costs = (0..plan.cells.len())
        .map(|c| plan.loaded(c).map(|l| run_cost(&l.scenario)))
        .collect::<Result<Vec<f64>, _>>()?;
    let mut order = all;
    order.sort_by(|&a, &b| {
        let cost = |r: u64| costs[plan.spec(r).cell];
        cost(b).total_cmp(&cost(a)).then(a.cmp(&b))
    });
    let done: Vec<Option<(u64, RunResult)>> = order
        .par_iter()
        .with_max_len(1)
        .map(|&run| {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let spec = plan.spec(run);
            let loaded = plan.loaded(spec.cell)?;
            // A run under way when `stop` is set ends within a few hundred events.
            let stopped =
                run_one_until(&loaded.scenario, &plan.layout, run, spec.replication, stop);
            let Some(r) = stopped else {
                return Ok(None);
            };
            Ok(Some((run, if slim_each { slim(r) } else { r })))
        })
        .collect::<Result<_, SweepError>>()?;
    let Some(mut done) = done.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    done.sort_by_key(|&(run, _)| run);
    Ok(Some(done.into_iter().map(|(_, r)| r).collect()))
}

/// A guess at what a run of `scn` costs, to start the costly runs of a sweep first:
/// its offered logical requests times each fleet's worst-case attempts per request
/// (the product of its layers' `max_attempts`, 10 for an unlimited one). Only the
/// order of the guesses matters.
fn run_cost(scn: &crate::scenario::Scenario) -> f64 {
    let secs = crate::engine::time::to_secs(scn.duration);
    scn.fleets
        .iter()
        .map(|f| {
            let attempts: f64 = f
                .layers
                .iter()
                .map(|l| l.max_attempts.as_f64().min(10.0))
                .product();
            f.offered_rate(scn.duration).unwrap_or(1.0) * secs * attempts
        })
        .sum()
}

/// Runs in flight at once when results are written in plan order.
fn batch_size() -> usize {
    4 * rayon::current_num_threads().max(1)
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn default_out_example() {
        use crate::sweep::{default_out, Shard};
        assert_eq!(default_out("a", None), std::path::Path::new("output/a"));
        let s = Shard { index: 1, count: 4 };
        assert_eq!(
            default_out("a", Some(s)),
            std::path::Path::new("output/a-shard-1-of-4")
        );
    }
}
