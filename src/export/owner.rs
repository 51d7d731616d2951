//! Who owns an output folder's files. retrysim removes or overwrites only files that a
//! manifest it wrote says it wrote: `manifest.toml` lists them in its last table,
//! `[output] files`. Everything else in the folder is the user's and is never touched,
//! `--force` or not.
//!
//! The list can only name retrysim's own file names ([`is_ours`]): a tampered
//! manifest cannot make retrysim remove `../notes.txt` or `plots/photo.jpg`. A file
//! is listed *before* it is written, so a run killed part-way leaves a folder whose
//! manifest still vouches for every result file in it.
//!
//! Paths are compared as the file system resolves them ([`resolve`]), so `out`,
//! `./out` and `new/../out` are one folder; a symlink inside a results folder (a
//! file, `plots/` or `runs/`) is refused rather than followed.

use std::io;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use super::manifest::{FolderKind, Manifest, Output, ReadError};

/// Result files at the top of a folder.
pub(crate) const TOP_FILES: [&str; 12] = [
    "manifest.toml",
    "columns.csv",
    "summary.csv",
    "timeseries.csv",
    "herd.csv",
    "attempts_by_ordinal.csv",
    "services.csv",
    "aggregate.csv",
    "aggregate_long.csv",
    "report.html",
    "traces.csv",
    "trace.json",
];
/// The entry that stands for the finished runs of a sweep (`runs/NNNNNN/`).
pub(crate) const RUNS_ENTRY: &str = "runs/";
/// The files inside a finished run's folder.
pub(crate) const RUN_FILES: [&str; 5] = [
    "summary.csv",
    "timeseries.csv",
    "herd.csv",
    "attempts_by_ordinal.csv",
    "services.csv",
];

/// What can stop retrysim from writing into a folder.
#[derive(Debug, Error)]
pub enum OwnerError {
    /// A path that would be written is a symlink.
    #[error("output path '{0}' is a symbolic link: retrysim writes only into real folders and files (remove the link or choose another --out)")]
    Symlink(PathBuf),
    /// A file retrysim would write exists and no manifest of retrysim lists it.
    #[error("'{0}' exists and retrysim did not write it (its manifest does not list it): move it away or choose another --out")]
    Foreign(PathBuf),
    /// The output path names a file, not a folder.
    #[error("output folder '{0}' is a file, not a folder: choose another --out")]
    NotAFolder(PathBuf),
    /// A file could not be read, written or removed.
    #[error("cannot {what} '{path}': {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> OwnerError + 'a {
    move |source| OwnerError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The folder `dir` names, as the file system resolves it: absolute, each existing
/// prefix canonical (symlinks followed), `..` applied after that. Two spellings of one
/// folder resolve to the same path, whether or not it exists yet.
pub(crate) fn resolve(dir: &Path) -> io::Result<PathBuf> {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let mut out = PathBuf::new();
    let mut exists = true;
    for c in abs.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
                exists = out.exists();
            }
            Component::Normal(n) => {
                out.push(n);
                if exists {
                    match std::fs::canonicalize(&out) {
                        Ok(p) => out = p,
                        Err(_) => exists = false,
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The folders of charts inside `plots/` (a sweep's `metrics/<metric>_vs_<key>`).
pub(crate) const CHART_FOLDERS: [&str; 1] = ["metrics"];

/// The folders charts are written in, deepest first: `plots/metrics`, then `plots`.
fn chart_dirs() -> impl Iterator<Item = String> {
    CHART_FOLDERS
        .iter()
        .map(|f| format!("plots/{f}"))
        .chain(["plots".to_string()])
}

/// Whether `rel` is one of the names retrysim writes in a results folder: a top file,
/// `runs/`, `plots/<name>.png|svg` or `plots/<folder>/<name>.png|svg` for a folder of
/// [`CHART_FOLDERS`].
pub(crate) fn is_ours(rel: &str) -> bool {
    if TOP_FILES.contains(&rel) || rel == RUNS_ENTRY {
        return true;
    }
    let Some(name) = rel.strip_prefix("plots/") else {
        return false;
    };
    let name = match name.split_once('/') {
        Some((folder, name)) if CHART_FOLDERS.contains(&folder) => name,
        Some(_) => return false,
        None => name,
    };
    let stem = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".svg"));
    stem.is_some_and(|s| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !s.starts_with('.')
    })
}

/// The files a manifest says retrysim wrote (only names that [`is_ours`]). A manifest
/// written before the list existed vouches for the top files and `runs/`.
pub(crate) fn listed(manifest: &Manifest) -> Vec<String> {
    match &manifest.output {
        Some(o) => o.files.iter().filter(|s| is_ours(s)).cloned().collect(),
        None => TOP_FILES
            .iter()
            .map(|s| s.to_string())
            .chain([RUNS_ENTRY.to_string()])
            .collect(),
    }
}

/// Refuses `dir/rel` if `dir` is a file, or if any of `rel`'s components is a
/// symlink; returns the path.
pub(crate) fn check_target(dir: &Path, rel: &str) -> Result<PathBuf, OwnerError> {
    if dir.is_file() {
        return Err(OwnerError::NotAFolder(dir.to_path_buf()));
    }
    let mut p = dir.to_path_buf();
    for part in rel.trim_end_matches('/').split('/') {
        p.push(part);
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            if m.file_type().is_symlink() {
                return Err(OwnerError::Symlink(p));
            }
        }
    }
    Ok(p)
}

/// Whether a folder holds nothing at all (or does not exist).
pub(crate) fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none())
}

