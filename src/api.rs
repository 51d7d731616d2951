//! The library's entry points: what the `retrysim` command calls, one function per
//! thing it does, each taking plain values and returning an [`Error`] of the kind that
//! decides the exit code. Printing is the caller's.
//!
//! | to ... | call |
//! | --- | --- |
//! | load a scenario (a file or the embedded default, with overrides) | [`load_scenario`] |
//! | load a scenario given as text (no file system: the playground) | [`load_scenario_text`] |
//! | run one replication in memory | [`run_scenario`] |
//! | run a scenario's replications into a results folder | [`run_to_folder`] |
//! | run one replication in memory and render its rows as `retrysim run` writes them | [`run_tables`] |
//! | plan and run a sweep (resumable, shardable, stoppable) | [`plan_sweep`], [`run_sweep`] |
//! | merge shard folders | [`merge_shards`] |
//! | explain and lint a scenario | [`explain_scenario`] |
//! | check expectations and baselines | [`crate::check::prepare`], [`crate::check::run_all`] |
//! | find the smallest (largest) value of a key for which the expectations hold | [`search_scenario`] |
//! | draw the charts of a results folder | [`draw_folder`] |

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::error::Error;
use crate::explain::lint::Lint;
use crate::explain::Explanation;
use crate::export::manifest::Origin;
use crate::metrics::summary::Layout;
#[cfg(not(target_arch = "wasm32"))]
use crate::plot::Format;
use crate::run::RunResult;
use crate::scenario::{self, Loaded, Scenario};
use crate::sweep::{self, Merged, Outcome, Plan, Progress, RunFolder, Shard};

pub use crate::scenario::Overrides;

/// Reads a scenario file (`None`: the embedded default), applies the overrides, and
/// parses and validates it (`scenario::load_file`).
pub fn load_scenario(path: Option<&Path>, overrides: &Overrides) -> Result<Loaded, Error> {
    Ok(scenario::load_file(path, overrides)?)
}

/// Parses and validates a scenario given as text, with its overrides, touching no
/// file: messages name it `path` exactly as they name a file of that name read by
/// [`load_scenario`], so the same text gives the same errors (`scenario::load_text`).
///
/// ```
/// let o = retrysim::Overrides { sets: vec![], seed: Some(3) };
/// let text = retrysim::DEFAULT_SCENARIO;
/// let loaded = retrysim::load_scenario_text("playground.toml", text, &o).unwrap();
/// assert_eq!(loaded.scenario.seed, 3);
/// let e = retrysim::load_scenario_text("playground.toml", "seed = ", &o).unwrap_err();
/// assert!(e.to_string().contains("playground.toml"));
/// ```
pub fn load_scenario_text(path: &str, text: &str, overrides: &Overrides) -> Result<Loaded, Error> {
    Ok(scenario::load_text(path, text, overrides)?)
}

/// Runs replication `replication` of a scenario in memory (as run `replication`).
///
/// ```
/// let loaded = retrysim::load_scenario(None, &Default::default()).unwrap();
/// let r = retrysim::run_scenario(&loaded.scenario, 0);
/// assert!(r.metrics.totals.logical > 0);
/// ```
pub fn run_scenario(scn: &Scenario, replication: u32) -> RunResult {
    let layout = Layout::of(scn);
    crate::run::run_one(scn, &layout, u64::from(replication), replication)
}

/// Runs replication `replication` of a loaded scenario's base point in memory and
/// renders the rows `retrysim run` writes for it, `summary.csv` as (columns, values)
/// (see `sweep::run_tables`); no file is touched, so it runs in WebAssembly.
///
/// ```
/// let loaded = retrysim::load_scenario(None, &Default::default()).unwrap();
/// let t = retrysim::run_tables(&loaded, 0).unwrap();
/// assert_eq!(t.summary_columns.len(), t.summary_values.len());
/// assert!(t.timeseries.starts_with("run,replication,t,"));
/// ```
pub fn run_tables(loaded: &Loaded, replication: u32) -> Result<sweep::RunTables, Error> {
    Ok(sweep::run_tables(loaded, replication)?)
}

/// Where a scenario came from and where its results go.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The scenario file as given (`None`: the embedded default).
    pub scenario: Option<&'a Path>,
    /// Its overrides (recorded in the manifest).
    pub overrides: &'a Overrides,
    /// The output folder (`None`: `sweep::default_out`).
    pub out: Option<&'a Path>,
    /// Replace a folder that holds other results.
    pub force: bool,
}

impl Target<'_> {
    fn origin(&self) -> Origin {
        Origin::of(self.scenario, self.overrides.typed())
    }

    fn out(&self, name: &str, shard: Option<Shard>) -> PathBuf {
        self.out
            .map_or_else(|| sweep::default_out(name, shard), Path::to_path_buf)
    }
}

