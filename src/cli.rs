//! The command line (MODEL.md §8): argument parsing, and each subcommand as a function
//! from arguments to an exit code.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rayon::prelude::*;

use crate::export::run_dir;
use crate::metrics::summary::{Cell, Layout};
pub use crate::plot::Format;
use crate::run::{run_one, RunResult};
use crate::scenario::{self, Loaded, ScenarioError, Source};

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
    /// Parse and validate scenario files without running them.
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
    /// Redraw the plots and report.html of a run or sweep folder from its CSV files.
    Plot {
        /// The result folder (holds manifest.toml, summary.csv, timeseries.csv...).
        dir: PathBuf,
        /// Image format of the plots.
        #[arg(long, value_enum, default_value = "png")]
        format: Format,
    },
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Scenario file (TOML). Without one, the embedded default scenario runs.
    scenario: Option<PathBuf>,
    /// Output folder [default: output/<scenario name>/].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N")]
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
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

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
        Command::Validate { scenarios } => cmd_validate(&scenarios),
        Command::Plot { dir, format } => cmd_plot(&dir, format),
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

/// Runs every replication of a scenario in parallel, results in replication order.
pub fn run_replications(loaded: &Loaded) -> Vec<RunResult> {
    let scn = &loaded.scenario;
    let layout = Layout::of(scn);
    (0..scn.replications)
        .into_par_iter()
        .map(|r| run_one(scn, &layout, u64::from(r), r))
        .collect()
}

fn cmd_run(args: RunArgs) -> Result<i32> {
    let loaded = load_scenario(args.scenario.as_deref(), &args.set, args.seed)?;
    let scn = &loaded.scenario;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("output").join(&scn.name));
    let results = run_replications(&loaded);
    let layout = Layout::of(scn);
    let rendered = run_dir::render(&results, &layout, scn.dependency.servers, &[]);
    run_dir::write(&dir, &loaded, &rendered, results.len() as u64)
        .with_context(|| format!("cannot write results to '{}'", dir.display()))?;
    if !args.no_plots {
        crate::plot::draw_folder(&dir, args.format)?;
    }
    let truncated: Vec<String> = results
        .iter()
        .filter_map(|r| r.metrics.totals.truncated.clone())
        .collect();
    if !args.quiet {
        print_run_table(&loaded, &results, &dir);
    }
    if let Some(t) = truncated.first() {
        eprintln!(
            "error: scenario '{}': run stopped early: {t}; the results written are marked truncated",
            loaded.source.path
        );
        return Ok(EXIT_BAD_INPUT);
    }
    Ok(EXIT_OK)
}

fn print_run_table(loaded: &Loaded, results: &[RunResult], dir: &Path) {
    let scn = &loaded.scenario;
    println!(
        "retrysim {}: scenario '{}' ({}), seed {}, {} run{}",
        env!("CARGO_PKG_VERSION"),
        scn.name,
        loaded.source.path,
        scn.seed,
        results.len(),
        if results.len() == 1 { "" } else { "s" }
    );
    println!(
        "{:>5} {:>10} {:>9} {:>8} {:>10} {:>10} {:>11} {:>10}",
        "run", "logical", "success", "amplif.", "p50 ms", "p99 ms", "recovery s", "metastable"
    );
    for r in results {
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