/// Removes the files `files` lists (as [`listed`] returns them) from `dir`: regular
/// files only, the runs of `runs/` (numbered folders holding only run files), and
/// `plots/`, its chart folders and `runs/` themselves once empty; and a killed
/// writer's leftovers ([`remove_leftovers`]). Anything else stays, and so does a
/// listed name that is now a folder or a link: someone else put it there.
pub(crate) fn remove_listed(dir: &Path, files: &[String]) -> Result<(), OwnerError> {
    remove_files(dir, files)?;
    remove_leftovers(dir)?;
    prune(dir)
}

/// Removes the files of `files` from `dir`, as [`remove_listed`] does, leftovers aside.
fn remove_files(dir: &Path, files: &[String]) -> Result<(), OwnerError> {
    for rel in files {
        if rel == RUNS_ENTRY {
            remove_runs(&dir.join("runs"))?;
            continue;
        }
        let p = check_target(dir, rel)?;
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&p).map_err(io_err("remove", &p))?;
        }
    }
    Ok(())
}

/// Removes the chart folders, `plots/` and `runs/` of `dir` when they are empty.
fn prune(dir: &Path) -> Result<(), OwnerError> {
    for sub in chart_dirs().chain(["runs".to_string()]) {
        let p = dir.join(sub);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) && is_empty(&p) {
            std::fs::remove_dir(&p).map_err(io_err("remove", &p))?;
        }
    }
    Ok(())
}

/// Removes the numbered run folders of `runs` that hold nothing but run files.
fn remove_runs(runs: &Path) -> Result<(), OwnerError> {
    match std::fs::symlink_metadata(runs) {
        Ok(m) if m.file_type().is_symlink() => return Err(OwnerError::Symlink(runs.into())),
        Ok(m) if m.is_dir() => {}
        _ => return Ok(()),
    }
    let entries = std::fs::read_dir(runs).map_err(io_err("read", runs))?;
    for e in entries {
        let e = e.map_err(io_err("read", runs))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let numbered = !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit());
        if !(numbered || is_tmp_name(&name)) {
            continue;
        }
        let p = e.path();
        let ft = e.file_type().map_err(io_err("read", &p))?;
        if !ft.is_dir() {
            continue;
        }
        let inner: Vec<_> = std::fs::read_dir(&p)
            .map_err(io_err("read", &p))?
            .filter_map(Result::ok)
            .collect();
        let only_ours = inner.iter().all(|f| {
            let n = f.file_name().to_string_lossy().into_owned();
            f.file_type().is_ok_and(|t| t.is_file()) && (RUN_FILES.contains(&n.as_str()))
        });
        if only_ours {
            std::fs::remove_dir_all(&p).map_err(io_err("remove", &p))?;
        }
    }
    Ok(())
}

