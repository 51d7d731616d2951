//! Sweeps: a grid of scenario variants times replications, run in parallel, written run
//! by run so a sweep can be resumed, sharded over machines and merged back into the
//! same bytes.
//!
//! ```text
//! Loaded ─► plan (cells × replications, validated) ─► runs (rayon, any order)
//!        ─► runs/<run>/ (atomic) ─► assemble in plan order ─► summary, timeseries,
//!           herd, aggregate, manifest
//! ```

pub mod aggregate;
pub mod plan;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use thiserror::Error;

use crate::export::manifest::{self, FolderKind, Manifest, Origin};
use crate::export::owner::{self, Claimed, OwnerError, Refusal, Want};
use crate::export::write_atomic;
use crate::run::{run_one, RunResult};
use crate::scenario::{from_table, Loaded, ScenarioError, Source};

pub use plan::{plan, Plan, RunSpec};
pub use store::Chunk;

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
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("expected I/N such as 0/4, found '{s}'"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index '{i}' is not a number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count '{n}' is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!("shard {index}/{count}: need 0 <= I < N"));
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
    /// Ctrl-C.
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
pub struct Options {
    /// Output folder.
    pub out: PathBuf,
    /// Worker threads (`None` = all cores).
    pub jobs: Option<usize>,
    /// Run only this shard.
    pub shard: Option<Shard>,
    /// Replace a folder that holds other results.
    pub force: bool,
    /// Show a progress bar (it hides itself when stderr is not a terminal).
    pub progress: bool,
    /// Where the scenario came from (recorded in the manifest; decides ownership).
    pub origin: Origin,
}

/// Set by a Ctrl-C handler: workers start no new run once it is set.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Installs a Ctrl-C handler that lets running runs finish and starts no new one.
/// A second Ctrl-C exits at once (finished runs are on disk either way).
pub fn install_ctrlc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("\nstopping: finishing the runs in progress (Ctrl-C again to quit now)");
        });
    });
}

/// What a finished sweep wrote.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Runs in this sweep or shard.
    pub runs: u64,
    /// Runs that were already on disk and were skipped.
    pub resumed: u64,
    /// Runs that stopped early at a limit (`run N: why`), in run order, resumed ones
    /// included.
    pub truncated: Vec<String>,
}

fn manifest_text(plan: &Plan, shard: Option<Shard>, origin: &Origin, files: &[String]) -> String {
    let mut m = Manifest::of(&plan.base, origin, plan.total_runs(), files);
    m.run.kind = FolderKind::Sweep;
    m.run.params = plan.params();
    m.run.cells = Some(plan.cells.len() as i64);
    m.run.shard = shard.map(|s| format!("{}/{}", s.index, s.count));
    m.render()
}

/// Reads a folder's manifest: `Ok(None)` when it has none.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, SweepError> {
    owner::read_manifest(dir)
        .map_err(|reason| SweepError::Merge(format!("'{}' {reason}", dir.display())))
}

/// Claims `dir` for `want` (see [`owner::claim`]), naming the folder as given.
pub fn claim(dir: &Path, want: &Want, force: bool) -> Result<Claimed, SweepError> {
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
fn sweep_files(complete: bool) -> Vec<String> {
    let mut f: Vec<String> = ["manifest.toml", "summary.csv", "timeseries.csv", "herd.csv"]
        .map(String::from)
        .to_vec();
    f.push(owner::RUNS_ENTRY.to_string());
    if complete {
        f.push("aggregate.csv".to_string());
    }
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
        fingerprint: Some(manifest::fingerprint(&plan.base.resolved)),
        shard: shard.map(|s| format!("{}/{}", s.index, s.count)),
    };
    let claimed = claim(dir, &want, force)?;
    let mut files = sweep_files(shard.is_none());
    write_manifest(&claimed, &mut files, |f| {
        manifest_text(plan, shard, origin, f)
    })?;
    Ok(claimed)
}

