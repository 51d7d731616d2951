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

use crate::export::{manifest, write_atomic};
use crate::run::run_one;
use crate::scenario::{from_table, ScenarioError, Source};

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

fn manifest_text(plan: &Plan, shard: Option<Shard>) -> String {
    let mut extra: Vec<(&str, toml::Value)> = vec![
        ("kind", "sweep".into()),
        (
            "params",
            toml::Value::Array(plan.params().into_iter().map(toml::Value::String).collect()),
        ),
        ("cells", toml::Value::Integer(plan.cells.len() as i64)),
    ];
    if let Some(s) = shard {
        extra.push(("shard", format!("{}/{}", s.index, s.count).into()));
    }
    manifest::render(&plan.base, plan.total_runs(), &extra)
}

/// Reads `[run]` of a folder's manifest.
pub fn read_manifest(dir: &Path) -> Result<Option<toml::Table>, SweepError> {
    let p = dir.join("manifest.toml");
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p).map_err(io_err("cannot read", &p))?;
    let t: toml::Table = toml::from_str(&text).map_err(|e| {
        SweepError::Merge(format!("'{}' is not a retrysim manifest: {e}", p.display()))
    })?;
    Ok(Some(t))
}

/// Files retrysim writes at the top of an output folder.
pub const RESULT_FILES: [&str; 6] = [
    "manifest.toml",
    "summary.csv",
    "timeseries.csv",
    "herd.csv",
    "aggregate.csv",
    "report.html",
];

/// Removes the results a folder holds (`RESULT_FILES`, `runs/`, `plots/`) and the
/// leftovers of a killed writer, and nothing else: a folder given as `--out` may hold
/// other files.
pub fn clear_results(dir: &Path) -> Result<(), SweepError> {
    remove_leftovers(dir)?;
    for name in RESULT_FILES {
        let p = dir.join(name);
        if p.is_file() {
            std::fs::remove_file(&p).map_err(io_err("cannot clear", &p))?;
        }
    }
    for name in [store::RUNS_DIR, "plots"] {
        let p = dir.join(name);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).map_err(io_err("cannot clear", &p))?;
        }
    }
    Ok(())
}

/// Removes the `.tmp-*` leftovers of a killed writer at the top of `dir` and in its
/// plots (`runs/` is cleaned as runs are listed).
pub fn remove_leftovers(dir: &Path) -> Result<(), SweepError> {
    for d in [dir.to_path_buf(), dir.join("plots")] {
        crate::export::atomic::remove_leftovers(&d).map_err(io_err("cannot clean", &d))?;
    }
    Ok(())
}

/// The manifest of the results `dir` holds: `Ok(None)` when it holds none, `Err` with
/// the reason when it holds results that no retrysim manifest describes.
pub fn folder_owner(dir: &Path) -> Result<Option<toml::Table>, String> {
    match read_manifest(dir) {
        Ok(Some(m)) => Ok(Some(m)),
        Ok(None) => {
            let results = ["summary.csv", "timeseries.csv", store::RUNS_DIR];
            if results.iter().any(|f| dir.join(f).exists()) {
                Err("holds results without a manifest.toml".to_string())
            } else {
                Ok(None)
            }
        }
        Err(e) => Err(format!("holds a manifest.toml retrysim cannot read ({e})")),
    }
}