/// Whether `name` is a temporary name this program writes (`.tmp-PID-N-name`).
pub(crate) fn is_tmp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(crate::export::atomic::TMP_PREFIX) else {
        return false;
    };
    let mut parts = rest.splitn(3, '-');
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_some_and(|s| !s.is_empty())
}

/// Removes the temporary files a killed writer left at the top of `dir`, in its
/// `plots/` and chart folders (only regular files with this program's temporary
/// names), and the staging folders of killed runs at its top ([`Staged`]: folders
/// with a temporary name that hold only files of those names and result names),
/// except those this process is writing.
pub(crate) fn remove_leftovers(dir: &Path) -> Result<(), OwnerError> {
    let dirs = std::iter::once(dir.to_path_buf()).chain(chart_dirs().map(|d| dir.join(d)));
    for d in dirs {
        if !std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let entries = std::fs::read_dir(&d).map_err(io_err("read", &d))?;
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_tmp_name(&name) {
                continue;
            }
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_file() => std::fs::remove_file(&p).map_err(io_err("remove", &p))?,
                Ok(t) if t.is_dir() && d == dir && !staging().contains(&p) => {
                    remove_staging(&p)?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Removes a staging folder if it holds only regular files named as retrysim names
/// its results and temporary files; anything else leaves it as it is.
fn remove_staging(tmp: &Path) -> Result<(), OwnerError> {
    let entries: Vec<_> = std::fs::read_dir(tmp)
        .map_err(io_err("read", tmp))?
        .filter_map(Result::ok)
        .collect();
    let ours = entries.iter().all(|f| {
        let n = f.file_name().to_string_lossy().into_owned();
        f.file_type().is_ok_and(|t| t.is_file())
            && (TOP_FILES.contains(&n.as_str()) || is_tmp_name(&n))
    });
    if !ours {
        return Ok(());
    }
    for f in entries {
        let p = f.path();
        std::fs::remove_file(&p).map_err(io_err("remove", &p))?;
    }
    std::fs::remove_dir(tmp).map_err(io_err("remove", tmp))
}

/// What a command wants to write into a folder: the `[run]` facts that decide
/// whether a folder already holding results may take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Want {
    /// A run or a sweep.
    pub kind: FolderKind,
    /// The scenario's identity: its canonical file path, or `<embedded default>`.
    pub identity: String,
    /// A sweep's fingerprint (same sweep: resumable).
    pub fingerprint: Option<String>,
    /// A sweep shard (`I/N`).
    pub shard: Option<String>,
}

/// A folder claimed for writing: what its old manifest vouched for is still ours.
#[derive(Debug, Clone)]
pub(crate) struct Claimed {
    /// The folder, resolved.
    pub dir: PathBuf,
    /// Files an earlier manifest of this same work lists (kept when resuming).
    pub listed: Vec<String>,
}

impl Claimed {
    /// The path of `rel` in the folder, once it is safe to write: no symlink on the way,
    /// and not a file that someone else put there (`--force` or not), nor a folder or
    /// a special file where a file goes.
    pub(crate) fn target(&self, rel: &str) -> Result<PathBuf, OwnerError> {
        let p = check_target(&self.dir, rel)?;
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            let file = !rel.ends_with('/');
            if !self.listed.iter().any(|l| l == rel) || (file && !m.is_file()) {
                return Err(OwnerError::Foreign(p));
            }
        }
        Ok(p)
    }
}

/// Why a folder cannot be claimed.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// It holds other results (the reason names them): `--force` replaces them.
    Occupied(String),
    /// It cannot be written at all.
    Error(OwnerError),
}

