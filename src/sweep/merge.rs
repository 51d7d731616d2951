//! Merging shard folders back into the folder an unsharded sweep writes.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::export::manifest::{header_text, FolderKind, Manifest, Origin};
use crate::scenario::{from_table, Source};
use crate::truncation::Truncation;

use super::{
    claim_folder, io_err, plan, read_manifest, store, write_tables, Plan, Shard, SweepError,
};

/// What a merge wrote.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Shard folders merged.
    pub shards: usize,
    /// The sweep's plan.
    pub plan: Plan,
    /// The runs that stopped early at a limit.
    pub truncation: Option<Truncation>,
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
        text: m.run.header.as_deref().map(header_text).unwrap_or_default(),
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
/// shards of different scenarios or seeds, duplicates, and incomplete sets.
pub(crate) fn merge(dirs: &[PathBuf], out: &Path, force: bool) -> Result<Merged, SweepError> {
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
    // Every run is there, its files whole, before anything is written.
    for run in 0..plan.total_runs() {
        let d = shard_of(run);
        if !store::chunk_dir(d, run).is_dir() {
            return Err(SweepError::Merge(format!(
                "run {run} is missing from '{}': finish that shard first",
                d.display()
            )));
        }
    }
    let all: Vec<u64> = (0..plan.total_runs()).collect();
    let shapes = plan.shapes(&all)?;
    let checked = all
        .par_iter()
        .map(|&run| {
            let d = shard_of(run);
            let shape = shapes[&plan.spec(run).cell];
            store::check_run(d, &plan, run, shape)
                .map(|why| why.map(|w| (run, w)))
                .map_err(io_err("cannot read run from", d))
        })
        .collect::<Result<Vec<_>, SweepError>>()?;
    if let Some((run, why)) = checked.into_iter().flatten().next() {
        let d = shard_of(run);
        return Err(SweepError::Merge(format!(
            "run {run} in '{}' is incomplete: {why}; run that shard again, which redoes it",
            store::chunk_dir(d, run).display()
        )));
    }
    let claimed = claim_folder(out, &plan, None, force, &origin)?;
    let od = &claimed.dir;
    for run in 0..plan.total_runs() {
        let d = shard_of(run);
        let c = store::read_chunk(d, run).map_err(io_err("cannot read run from", d))?;
        store::write_chunk(od, run, &c).map_err(io_err("cannot write run into", out))?;
    }
    let truncated = write_tables(&plan, od, &all, true)?;
    let truncation = Truncation::of(
        format!("sweep '{}'", plan.base.scenario.name),
        plan.total_runs(),
        truncated.into_iter().map(|r| (r, None)).collect(),
        Truncation::marked_in(out),
    );
    Ok(Merged {
        shards: dirs.len(),
        plan,
        truncation,
    })
}