/// Runs a sweep (or one shard of it) into `opts.out`, skipping runs already there, and
/// writes the tables. Plots are the caller's business.
pub fn run(plan: &Plan, opts: &Options) -> Result<Outcome, SweepError> {
    let total = plan.total_runs();
    let mine: Vec<u64> = (0..total)
        .filter(|r| opts.shard.is_none_or(|s| r % s.count == s.index))
        .collect();
    // Every cell this process runs is valid before anything is written.
    plan.validate(&mine)?;
    let claimed = claim_folder(&opts.out, plan, opts.shard, opts.force, &opts.origin)?;
    let dir = &claimed.dir;
    let done = store::done_runs(dir).map_err(io_err("cannot read", dir))?;
    let todo: Vec<u64> = mine.iter().copied().filter(|r| !done.contains(r)).collect();
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::new(mine.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs  {per_sec}  {elapsed_precise} elapsed, ~{eta_precise} left",
            )
            .expect("valid template"),
        );
        b.set_position((mine.len() - todo.len()) as u64);
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let work = || -> Result<Vec<Option<String>>, SweepError> {
        todo.par_iter()
            .map(|&run| {
                if STOP.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let spec = plan.spec(run);
                let loaded = plan.loaded(spec.cell)?;
                let scn = &loaded.scenario;
                let r = run_one(scn, &plan.layout, run, spec.replication);
                let chunk = store::render_chunk(plan, &r, scn);
                store::write_chunk(dir, run, &chunk)
                    .map_err(io_err("cannot write run into", dir))?;
                bar.inc(1);
                Ok(r.metrics
                    .totals
                    .truncated
                    .map(|t| format!("run {run}: {t}")))
            })
            .collect()
    };
    let results = with_jobs(opts.jobs, work)??;
    bar.finish_and_clear();
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
    let mut why: std::collections::BTreeMap<u64, String> = todo
        .iter()
        .zip(results)
        .filter_map(|(&r, t)| t.map(|t| (r, t)))
        .collect();
    for r in on_disk {
        why.entry(r).or_insert_with(|| {
            format!("run {r}: stopped early at limits.max_in_flight or limits.max_events when it ran (truncated = true in its summary row)")
        });
    }
    Ok(Outcome {
        runs: mine.len() as u64,
        resumed: (mine.len() - todo.len()) as u64,
        truncated: why.into_values().collect(),
    })
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
pub const MAX_JOBS: usize = 1024;

/// Runs `work` on a pool of `jobs` threads (`None`: the global pool, one per core).
pub fn with_jobs<T: Send>(
    jobs: Option<usize>,
    work: impl FnOnce() -> T + Send,
) -> Result<T, SweepError> {
    match jobs {
        None => Ok(work()),
        Some(j) => Ok(rayon::ThreadPoolBuilder::new()
            .num_threads(j.clamp(1, MAX_JOBS))
            .build()
            .map_err(|e| SweepError::Merge(format!("cannot start {j} worker threads: {e}")))?
            .install(work)),
    }
}

/// A run's result without its time series and latency histogram (the summary row has
/// the percentiles): what `check` and the run table need, about 3 KB instead of 75.
fn slim(mut r: RunResult) -> RunResult {
    r.metrics.buckets = Vec::new();
    r.metrics.herd = None;
    r.metrics.latency = hdrhistogram::Histogram::new(1).expect("1 significant figure is valid");
    r
}