impl From<OwnerError> for Refusal {
    fn from(e: OwnerError) -> Refusal {
        Refusal::Error(e)
    }
}

/// Reads `dir/manifest.toml`: `Ok(None)` when there is none, `Err` with a reason when
/// it is not one retrysim wrote.
pub(crate) fn read_manifest(dir: &Path) -> Result<Option<Manifest>, String> {
    let p = dir.join("manifest.toml");
    match std::fs::symlink_metadata(&p) {
        Err(_) => return Ok(None),
        Ok(m) if !m.is_file() => {
            return Err("holds a manifest.toml that is not a regular file".to_string())
        }
        Ok(m) if m.len() > crate::export::MAX_MANIFEST_BYTES => {
            return Err(format!(
                "holds a manifest.toml of {} bytes, larger than any retrysim writes",
                m.len()
            ))
        }
        Ok(_) => {}
    }
    let text = super::read::read_to_string(&p, crate::export::MAX_MANIFEST_BYTES)
        .map_err(|e| format!("holds a manifest.toml retrysim cannot read ({e})"))?;
    match Manifest::parse(&text) {
        Ok(m) => Ok(Some(m)),
        Err(ReadError::NoRun) => {
            Err("holds a manifest.toml retrysim did not write (no [run] table)".to_string())
        }
        Err(ReadError::Syntax(e) | ReadError::Field(e)) => {
            Err(format!("holds a manifest.toml retrysim cannot read ({e})"))
        }
    }
}

/// Claims `dir` for `want`. A missing or empty folder is free. A folder whose manifest
/// shows the same work is taken over: a run replaces its own earlier results (other
/// `--set` values or seed included); a sweep resumes. Anything else is refused, unless
/// `force`: then the files the old manifest lists are replaced and nothing else is; a
/// file retrysim would write that exists unlisted stays refused ([`Claimed::target`]).
///
/// A run removes nothing here: the claim lists the old results, which [`Staged`]
/// replaces once the new ones are complete. A sweep forced over other results removes
/// them now (its runs are written into the folder as they finish, to be resumed).
pub(crate) fn claim(dir: &Path, want: &Want, force: bool) -> Result<Claimed, Refusal> {
    let resolved = resolve(dir).map_err(|e| OwnerError::Io {
        what: "resolve",
        path: dir.to_path_buf(),
        source: e,
    })?;
    if resolved.is_file() {
        return Err(OwnerError::NotAFolder(dir.to_path_buf()).into());
    }
    check_target(&resolved, "manifest.toml")?;
    let free = Claimed {
        dir: resolved.clone(),
        listed: Vec::new(),
    };
    if is_empty(&resolved) {
        return Ok(free);
    }
    let prior = match read_manifest(&resolved) {
        Ok(Some(m)) => m,
        Ok(None) if force => return Ok(free),
        Ok(None) => {
            return Err(Refusal::Occupied(
                "is not empty and holds no manifest.toml of retrysim (retrysim writes only into empty folders or its own)".to_string(),
            ))
        }
        Err(_) if force => return Ok(free),
        Err(reason) => return Err(Refusal::Occupied(reason)),
    };
    let listed = listed(&prior);
    let run = &prior.run;
    // A manifest written before `identity` existed names its source instead.
    let identity = run
        .identity
        .clone()
        .or_else(|| run.source.clone())
        .unwrap_or_default();
    let scenario = run.scenario.clone().unwrap_or_default();
    let problem = if run.kind != want.kind {
        Some(if run.kind == FolderKind::Sweep {
            "holds the results of a sweep".to_string()
        } else {
            "holds the results of a single run, not a sweep".to_string()
        })
    } else if want.kind == FolderKind::Run {
        (identity != want.identity)
            .then(|| format!("holds the results of scenario '{scenario}' ({identity})"))
    } else if run.fingerprint != want.fingerprint {
        Some(format!(
            "holds a sweep of a different scenario or version of it ('{scenario}')"
        ))
    } else if run.shard != want.shard {
        Some(format!(
            "holds shard {} of this sweep",
            run.shard.as_deref().unwrap_or("(none)")
        ))
    } else {
        None
    };
    match problem {
        Some(reason) if !force => Err(Refusal::Occupied(reason)),
        // A run's results replace the old ones once complete ([`Staged`]).
        _ if want.kind == FolderKind::Run => {
            remove_leftovers(&resolved)?;
            Ok(Claimed {
                dir: resolved,
                listed,
            })
        }
        // Replaced: what the old manifest vouches for goes, and nothing else.
        Some(_) => {
            remove_listed(&resolved, &listed)?;
            Ok(free)
        }
        // The same sweep: resumed, its runs kept.
        None => {
            remove_leftovers(&resolved)?;
            Ok(Claimed {
                dir: resolved,
                listed,
            })
        }
    }
}