/// Checks that `dir` is empty, or holds results of this same sweep (same fingerprint and
/// shard) that can be resumed; with `force`, clears what is there.
fn claim_folder(
    dir: &Path,
    plan: &Plan,
    shard: Option<Shard>,
    force: bool,
) -> Result<(), SweepError> {
    let fp = manifest::fingerprint(&plan.base.resolved);
    let shard_text = shard.map(|s| format!("{}/{}", s.index, s.count));
    let occupied = |reason: String| SweepError::Occupied {
        path: dir.to_path_buf(),
        reason,
    };
    let problem = match folder_owner(dir) {
        Err(reason) => Some(reason),
        Ok(None) => None,
        Ok(Some(m)) => {
            let run = m.get("run").and_then(|v| v.as_table());
            let get = |k: &str| {
                run.and_then(|r| r.get(k))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            if get("kind").as_deref() != Some("sweep") {
                Some("holds the results of a single run, not a sweep".to_string())
            } else if get("fingerprint").as_deref() != Some(fp.as_str()) {
                Some(format!(
                    "holds a sweep of a different scenario or version of it ('{}')",
                    get("scenario").unwrap_or_default()
                ))
            } else if get("shard") != shard_text {
                Some(format!(
                    "holds shard {} of this sweep",
                    get("shard").unwrap_or_else(|| "(none)".into())
                ))
            } else {
                None
            }
        }
    };
    if let Some(reason) = problem {
        if !force {
            return Err(occupied(reason));
        }
        clear_results(dir)?;
    }
    remove_leftovers(dir)?;
    std::fs::create_dir_all(dir).map_err(io_err("cannot create", dir))?;
    let m = dir.join("manifest.toml");
    write_atomic(&m, manifest_text(plan, shard).as_bytes()).map_err(io_err("cannot write", &m))
}

/// Runs a sweep (or one shard of it) into `opts.out`, skipping runs already there, and
/// writes the tables. Plots are the caller's business.
pub fn run(plan: &Plan, opts: &Options) -> Result<Outcome, SweepError> {
    let dir = &opts.out;
    claim_folder(dir, plan, opts.shard, opts.force)?;
    let total = plan.total_runs();
    let mine: Vec<u64> = (0..total)
        .filter(|r| opts.shard.is_none_or(|s| r % s.count == s.index))
        .collect();
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
                let cell = &plan.cells[spec.cell];
                let r = run_one(&cell.loaded.scenario, &plan.layout, run, spec.replication);
                let chunk = store::render_chunk(plan, &r);
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
    let results = match opts.jobs {
        Some(j) => rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build()
            .map_err(|e| SweepError::Merge(format!("cannot start {j} worker threads: {e}")))?
            .install(work),
        None => work(),
    }?;
    bar.finish_and_clear();
    let done_now = store::done_runs(dir).map_err(io_err("cannot read", dir))?;
    let finished = mine.iter().filter(|r| done_now.contains(r)).count() as u64;
    if finished < mine.len() as u64 {
        return Err(SweepError::Interrupted {
            done: finished,
            total: mine.len() as u64,
            path: dir.clone(),
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

/// Runs every run of a plan in memory (in parallel on the current rayon pool) and
/// returns the results in plan order.
pub fn run_in_memory(plan: &Plan) -> Vec<crate::run::RunResult> {
    (0..plan.total_runs())
        .into_par_iter()
        .map(|run| {
            let spec = plan.spec(run);
            run_one(
                &plan.cells[spec.cell].loaded.scenario,
                &plan.layout,
                run,
                spec.replication,
            )
        })
        .collect()
}

/// Runs the base point of a scenario (its replications, in parallel; any `[sweep]` is
/// left out) and writes a run folder: the tables (`aggregate.csv` with replications)
/// and the manifest. Returns the results in replication order.
pub fn run_folder(
    loaded: &crate::scenario::Loaded,
    dir: &Path,
) -> Result<Vec<crate::run::RunResult>, SweepError> {
    let mut base = loaded.clone();
    base.file.sweep = None;
    base.table.remove("sweep");
    base.resolved.remove("sweep");
    let plan = plan::plan(base)?;
    // The manifest first: a run killed before its tables leaves a folder that says
    // what it is for.
    let m = dir.join("manifest.toml");
    write_atomic(
        &m,
        manifest::render(&plan.base, plan.total_runs(), &[]).as_bytes(),
    )
    .map_err(io_err("cannot write", &m))?;
    let results = run_in_memory(&plan);
    let runs: Vec<u64> = (0..plan.total_runs()).collect();
    store::write_tables(
        dir,
        &plan,
        &runs,
        |r| Ok(store::render_chunk(&plan, &results[r as usize])),
        plan.replications > 1,
    )
    .map_err(io_err("cannot write the tables of", dir))?;
    Ok(results)
}

/// Rebuilds the plan recorded in a manifest (its `[scenario]` table and source).
fn plan_from_manifest(dir: &Path, m: &toml::Table) -> Result<Plan, SweepError> {
    let bad = |what: &str| {
        SweepError::Merge(format!("'{}' has no {what} in its manifest", dir.display()))
    };
    let run = m
        .get("run")
        .and_then(|v| v.as_table())
        .ok_or_else(|| bad("[run]"))?;
    let table = m
        .get("scenario")
        .and_then(|v| v.as_table())
        .ok_or_else(|| bad("[scenario]"))?;
    let source_path = run
        .get("source")
        .and_then(|v| v.as_str())
        .unwrap_or("manifest")
        .to_string();
    let name = run
        .get("scenario")
        .and_then(|v| v.as_str())
        .unwrap_or("scenario")
        .to_string();
    let source = Source {
        path: source_path,
        stem: name,
        text: String::new(),
    };
    Ok(plan::plan(from_table(&source, table.clone())?)?)
}

/// Merges shard folders into `out`: the same bytes an unsharded sweep writes. Refuses
/// shards of different scenarios or seeds, duplicates, and incomplete sets. Returns the
/// plan and the runs that stopped early at a limit.
pub fn merge(dirs: &[PathBuf], out: &Path, force: bool) -> Result<(Plan, Vec<u64>), SweepError> {
    if dirs.is_empty() {
        return Err(SweepError::Merge("no shard folders given".into()));
    }
    let mut first: Option<(String, String, Shard)> = None;
    let mut plan: Option<Plan> = None;
    let mut seen: Vec<Option<PathBuf>> = Vec::new();
    for d in dirs {
        let m = read_manifest(d)?.ok_or_else(|| {
            SweepError::Merge(format!(
                "'{}' has no manifest.toml: not a shard folder",
                d.display()
            ))
        })?;
        let run = m
            .get("run")
            .and_then(|v| v.as_table())
            .cloned()
            .unwrap_or_default();
        let s = |k: &str| {
            run.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        if s("kind") != "sweep" {
            return Err(SweepError::Merge(format!(
                "'{}' is not a sweep folder",
                d.display()
            )));
        }
        let shard: Shard = s("shard").parse().map_err(|_| {
            SweepError::Merge(format!(
                "'{}' is not a shard (it was run without --shard)",
                d.display()
            ))
        })?;
        let seed = run.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let key = (s("fingerprint"), seed);
        match &first {
            None => {
                first = Some((key.0.clone(), key.1.clone(), shard));
                seen = vec![None; shard.count as usize];
                plan = Some(plan_from_manifest(d, &m)?);
            }
            Some((fp, sd, s0)) => {
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
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| format!("{i}/{}", seen.len()))
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "the set is incomplete: shard {} missing",
            missing.join(", ")
        )));
    }
    let count = seen.len() as u64;
    let mut chunks = Vec::with_capacity(plan.total_runs() as usize);
    for run in 0..plan.total_runs() {
        let d = seen[(run % count) as usize].as_ref().expect("checked");
        let c = store::read_chunk(d, run).map_err(|_| {
            SweepError::Merge(format!(
                "run {run} is missing from '{}': finish that shard first",
                d.display()
            ))
        })?;
        chunks.push(c);
    }
    claim_merged(out, &plan, force)?;
    for (run, c) in chunks.iter().enumerate() {
        store::write_chunk(out, run as u64, c).map_err(io_err("cannot write run into", out))?;
    }
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    let truncated = write_tables(&plan, out, &all, true)?;
    Ok((plan, truncated))
}

fn claim_merged(out: &Path, plan: &Plan, force: bool) -> Result<(), SweepError> {
    claim_folder(out, plan, None, force)
}