/// Runs `runs` of a plan in parallel on the current rayon pool; the results come back
/// in the order given.
fn run_runs(plan: &Plan, runs: &[u64]) -> Result<Vec<(RunResult, Loaded)>, SweepError> {
    runs.par_iter()
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
pub fn run_in_memory(plan: &Plan) -> Result<Vec<RunResult>, SweepError> {
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    plan.validate(&all)?;
    let mut out = Vec::with_capacity(all.len());
    for batch in all.chunks(batch_size()) {
        out.extend(run_runs(plan, batch)?.into_iter().map(|(r, _)| slim(r)));
    }
    Ok(out)
}

/// Runs in flight at once when results are written in plan order.
fn batch_size() -> usize {
    4 * rayon::current_num_threads().max(1)
}

/// What a run folder holds once written.
#[derive(Debug, Clone)]
pub struct RunFolder {
    /// The folder, as the file system resolves it.
    pub dir: PathBuf,
    /// Runs written.
    pub runs: u64,
    /// The first runs' results, without their series (for a table on screen).
    pub first: Vec<RunResult>,
    /// Runs that stopped early at a limit (`run N: why`), in run order.
    pub truncated: Vec<String>,
}

/// How many runs' results [`RunFolder::first`] keeps.
pub const RUNS_SHOWN: usize = 20;

/// Runs the base point of a scenario (its replications, in parallel; any `[sweep]` is
/// left out) into a run folder: the manifest, then the tables (`aggregate.csv` with
/// replications), written as the runs finish in plan order, so memory does not grow
/// with the number of replications.
pub fn run_folder(
    loaded: &Loaded,
    dir: &Path,
    origin: &Origin,
    force: bool,
) -> Result<RunFolder, SweepError> {
    let mut base = loaded.clone();
    base.file.sweep = None;
    base.table.remove("sweep");
    base.resolved.remove("sweep");
    let plan = plan::plan(base)?;
    let want = Want {
        kind: FolderKind::Run,
        identity: origin.identity.clone(),
        fingerprint: None,
        shard: None,
    };
    let claimed = claim(dir, &want, force)?;
    // The manifest first: a run killed before its tables leaves a folder that says
    // what it is for, and vouches for the files it was writing.
    let aggregate = plan.replications > 1;
    let mut files: Vec<String> = ["manifest.toml", "summary.csv", "timeseries.csv", "herd.csv"]
        .map(String::from)
        .to_vec();
    if aggregate {
        files.push("aggregate.csv".into());
    }
    write_manifest(&claimed, &mut files, |f| {
        manifest::render(&plan.base, origin, plan.total_runs(), f)
    })?;
    let d = &claimed.dir;
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
                truncated.push(format!("run {}: {t}", r.run));
            }
            if first.len() < RUNS_SHOWN {
                first.push(slim(r));
            }
        }
    }
    tables
        .commit()
        .map_err(io_err("cannot write the tables of", dir))?;
    Ok(RunFolder {
        dir: claimed.dir.clone(),
        runs: plan.total_runs(),
        first,
        truncated,
    })
}

/// Rebuilds the plan recorded in a manifest (its `[scenario]` table and source).
fn plan_from_manifest(dir: &Path, m: &Manifest) -> Result<Plan, SweepError> {
    if m.scenario.is_empty() {
        return Err(SweepError::Merge(format!(
            "'{}' has no [scenario] in its manifest",
            dir.display()
        )));
    }
    let source = Source {
        path: m.run.source.clone().unwrap_or_else(|| "manifest".into()),
        stem: m.run.scenario.clone().unwrap_or_else(|| "scenario".into()),
        text: String::new(),
    };
    Ok(plan::plan(from_table(&source, m.scenario.clone())?)?)
}

/// The origin a shard's manifest records.
fn origin_of(m: &Manifest) -> Origin {
    Origin {
        identity: m
            .run
            .identity
            .clone()
            .or_else(|| m.run.source.clone())
            .unwrap_or_default(),
        overrides: m.run.overrides.clone(),
    }
}