/// The staging folders this process is writing ([`Staged`]), for Ctrl-C to remove.
fn staging() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static STAGING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    STAGING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run's results written beside the old results they replace, in a staging folder
/// inside the claimed folder (`.tmp-PID-N-run/`: hidden, and removed by the next run
/// if this one is killed), and swapped in by [`commit`](Self::commit) once complete:
/// a run killed, interrupted or failed part-way leaves the old results whole. A
/// folder without old results is written directly, its manifest first (there is
/// nothing to protect, and a killed run leaves a folder that says whose it is).
/// Dropped without a commit, the staging folder is removed.
#[derive(Debug)]
pub(crate) struct Staged {
    claimed: Claimed,
    /// The staging folder; `None` when writing directly into the folder.
    tmp: Option<PathBuf>,
}

impl Staged {
    /// Starts writing the results of a run into the folder `claimed`.
    pub(crate) fn begin(claimed: Claimed) -> Result<Staged, OwnerError> {
        if claimed.listed.is_empty() {
            return Ok(Staged { claimed, tmp: None });
        }
        let tmp = claimed.dir.join(super::atomic::tmp_name("run"));
        std::fs::create_dir(&tmp).map_err(io_err("create", &tmp))?;
        staging().push(tmp.clone());
        Ok(Staged {
            claimed,
            tmp: Some(tmp),
        })
    }

    /// Where the results are written: the staging folder, or the folder itself.
    pub(crate) fn dir(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.claimed.dir)
    }

    /// The folder the results are for.
    pub(crate) fn claimed(&self) -> &Claimed {
        &self.claimed
    }

    /// Swaps the complete results in: `files` (relative names, `manifest.toml` among
    /// them), each written in [`dir`](Self::dir), replace the old results. Everything
    /// is checked first. Then the folder's manifest becomes the new one listing the
    /// old files and the new (so the folder vouches for each file throughout), each
    /// new file is renamed into place, the old files the new run does not write are
    /// removed (charts, `report.html`, another run's `aggregate.csv` or a sweep's
    /// `runs/`), and the new manifest, listing only the new files, is renamed in last.
    /// Renames only, so the folder is mixed for a few system calls at most; Ctrl-C
    /// waits for them.
    pub(crate) fn commit(mut self, files: &[String]) -> Result<(), OwnerError> {
        let Some(tmp) = self.tmp.clone() else {
            return Ok(());
        };
        let mut reg = staging();
        if !reg.contains(&tmp) {
            // Ctrl-C discarded it.
            return Err(OwnerError::Io {
                what: "write",
                path: tmp,
                source: io::Error::new(io::ErrorKind::Interrupted, "interrupted"),
            });
        }
        let dir = self.claimed.dir.clone();
        for f in files {
            self.claimed.target(f)?;
            let staged = tmp.join(f);
            if !std::fs::symlink_metadata(&staged).is_ok_and(|m| m.is_file()) {
                return Err(OwnerError::Io {
                    what: "find",
                    path: staged,
                    source: io::ErrorKind::NotFound.into(),
                });
            }
        }
        let manifest = "manifest.toml";
        let staged_manifest = tmp.join(manifest);
        let text = super::read::read_to_string(&staged_manifest, crate::export::MAX_MANIFEST_BYTES)
            .map_err(io_err("read", &staged_manifest))?;
        let mut both: Vec<String> = files.to_vec();
        both.extend(self.claimed.listed.iter().cloned());
        let mut union = without_output(&text).to_string();
        if !union.ends_with('\n') {
            union.push('\n');
        }
        union.push_str(&render_output(&Output::of(&both)));
        let target = dir.join(manifest);
        crate::export::write_atomic(&target, union.as_bytes()).map_err(io_err("write", &target))?;
        for f in files.iter().filter(|f| *f != manifest) {
            let (from, to) = (tmp.join(f), dir.join(f));
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
            }
            std::fs::rename(&from, &to).map_err(io_err("write", &to))?;
        }
        let old: Vec<String> = self
            .claimed
            .listed
            .iter()
            .filter(|f| !files.contains(f))
            .cloned()
            .collect();
        remove_files(&dir, &old)?;
        prune(&dir)?;
        std::fs::rename(&staged_manifest, &target).map_err(io_err("write", &target))?;
        reg.retain(|p| p != &tmp);
        self.tmp = None;
        // Empty now, unless someone put a file there.
        let _ = remove_staging(&tmp);
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let mut reg = staging();
            let _ = remove_staging(&tmp);
            reg.retain(|p| p != &tmp);
        }
    }
}

