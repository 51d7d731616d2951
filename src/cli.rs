//! The command line (MODEL.md §8): argument parsing, and each subcommand as a function
//! from arguments to an exit code.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::export::manifest::Origin;
use crate::metrics::summary::Cell;
pub use crate::plot::Format;
use crate::scenario::{self, Loaded, ScenarioError, Source};
use crate::sweep::RunFolder;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: an expectation failed.
pub const EXIT_FAILED_EXPECTATION: i32 = 1;
/// Exit code: bad input (file, field, value).
pub const EXIT_BAD_INPUT: i32 = 2;

/// A deterministic discrete-event simulator of retry storms.
#[derive(Debug, Parser)]
#[command(name = "retrysim", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one scenario (the embedded default when none is given) and write CSV files,
    /// a manifest and plots.
    Run(RunArgs),
    /// Run a scenario's `[sweep]` grid times its replications in parallel; resumable,
    /// and shardable over machines.
    Sweep(SweepArgs),
    /// Join shard folders into the same files an unsharded sweep writes.
    Merge {
        /// Shard folders (all shards of one sweep).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Do not draw plots.
        #[arg(long)]
        no_plots: bool,
        /// Image format of the plots.
        #[arg(long, value_enum, default_value = "png")]
        format: Format,
        /// Replace an output folder that holds other results.
        #[arg(long)]
        force: bool,
    },
    /// Parse and validate scenario files without running them.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
    /// Print the resolved model (capacity, offered load, worst-case attempts, budgets,
    /// backoff against deadlines) and lint it for retry anti-patterns.
    Explain(ExplainArgs),
    /// Redraw the plots and report.html of a run or sweep folder from its CSV files.
    Plot {
        /// The result folder (holds manifest.toml, summary.csv, timeseries.csv...).
        dir: PathBuf,
        /// Image format of the plots.
        #[arg(long, value_enum, default_value = "png")]
        format: Format,
    },
    /// Run scenarios in memory and check their `[[expect]]` bounds (and drift against a
    /// baseline): exit 0 if all pass, 1 if any fails, 2 on bad input.
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Scenario file (TOML). Without one, the embedded default scenario runs.
    scenario: Option<PathBuf>,
    /// Output folder [default: output/<scenario name>/].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Do not draw plots.
    #[arg(long)]
    no_plots: bool,
    /// Image format of the plots.
    #[arg(long, value_enum, default_value = "png")]
    format: Format,
    /// Replace an output folder that holds results of another scenario.
    #[arg(long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, clap::Args)]
struct SweepArgs {
    /// Scenario file (TOML) with a `[sweep]` table.
    scenario: PathBuf,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Run only the runs with `run % N == I`, into their own folder.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    shard: Option<crate::sweep::Shard>,
    /// Output folder [default: output/<name>/, or output/<name>-shard-I-of-N/].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Override a scenario key: `--set duration=30s`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Do not draw plots.
    #[arg(long)]
    no_plots: bool,
    /// Image format of the plots.
    #[arg(long, value_enum, default_value = "png")]
    format: Format,
    /// Replace an output folder that holds other results.
    #[arg(long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

/// Reads `--seed`: a whole number the manifests and CSVs can hold as a signed 64-bit
/// integer.
fn parse_seed(s: &str) -> Result<u64, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if (0..=i128::from(i64::MAX)).contains(&n) => Ok(n as u64),
        _ => Err(format!(
            "must be a whole number from 0 to {} (found '{}')",
            i64::MAX,
            crate::scenario::error::shown(s)
        )),
    }
}

/// Reads `--jobs`: 1 to [`crate::sweep::MAX_JOBS`] worker threads.
fn parse_jobs(s: &str) -> Result<usize, String> {
    let max = crate::sweep::MAX_JOBS;
    match s.trim().parse::<i128>() {
        Ok(n) if (1..=max as i128).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number of worker threads from 1 to {max} (found '{}')",
            crate::scenario::error::shown(s)
        )),
    }
}

/// Exit code of a sweep interrupted by Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Parses the arguments, runs the command and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            EXIT_BAD_INPUT
        }
    }
}

fn error_chain(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ")
}

fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Sweep(args) => cmd_sweep(args),
        Command::Merge {
            dirs,
            out,
            no_plots,
            format,
            force,
        } => cmd_merge(&dirs, &out, force, (!no_plots).then_some(format)),
        Command::Validate { scenarios } => cmd_validate(&scenarios),
        Command::Explain(args) => cmd_explain(args),
        Command::Plot { dir, format } => cmd_plot(&dir, format),
        Command::Check(args) => cmd_check(args),
    }
}

/// Loads a scenario file (or the embedded default) with `--set` overrides and an
/// optional seed override.
pub fn load_scenario(
    path: Option<&Path>,
    sets: &[String],
    seed: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let source = match path {
        Some(p) => Source::read(p)?,
        None => Source::embedded_default(),
    };
    let mut sets = sets.to_vec();
    if let Some(s) = seed {
        if s > i64::MAX as u64 {
            return Err(ScenarioError::Override {
                path: source.path.clone(),
                key: "--seed".into(),
                message: format!("must be at most {} (found {s})", i64::MAX),
            });
        }
        sets.push(format!("seed={s}"));
    }
    scenario::load(source, &sets)
}

/// The overrides as typed: each `--set`, then `--seed`.
fn overrides(sets: &[String], seed: Option<u64>) -> Vec<String> {
    let mut o: Vec<String> = sets.iter().map(|s| format!("--set {s}")).collect();
    if let Some(s) = seed {
        o.push(format!("--seed {s}"));
    }
    o
}

fn cmd_run(args: RunArgs) -> Result<i32> {
    let loaded = load_scenario(args.scenario.as_deref(), &args.set, args.seed)?;
    if loaded.file.sweep.is_some() && !args.quiet {
        eprintln!("note: the scenario has a [sweep]: `run` runs its base point; `retrysim sweep` runs the grid");
    }
    let scn = &loaded.scenario;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("output").join(&scn.name));
    let origin = Origin::of(args.scenario.as_deref(), overrides(&args.set, args.seed));
    let folder = crate::sweep::run_folder(&loaded, &dir, &origin, args.force)?;
    if !args.no_plots {
        crate::plot::draw_folder(&folder.dir, args.format)?;
    }
    if !args.quiet {
        print_run_table(&loaded, &folder, &dir);
    }
    if let Some(t) = folder.truncated.first() {
        let n = folder.truncated.len();
        let which = if folder.runs == 1 {
            "run stopped early".to_string()
        } else {
            format!("{n} of {} runs stopped early, the first", folder.runs)
        };
        let t = match t.split_once(": ") {
            Some((_, why)) if folder.runs == 1 => why,
            _ => t.as_str(),
        };
        eprintln!(
            "error: scenario '{}': {which}: {t}; the results written are marked truncated",
            loaded.source.path,
        );
        return Ok(EXIT_BAD_INPUT);
    }
    Ok(EXIT_OK)
}