/// Merges shard folders into `out`: the same bytes an unsharded sweep writes. Refuses
/// shards of different scenarios or seeds, duplicates, and incomplete sets. Returns the
/// plan and the runs that stopped early at a limit.
pub fn merge(dirs: &[PathBuf], out: &Path, force: bool) -> Result<(Plan, Vec<u64>), SweepError> {
    if dirs.is_empty() {
        return Err(SweepError::Merge("no shard folders given".into()));
    }
    let mut first: Option<(String, String, Shard, Origin)> = None;
    let mut plan: Option<Plan> = None;
    let mut seen: Vec<Option<PathBuf>> = Vec::new();
    for d in dirs {
        let m = read_manifest(d)?.ok_or_else(|| {
            SweepError::Merge(format!(
                "'{}' has no manifest.toml: not a shard folder",
                d.display()
            ))
        })?;
        if m.run.kind != FolderKind::Sweep {
            return Err(SweepError::Merge(format!(
                "'{}' is not a sweep folder",
                d.display()
            )));
        }
        let shard: Shard = m.run.shard.as_deref().unwrap_or("").parse().map_err(|_| {
            SweepError::Merge(format!(
                "'{}' is not a shard (it was run without --shard)",
                d.display()
            ))
        })?;
        let seed = m.run.seed.map(|v| v.to_string()).unwrap_or_default();
        let key = (m.run.fingerprint.clone().unwrap_or_default(), seed);
        match &first {
            None => {
                let p = plan_from_manifest(d, &m)?;
                // A shard count is at most the runs it splits: a tampered manifest
                // must not size the bookkeeping.
                if shard.count > p.total_runs().max(1) {
                    return Err(SweepError::Merge(format!(
                        "'{}' claims to be shard {}/{} of a sweep of {} runs: a sweep has at most one shard per run",
                        d.display(),
                        shard.index,
                        shard.count,
                        p.total_runs()
                    )));
                }
                seen = vec![None; shard.count as usize];
                first = Some((key.0.clone(), key.1.clone(), shard, origin_of(&m)));
                plan = Some(p);
            }
            Some((fp, sd, s0, _)) => {
                if &key.1 != sd {
                    return Err(SweepError::Merge(format!(
                        "'{}' was run with seed {} but '{}' with seed {sd}",
                        d.display(),
                        key.1,
                        dirs[0].display()
                    )));
                }
                if &key.0 != fp {
                    return Err(SweepError::Merge(format!(
                        "'{}' holds a different scenario than '{}'",
                        d.display(),
                        dirs[0].display()
                    )));
                }
                if shard.count != s0.count {
                    return Err(SweepError::Merge(format!(
                        "'{}' is shard {}/{} but '{}' is one of {}",
                        d.display(),
                        shard.index,
                        shard.count,
                        dirs[0].display(),
                        s0.count
                    )));
                }
            }
        }
        if let Some(prev) = &seen[shard.index as usize] {
            return Err(SweepError::Merge(format!(
                "shard {}/{} is given twice: '{}' and '{}'",
                shard.index,
                shard.count,
                prev.display(),
                d.display()
            )));
        }
        seen[shard.index as usize] = Some(d.clone());
    }
    let plan = plan.expect("at least one shard");
    let origin = first.expect("at least one shard").3;
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .take(10)
        .map(|(i, _)| format!("{i}/{}", seen.len()))
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "the set is incomplete: shard {} missing",
            missing.join(", ")
        )));
    }
    let count = seen.len() as u64;
    let shard_of = |run: u64| seen[(run % count) as usize].as_ref().expect("checked");
    // Every run is there before anything is written.
    for run in 0..plan.total_runs() {
        let d = shard_of(run);
        if !store::chunk_dir(d, run).is_dir() {
            return Err(SweepError::Merge(format!(
                "run {run} is missing from '{}': finish that shard first",
                d.display()
            )));
        }
    }
    let claimed = claim_folder(out, &plan, None, force, &origin)?;
    let od = &claimed.dir;
    for run in 0..plan.total_runs() {
        let d = shard_of(run);
        let c = store::read_chunk(d, run).map_err(io_err("cannot read run from", d))?;
        store::write_chunk(od, run, &c).map_err(io_err("cannot write run into", out))?;
    }
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    let truncated = write_tables(&plan, od, &all, true)?;
    Ok((plan, truncated))
}