/// Removes the staging folders of the runs this process is writing ([`Staged`]),
/// which leaves their folders' old results as they were; whether there were any.
/// For a Ctrl-C handler: a swap in progress finishes first.
pub(crate) fn discard_staged() -> bool {
    let mut reg = staging();
    let any = !reg.is_empty();
    for tmp in reg.drain(..) {
        let _ = remove_staging(&tmp);
    }
    any
}

/// The manifest text without its `[output]` table (what it says of the results,
/// the same however often the folder's charts were redrawn).
pub(crate) fn without_output(text: &str) -> &str {
    match text.rfind("\n[output]\n") {
        Some(i) => &text[..=i],
        None => text,
    }
}

/// Records that the charts `files` (relative names under `plots/`, and
/// `report.html`) are about to be written in `dir`, which must hold a manifest of
/// retrysim: refuses a symlink on the way or a file of that name that the manifest
/// does not list, removes the charts an earlier drawing listed that this one does not
/// (another format), and rewrites the manifest's `[output]` table.
pub(crate) fn record_charts(dir: &Path, files: &[String]) -> Result<(), OwnerError> {
    let foreign_manifest = || OwnerError::Foreign(dir.join("manifest.toml"));
    let m = read_manifest(dir)
        .map_err(|_| foreign_manifest())?
        .ok_or_else(foreign_manifest)?;
    let listed = listed(&m);
    for f in files {
        let p = check_target(dir, f)?;
        if std::fs::symlink_metadata(&p).is_ok() && !listed.contains(f) {
            return Err(OwnerError::Foreign(p));
        }
    }
    let charts = |f: &String| f.starts_with("plots/") || f == "report.html";
    let stale: Vec<String> = listed
        .iter()
        .filter(|f| charts(f) && !files.contains(f))
        .cloned()
        .collect();
    let mut all: Vec<String> = listed.into_iter().filter(|f| !charts(f)).collect();
    all.extend(files.iter().cloned());
    let path = check_target(dir, "manifest.toml")?;
    let text = super::read::read_to_string(&path, crate::export::MAX_MANIFEST_BYTES)
        .map_err(io_err("read", &path))?;
    let mut out = without_output(&text).to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&render_output(&Output::of(&all)));
    crate::export::write_atomic(&path, out.as_bytes()).map_err(io_err("write", &path))?;
    remove_listed(dir, &stale)
}