fn cmd_sweep(args: SweepArgs) -> Result<i32> {
    let loaded = load_scenario(Some(&args.scenario), &args.set, args.seed)?;
    if loaded.file.sweep.is_none() {
        anyhow::bail!(
            "scenario '{}' has no [sweep] table: `retrysim sweep` runs a grid of values (add a [sweep] table, or use `retrysim run` for one point and its replications)",
            loaded.source.path
        );
    }
    let name = loaded.scenario.name.clone();
    let plan = crate::sweep::plan(loaded)?;
    let out = args.out.clone().unwrap_or_else(|| match args.shard {
        Some(s) => PathBuf::from("output").join(format!("{name}-shard-{}-of-{}", s.index, s.count)),
        None => PathBuf::from("output").join(&name),
    });
    crate::sweep::install_ctrlc();
    let opts = crate::sweep::Options {
        out: out.clone(),
        jobs: args.jobs,
        shard: args.shard,
        force: args.force,
        progress: !args.quiet,
        origin: Origin::of(Some(&args.scenario), overrides(&args.set, args.seed)),
    };
    let outcome = match crate::sweep::run(&plan, &opts) {
        Err(e @ crate::sweep::SweepError::Interrupted { .. }) => {
            eprintln!("{e}");
            return Ok(EXIT_INTERRUPTED);
        }
        other => other?,
    };
    // A shard holds part of the grid: its plots would mislead; the merge draws them.
    if !args.no_plots && args.shard.is_none() {
        crate::plot::draw_folder(&out, args.format)?;
    }
    if !args.quiet {
        println!(
            "retrysim {}: sweep '{}': {} cells × {} replications = {} runs{}; {} run here ({} resumed from disk)",
            env!("CARGO_PKG_VERSION"),
            name,
            plan.cells.len(),
            plan.replications,
            plan.total_runs(),
            args.shard.map_or(String::new(), |s| format!(", shard {}/{}", s.index, s.count)),
            outcome.runs - outcome.resumed,
            outcome.resumed,
        );
        let files = if args.shard.is_some() {
            "summary.csv, timeseries.csv, herd.csv, manifest.toml, runs/"
        } else {
            "summary.csv, aggregate.csv, timeseries.csv, herd.csv, manifest.toml, runs/"
        };
        println!("wrote {}/{{{files}}}", out.display());
    }
    if !outcome.truncated.is_empty() {
        let n = outcome.truncated.len();
        eprintln!(
            "error: sweep '{name}': {n} run{} stopped early at a limit; {} marked truncated in {}:",
            if n == 1 { "" } else { "s" },
            if n == 1 {
                "its results are"
            } else {
                "their results are"
            },
            out.display()
        );
        for t in outcome.truncated.iter().take(10) {
            eprintln!("  {t}");
        }
        if n > 10 {
            eprintln!(
                "  ... and {} more (the truncated column of summary.csv)",
                n - 10
            );
        }
        return Ok(EXIT_BAD_INPUT);
    }
    Ok(EXIT_OK)
}

fn cmd_merge(dirs: &[PathBuf], out: &Path, force: bool, plots: Option<Format>) -> Result<i32> {
    let (plan, truncated) = crate::sweep::merge(dirs, out, force)?;
    if let Some(format) = plots {
        crate::plot::draw_folder(out, format)?;
    }
    println!(
        "merged {} shards of sweep '{}' ({} runs) into {}",
        dirs.len(),
        plan.base.scenario.name,
        plan.total_runs(),
        out.display()
    );
    if !truncated.is_empty() {
        let runs: Vec<String> = truncated.iter().take(10).map(u64::to_string).collect();
        eprintln!(
            "error: sweep '{}': {} run{} stopped early at limits.max_in_flight or limits.max_events (run {}{}); truncated = true in summary.csv",
            plan.base.scenario.name,
            truncated.len(),
            if truncated.len() == 1 { "" } else { "s" },
            runs.join(", "),
            if truncated.len() > 10 { ", ..." } else { "" }
        );
        return Ok(EXIT_BAD_INPUT);
    }
    Ok(EXIT_OK)
}

fn print_run_table(loaded: &Loaded, folder: &RunFolder, dir: &Path) {
    let scn = &loaded.scenario;
    println!(
        "retrysim {}: scenario '{}' ({}), seed {}, {} run{}",
        env!("CARGO_PKG_VERSION"),
        scn.name,
        loaded.source.path,
        scn.seed,
        folder.runs,
        if folder.runs == 1 { "" } else { "s" }
    );
    println!(
        "{:>5} {:>10} {:>9} {:>8} {:>10} {:>10} {:>11} {:>10}",
        "run", "logical", "success", "amplif.", "p50 ms", "p99 ms", "recovery s", "metastable"
    );
    for r in &folder.first {
        let g = |c: &str| r.summary.get(c).cloned().unwrap_or(Cell::Empty);
        let pct = g("success_fraction")
            .as_f64()
            .map_or("-".into(), |x| format!("{:.2}%", 100.0 * x));
        let num = |c: &str, p: usize| g(c).as_f64().map_or("-".into(), |x| format!("{x:.p$}"));
        println!(
            "{:>5} {:>10} {:>9} {:>8} {:>10} {:>10} {:>11} {:>10}",
            r.run,
            g("logical").render(),
            pct,
            num("amplification", 3),
            num("latency_p50_ms", 1),
            num("latency_p99_ms", 1),
            num("recovery_time_s", 1),
            if g("metastable") == Cell::Bool(true) {
                "yes"
            } else {
                "no"
            },
        );
    }
    if folder.runs > folder.first.len() as u64 {
        println!(
            "  ... and {} more runs (summary.csv has every one)",
            folder.runs - folder.first.len() as u64
        );
    }
    println!(
        "wrote {}/{{summary.csv, timeseries.csv, herd.csv, manifest.toml}}",
        dir.display()
    );
}