/// Runs the base point of a loaded scenario (its replications; any `[sweep]` left
/// out) into its results folder; earlier results there are replaced only once the new
/// ones are complete (`crate::export::owner::Staged`). Runs that stopped at a limit
/// are in `RunFolder::truncation`; the charts are [`draw_folder`]'s.
pub fn run_to_folder(loaded: &Loaded, target: &Target) -> Result<RunFolder, Error> {
    let dir = target.out(&loaded.scenario.name, None);
    Ok(sweep::run_folder(
        loaded,
        &dir,
        &target.origin(),
        target.force,
    )?)
}

/// The column dictionary of the folder a loaded scenario writes (its `columns.csv`):
/// the sweep folder's when it has a `[sweep]` (its grid planned, its `param_` columns
/// named), else the run folder's (`aggregate.csv` with replications).
pub fn column_dictionary(loaded: Loaded) -> Result<Vec<crate::metrics::columns::Entry>, Error> {
    let aggregate = loaded.file.sweep.is_some() || loaded.scenario.replications > 1;
    Ok(sweep::plan(loaded)?.dictionary(aggregate))
}

/// Plans the `[sweep]` grid of a loaded scenario; a scenario without one is refused.
pub fn plan_sweep(loaded: Loaded) -> Result<Plan, Error> {
    if loaded.file.sweep.is_none() {
        return Err(Error::bad_input(format!(
            "scenario '{}' has no [sweep] table: `retrysim sweep` runs a grid of values (add a [sweep] table, or use `retrysim run` for one point and its replications)",
            loaded.source.path
        )));
    }
    Ok(sweep::plan(loaded)?)
}

/// The output folder a sweep (or shard) writes into.
pub fn sweep_out(plan: &Plan, target: &Target, shard: Option<Shard>) -> PathBuf {
    target.out(&plan.base.scenario.name, shard)
}

/// Runs a planned sweep, or one shard of it, into its folder (see `sweep::run`):
/// resumes what is on disk, starts no new run once `stop` is set, tells `progress`
/// of each finished run.
pub fn run_sweep(
    plan: &Plan,
    target: &Target,
    jobs: Option<usize>,
    shard: Option<Shard>,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> Result<Outcome, Error> {
    let opts = sweep::Options {
        out: sweep_out(plan, target, shard),
        jobs,
        shard,
        force: target.force,
        origin: target.origin(),
    };
    Ok(sweep::run(plan, &opts, stop, progress)?)
}

/// Merges the shard folders of one sweep into `out`.
pub fn merge_shards(dirs: &[PathBuf], out: &Path, force: bool) -> Result<Merged, Error> {
    Ok(sweep::merge(dirs, out, force)?)
}

/// A scenario explained, and the denied lints that fired.
#[derive(Debug)]
pub struct Explained {
    /// The scenario.
    pub loaded: Loaded,
    /// Its explanation (render it with [`Explanation::render`]).
    pub explanation: Explanation,
    /// The lints of `deny` that fired.
    pub denied: Vec<Lint>,
}

/// Explains and lints a scenario file; `deny` names lints that must not fire (`all`:
/// every lint).
pub fn explain_scenario(
    path: &Path,
    overrides: &Overrides,
    deny: &[String],
) -> Result<Explained, Error> {
    let denied_ids = crate::explain::lint::resolve_deny(deny)?;
    let loaded = load_scenario(Some(path), overrides)?;
    let explanation = crate::explain::explain(&loaded.scenario);
    let denied = explanation
        .lints
        .iter()
        .filter(|l| denied_ids.contains(&l.id))
        .cloned()
        .collect();
    Ok(Explained {
        loaded,
        explanation,
        denied,
    })
}

/// Searches a scenario key for the smallest (largest) value at which every
/// `[[expect]]` holds (see [`crate::search`]): validates the request, tells `starting`
/// of the search before anything runs and `on_probe` of each value tried.
pub fn search_scenario(
    req: &crate::search::Request,
    starting: &mut dyn FnMut(&crate::search::Search),
    on_probe: &mut dyn FnMut(&crate::search::Probe),
) -> Result<crate::search::Outcome, Error> {
    let search = crate::search::prepare(req)?;
    starting(&search);
    search.run(on_probe)
}

#[cfg(not(target_arch = "wasm32"))]
/// Draws the charts and `report.html` of a results folder from its files; returns the
/// files written.
pub fn draw_folder(dir: &Path, format: Format) -> Result<Vec<PathBuf>, Error> {
    Ok(crate::plot::draw_folder(dir, format)?)
}

pub mod playground;
/// What the Python package calls (`python/`): typed tables instead of files. Not in
/// WebAssembly (the playground has its own calls).
#[cfg(not(target_arch = "wasm32"))]
pub mod python;