/// The `[output]` table as the manifest's last lines.
fn render_output(output: &Output) -> String {
    #[derive(serde::Serialize)]
    struct Tail<'a> {
        output: &'a Output,
    }
    toml::to_string(&Tail { output }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_own_names_can_be_listed() {
        for ok in [
            "summary.csv",
            "runs/",
            "plots/timeseries.png",
            "plots/success_fraction_vs_x.svg",
            "plots/metrics/amplification_vs_rate.png",
        ] {
            assert!(is_ours(ok), "{ok}");
        }
        for bad in [
            "../summary.csv",
            "/etc/passwd",
            "plots/photo.jpg",
            "plots/../x.png",
            "plots/.png",
            "notes.txt",
            "runs",
            "plots/a/b.png",
            "plots/metrics/../x.png",
            "plots/metrics/a/b.png",
            "plots/metrics/.png",
        ] {
            assert!(!is_ours(bad), "{bad}");
        }
    }

    #[test]
    fn temporary_names_are_recognised_exactly() {
        assert!(is_tmp_name(".tmp-12-0-summary.csv"));
        assert!(!is_tmp_name(".tmp-notes"));
        assert!(!is_tmp_name(".tmp-12-x-summary.csv"));
        assert!(!is_tmp_name("tmp-12-0-x"));
    }

    #[test]
    fn two_spellings_of_one_folder_resolve_alike() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(base.join("out")).unwrap();
        assert_eq!(resolve(&base.join("out")).unwrap(), base.join("out"));
        assert_eq!(resolve(&base.join("./out/")).unwrap(), base.join("out"));
        assert_eq!(resolve(&base.join("new/../out")).unwrap(), base.join("out"));
        assert_eq!(resolve(&base.join("new/..")).unwrap(), base);
        assert_eq!(resolve(&base.join("a/b")).unwrap(), base.join("a/b"));
    }

    #[test]
    fn removing_the_listed_files_leaves_everything_else() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("plots")).unwrap();
        std::fs::create_dir_all(p.join("runs/000001")).unwrap();
        std::fs::create_dir_all(p.join("runs/000002")).unwrap();
        std::fs::write(p.join("summary.csv"), "x").unwrap();
        std::fs::write(p.join("notes.txt"), "mine").unwrap();
        std::fs::write(p.join("plots/timeseries.png"), "x").unwrap();
        std::fs::write(p.join("plots/photo.txt"), "mine").unwrap();
        std::fs::write(p.join("runs/000001/summary.csv"), "x").unwrap();
        std::fs::write(p.join("runs/000002/mine.txt"), "mine").unwrap();
        std::fs::write(p.join(".tmp-1-2-summary.csv"), "half").unwrap();
        let files: Vec<String> = ["summary.csv", "plots/timeseries.png", "runs/"]
            .map(String::from)
            .to_vec();
        remove_listed(p, &files).unwrap();
        assert!(!p.join("summary.csv").exists());
        assert!(!p.join("plots/timeseries.png").exists());
        assert!(!p.join("runs/000001").exists());
        assert!(!p.join(".tmp-1-2-summary.csv").exists());
        for kept in ["notes.txt", "plots/photo.txt", "runs/000002/mine.txt"] {
            assert!(p.join(kept).exists(), "{kept}");
        }
    }

    /// Held by the tests that stage runs: [`discard_staged`] removes every one.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A folder holding a run's results, `notes.txt` of the user's, and its claim.
    fn old_run(p: &Path) -> Claimed {
        std::fs::create_dir_all(p.join("plots/metrics")).unwrap();
        for (f, text) in [
            ("summary.csv", "old"),
            ("aggregate.csv", "old"),
            ("plots/metrics/x_vs_y.png", "old"),
            ("notes.txt", "mine"),
        ] {
            std::fs::write(p.join(f), text).unwrap();
        }
        let listed: Vec<String> = [
            "manifest.toml",
            "summary.csv",
            "aggregate.csv",
            "plots/metrics/x_vs_y.png",
        ]
        .map(String::from)
        .to_vec();
        std::fs::write(
            p.join("manifest.toml"),
            format!("[run]\n{}", render_output(&Output::of(&listed))),
        )
        .unwrap();
        Claimed {
            dir: p.to_path_buf(),
            listed,
        }
    }

    #[test]
    fn a_staged_run_replaces_the_old_results_only_when_committed() {
        let _serial = serial();
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let claimed = old_run(p);
        let staged = Staged::begin(claimed).unwrap();
        assert_ne!(staged.dir(), p);
        std::fs::write(staged.dir().join("manifest.toml"), "[run]\nnew = 1\n").unwrap();
        std::fs::write(staged.dir().join("summary.csv"), "new").unwrap();
        assert_eq!(
            std::fs::read_to_string(p.join("summary.csv")).unwrap(),
            "old"
        );
        let files = ["manifest.toml", "summary.csv"].map(String::from);
        staged.commit(&files).unwrap();
        assert_eq!(
            std::fs::read_to_string(p.join("summary.csv")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(p.join("manifest.toml")).unwrap(),
            "[run]\nnew = 1\n"
        );
        assert!(!p.join("aggregate.csv").exists());
        assert!(!p.join("plots").exists(), "emptied chart folders go");
        let mut left: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["manifest.toml", "notes.txt", "summary.csv"]);
    }

    #[test]
    fn a_staged_run_dropped_or_discarded_leaves_the_old_results_and_nothing_else() {
        let _serial = serial();
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let claimed = old_run(p);
        let before: Vec<_> = ["summary.csv", "aggregate.csv", "manifest.toml"]
            .map(|f| std::fs::read(p.join(f)).unwrap())
            .to_vec();
        let names = || -> usize { std::fs::read_dir(p).unwrap().count() };
        let n = names();
        let staged = Staged::begin(claimed.clone()).unwrap();
        std::fs::write(staged.dir().join("summary.csv"), "new").unwrap();
        assert_eq!(names(), n + 1);
        drop(staged);
        assert_eq!(names(), n);
        let staged = Staged::begin(claimed.clone()).unwrap();
        std::fs::write(staged.dir().join(".tmp-1-2-summary.csv"), "half").unwrap();
        assert!(discard_staged());
        assert_eq!(names(), n);
        // Discarded: the commit is refused, and changes nothing.
        assert!(staged.commit(&["manifest.toml".to_string()]).is_err());
        let after: Vec<_> = ["summary.csv", "aggregate.csv", "manifest.toml"]
            .map(|f| std::fs::read(p.join(f)).unwrap())
            .to_vec();
        assert_eq!(after, before);
        // A staging folder left by a killed run is removed by the next claim's sweep
        // of leftovers, unless it holds something not of retrysim's.
        let left = p.join(".tmp-99999-0-run");
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("summary.csv"), "half").unwrap();
        let kept = p.join(".tmp-99999-1-run");
        std::fs::create_dir(&kept).unwrap();
        std::fs::write(kept.join("photo.jpg"), "mine").unwrap();
        remove_leftovers(p).unwrap();
        assert!(!left.exists());
        assert!(kept.join("photo.jpg").exists());
    }

    #[test]
    fn a_fresh_folder_is_written_directly() {
        let _serial = serial();
        let d = tempfile::tempdir().unwrap();
        let claimed = Claimed {
            dir: d.path().to_path_buf(),
            listed: Vec::new(),
        };
        let staged = Staged::begin(claimed).unwrap();
        assert_eq!(staged.dir(), d.path());
        staged.commit(&[]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_on_the_way_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir(p.join("elsewhere")).unwrap();
        std::fs::create_dir(p.join("out")).unwrap();
        std::os::unix::fs::symlink(p.join("elsewhere"), p.join("out/plots")).unwrap();
        assert!(matches!(
            check_target(&p.join("out"), "plots/timeseries.png"),
            Err(OwnerError::Symlink(_))
        ));
        assert!(check_target(&p.join("out"), "summary.csv").is_ok());
    }
}