fn cmd_plot(dir: &Path, format: Format) -> Result<i32> {
    let files = crate::plot::draw_folder(dir, format)?;
    println!("wrote {} files in {}", files.len(), dir.display());
    Ok(EXIT_OK)
}

fn cmd_validate(paths: &[PathBuf]) -> Result<i32> {
    let mut code = EXIT_OK;
    for p in paths {
        match load_scenario(Some(p), &[], None) {
            Ok(l) => println!(
                "ok: {} ('{}': {} fleet{}, {} outage{})",
                p.display(),
                l.scenario.name,
                l.scenario.fleets.len(),
                if l.scenario.fleets.len() == 1 {
                    ""
                } else {
                    "s"
                },
                l.scenario.outages.len(),
                if l.scenario.outages.len() == 1 {
                    ""
                } else {
                    "s"
                },
            ),
            Err(e) => {
                eprintln!("error: {e}");
                code = EXIT_BAD_INPUT;
            }
        }
    }
    Ok(code)
}

/// Exit code of `explain`: a denied lint fired.
pub const EXIT_DENIED_LINT: i32 = 1;

#[derive(Debug, clap::Args)]
struct ExplainArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Make a lint an error (exit 1) when it fires; repeatable; `all` denies every lint.
    #[arg(long = "deny", value_name = "LINT")]
    deny: Vec<String>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

fn cmd_explain(args: ExplainArgs) -> Result<i32> {
    let denied = crate::explain::lint::resolve_deny(&args.deny)?;
    let loaded = load_scenario(Some(&args.scenario), &args.set, None)?;
    let explanation = crate::explain::explain(&loaded.scenario);
    print!("{}", explanation.render());
    let fired: Vec<_> = explanation
        .lints
        .iter()
        .filter(|l| denied.contains(&l.id))
        .collect();
    for l in &fired {
        eprintln!(
            "error: scenario '{}': denied lint fired: {l}",
            loaded.source.path
        );
    }
    Ok(if fired.is_empty() {
        EXIT_OK
    } else {
        EXIT_DENIED_LINT
    })
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Compare the summary with this baseline CSV (one scenario only).
    #[arg(long, value_name = "FILE.csv")]
    baseline: Option<PathBuf>,
    /// Largest relative drift from the baseline per metric: `5%` or `0.05`; the
    /// scenario's `[check.tolerance]` overrides it per metric.
    #[arg(long, value_name = "TOL", default_value = "5%", value_parser = crate::check::baseline::parse_tolerance)]
    tolerance: f64,
    /// Write (or refresh) the `--baseline` file from this run instead of comparing.
    #[arg(long)]
    write_baseline: bool,
    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Base seed, overriding the scenarios' `seed`.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print nothing but failures and errors.
    #[arg(long, short)]
    quiet: bool,
}

/// A scenario of `check`, validated before anything runs.
struct Checked {
    plan: crate::sweep::Plan,
    expectations: Vec<crate::check::Expectation>,
    tolerances: crate::check::baseline::Tolerances,
    baseline: Option<crate::check::baseline::Baseline>,
}

fn prepare_check(path: &Path, args: &CheckArgs) -> Result<Checked> {
    let loaded = load_scenario(Some(path), &args.set, args.seed)?;
    let plan = crate::sweep::plan(loaded)?;
    let expectations = crate::check::resolve(&plan)?;
    let tolerances = crate::check::baseline::tolerances(&plan, args.tolerance)?;
    let baseline = match &args.baseline {
        Some(b) if !args.write_baseline => {
            let base = crate::check::baseline::read(b)?;
            base.check_shape(&plan)?;
            Some(base)
        }
        _ => None,
    };
    Ok(Checked {
        plan,
        expectations,
        tolerances,
        baseline,
    })
}

fn cmd_check(args: CheckArgs) -> Result<i32> {
    use anyhow::Context as _;
    if args.write_baseline && args.baseline.is_none() {
        anyhow::bail!("--write-baseline needs --baseline FILE.csv: the file to write");
    }
    if args.baseline.is_some() && args.scenarios.len() != 1 {
        anyhow::bail!(
            "--baseline holds the summary of one scenario: give exactly one (found {})",
            args.scenarios.len()
        );
    }
    // Everything is validated before anything runs.
    let mut checked = Vec::new();
    let mut bad = false;
    for p in &args.scenarios {
        match prepare_check(p, &args) {
            Ok(c) => checked.push(c),
            Err(e) => {
                eprintln!("error: {}", error_chain(&e));
                bad = true;
            }
        }
    }
    if bad {
        return Ok(EXIT_BAD_INPUT);
    }
    let pool = match args.jobs {
        Some(j) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(j.clamp(1, crate::sweep::MAX_JOBS))
                .build()
                .with_context(|| format!("cannot start {j} worker threads"))?,
        ),
        None => None,
    };
    let mut rows = Vec::new();
    let mut truncated = Vec::new();
    for c in &checked {
        let plan = &c.plan;
        let path = &plan.base.source.path;
        if !args.quiet {
            println!(
                "retrysim {}: check '{}' ({}): {} cell{} × {} replication{} = {} run{}",
                env!("CARGO_PKG_VERSION"),
                plan.base.scenario.name,
                path,
                plan.cells.len(),
                if plan.cells.len() == 1 { "" } else { "s" },
                plan.replications,
                if plan.replications == 1 { "" } else { "s" },
                plan.total_runs(),
                if plan.total_runs() == 1 { "" } else { "s" },
            );
        }
        let results = match &pool {
            Some(p) => p.install(|| crate::sweep::run_in_memory(plan)),
            None => crate::sweep::run_in_memory(plan),
        }?;
        let stopped: Vec<(u64, &String)> = results
            .iter()
            .filter_map(|r| r.metrics.totals.truncated.as_ref().map(|t| (r.run, t)))
            .collect();
        rows.extend(crate::check::check_plan(plan, &c.expectations, &results));
        if let Some(b) = &c.baseline {
            rows.extend(crate::check::baseline::compare(
                plan,
                b,
                &c.tolerances,
                &results,
            )?);
        }
        if let (Some(file), true) = (&args.baseline, args.write_baseline) {
            if stopped.is_empty() {
                let text = crate::check::baseline::render(plan, &results);
                crate::export::write_atomic(file, text.as_bytes())
                    .with_context(|| format!("cannot write baseline '{}'", file.display()))?;
                if !args.quiet {
                    println!(
                        "wrote baseline {} ({} cell{})",
                        file.display(),
                        plan.cells.len(),
                        if plan.cells.len() == 1 { "" } else { "s" }
                    );
                }
            }
        } else if c.expectations.is_empty() && c.baseline.is_none() && !args.quiet {
            eprintln!(
                "note: scenario '{path}' has no [[expect]] and no --baseline was given: nothing to check"
            );
        }
        if let Some((run, why)) = stopped.first() {
            let mut message = format!(
                "scenario '{path}': run {run} stopped early: {why} ({} of {} runs stopped early); the summary is incomplete, so the check cannot pass (raise [limits] or shorten the scenario)",
                stopped.len(),
                results.len()
            );
            if let (Some(file), true) = (&args.baseline, args.write_baseline) {
                message.push_str(&format!("; baseline '{}' was not written", file.display()));
            }
            truncated.push(message);
        }
    }
    let failed = rows.iter().filter(|r| !r.pass).count();
    if !args.quiet {
        if !rows.is_empty() {
            print!("{}", crate::check::render_table(&rows));
        }
        if rows.is_empty() {
            println!("check: nothing to check");
        } else {
            println!("check: {} passed, {failed} failed", rows.len() - failed);
        }
    }
    print!("{}", crate::check::render_failures(&rows));
    for t in &truncated {
        eprintln!("error: {t}");
    }
    Ok(if !truncated.is_empty() {
        EXIT_BAD_INPUT
    } else if failed > 0 {
        EXIT_FAILED_EXPECTATION
    } else {
        EXIT_OK
    })
}
