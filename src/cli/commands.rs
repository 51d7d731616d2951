//! One function per subcommand: arguments in, library call, printed results out, an
//! exit code or an error (whose kind gives the code) back.

use std::path::{Path, PathBuf};

use crate::error::exit;
use crate::metrics::columns;
use crate::metrics::summary::Cell;
use crate::scenario::Loaded;
use crate::sweep::RunFolder;
use crate::{Error, Overrides, Target};
use anyhow::Result;

use super::args::{Cli, Command, ExplainArgs, Format, RunArgs, SweepArgs};

/// Runs the command `cli` names.
pub(crate) fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => run(args),
        Command::Sweep(args) => sweep(args),
        Command::Merge {
            dirs,
            out,
            no_plots,
            format,
            force,
            quiet,
        } => merge(&dirs, &out, force, (!no_plots).then_some(format), quiet),
        Command::Validate { scenarios, quiet } => Ok(validate(&scenarios, quiet)),
        Command::Columns {
            scenario,
            set,
            markdown,
            quiet: _,
        } => columns(scenario.as_deref(), set, markdown),
        Command::Explain(args) => explain(args),
        Command::Lints { markdown, quiet: _ } => Ok(lints(markdown)),
        Command::Plot { dir, format, quiet } => plot(&dir, format, quiet),
        Command::Check(args) => super::check::check(args),
        Command::Search(args) => super::search::search(args),
        Command::Diff(args) => super::diff::diff(args),
        Command::Import(args) => super::import::import(args),
        Command::Presets {
            name,
            markdown,
            quiet: _,
        } => super::presets::presets(name.as_deref(), markdown),
        Command::Reference { json, .. } => {
            if json {
                let schema = crate::scenario::reference::schema();
                println!("{}", serde_json::to_string_pretty(&schema)?);
            } else {
                print!("{}", crate::scenario::reference::markdown());
            }
            Ok(exit::OK)
        }
        Command::Completions { shell, quiet: _ } => super::shell::completions(shell),
        Command::Man { markdown: true, .. } => super::shell::man_markdown(),
        Command::Man {
            out,
            quiet,
            markdown: false,
        } => super::shell::man(out.as_deref(), quiet),
    }
}

fn columns(scenario: Option<&Path>, sets: Vec<String>, markdown: bool) -> Result<i32> {
    let entries = match scenario {
        Some(p) => {
            let overrides = Overrides { sets, seed: None };
            let loaded = crate::load_scenario(Some(p), &overrides)?;
            crate::column_dictionary(loaded)?
        }
        None => crate::metrics::columns::dictionary(None),
    };
    if markdown {
        print!("{}", crate::export::markdown::dictionary(&entries));
    } else {
        print!("{}", crate::export::csv::dictionary(&entries));
    }
    Ok(0)
}

fn lints(markdown: bool) -> i32 {
    let rules = &crate::explain::lint::LINTS;
    if markdown {
        print!("{}", crate::export::markdown::lints(rules));
    } else {
        print!("{}", crate::export::csv::lints(rules));
    }
    exit::OK
}

fn run(args: RunArgs) -> Result<i32> {
    let mut sets = args.set;
    if let Some(n) = args.trace {
        sets.push(format!("trace.sample={n}"));
    }
    let overrides = Overrides {
        sets,
        seed: args.seed,
    };
    let loaded = crate::load_scenario(args.scenario.as_deref(), &overrides)?;
    if let Some(code) = super::import::warn(&loaded, args.quiet, args.deny_unmodelled) {
        return Ok(code);
    }
    if loaded.file.sweep.is_some() && !args.quiet {
        eprintln!("note: the scenario has a [sweep]: `run` runs its base point; `retrysim sweep` runs the grid");
    }
    let target = Target {
        scenario: args.scenario.as_deref(),
        overrides: &overrides,
        out: args.out.as_deref(),
        force: args.force,
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| crate::sweep::default_out(&loaded.scenario.name, None));
    super::signal::install_for_run(out);
    // The replications run on a pool of `--jobs` threads; results are written in plan
    // order, so the files are the same whatever the number.
    let folder = crate::sweep::with_jobs(args.jobs, || crate::run_to_folder(&loaded, &target))
        .map_err(Error::from)??;
    if !args.no_plots {
        crate::draw_folder(&folder.dir, args.format.into())?;
    }
    if args.json {
        print_run_json(&folder)?;
        if !args.quiet {
            eprintln!("wrote {}/", folder.out.display());
        }
    } else if !args.quiet {
        print_run_table(&loaded, &folder);
    }
    stopped(folder.truncation)
}

/// Exit 0, or the error of runs that stopped at a limit.
fn stopped(t: Option<crate::Truncation>) -> Result<i32> {
    match t {
        Some(t) => Err(Error::Stopped(t).into()),
        None => Ok(exit::OK),
    }
}

fn sweep(args: SweepArgs) -> Result<i32> {
    let overrides = Overrides {
        sets: args.set,
        seed: args.seed,
    };
    let loaded = crate::load_scenario(Some(&args.scenario), &overrides)?;
    if let Some(code) = super::import::warn(&loaded, args.quiet, args.deny_unmodelled) {
        return Ok(code);
    }
    let plan = crate::plan_sweep(loaded)?;
    let target = Target {
        scenario: Some(&args.scenario),
        overrides: &overrides,
        out: args.out.as_deref(),
        force: args.force,
    };
    let out = crate::sweep_out(&plan, &target, args.shard);
    if args.dry_run {
        print_plan(&plan, args.shard, &out)?;
        return Ok(exit::OK);
    }
    if !args.quiet {
        eprintln!("{}", plan_line(&plan, args.shard, &out));
    }
    let stop = super::signal::install();
    let bar = super::progress::Bar::new(args.quiet);
    let outcome = crate::run_sweep(&plan, &target, args.jobs, args.shard, stop, &bar)?;
    for (run, why) in outcome.rerun.iter().filter(|_| !args.quiet) {
        eprintln!("note: run {run} on disk was not whole ({why}): it ran again");
    }
    // A shard holds part of the grid: its plots would mislead; the merge draws them.
    if !args.no_plots && args.shard.is_none() {
        crate::draw_folder(&out, args.format.into())?;
    }
    if !args.quiet {
        println!(
            "retrysim {}: sweep '{}': {} cells × {} replications = {} runs{}; {} run here ({} resumed from disk)",
            env!("CARGO_PKG_VERSION"),
            plan.base.scenario.name,
            plan.cells.len(),
            plan.replications,
            plan.total_runs(),
            args.shard.map_or(String::new(), |s| format!(", shard {}/{}", s.index, s.count)),
            outcome.runs - outcome.resumed,
            outcome.resumed,
        );
        // A shard's cells are partial: the merge's folder has the whole table.
        if args.shard.is_none() {
            print!(
                "{}",
                crate::plot::sweep_summary(&out).map_err(crate::Error::from)?
            );
        }
        let files = if args.shard.is_some() {
            "summary.csv, timeseries.csv, herd.csv, attempts_by_ordinal.csv, columns.csv, manifest.toml, runs/"
        } else {
            "summary.csv, aggregate.csv, aggregate_long.csv, timeseries.csv, herd.csv, attempts_by_ordinal.csv, columns.csv, manifest.toml, runs/"
        };
        println!("wrote {}/{{{files}}}", out.display());
    }
    stopped(outcome.truncation)
}

/// The one-line plan: `N cells × R replications = M runs → DIR`, and the shard.
fn plan_line(plan: &crate::sweep::Plan, shard: Option<crate::sweep::Shard>, out: &Path) -> String {
    format!(
        "{} cell{} × {} replication{} = {} run{}{} → {}/",
        plan.cells.len(),
        plural(plan.cells.len()),
        plan.replications,
        plural(plan.replications as usize),
        plan.total_runs(),
        plural(plan.total_runs() as usize),
        shard.map_or(String::new(), |s| format!(
            " (shard {}/{}: {} here)",
            s.index,
            s.count,
            (0..plan.total_runs())
                .filter(|r| r % s.count == s.index)
                .count()
        )),
        out.display()
    )
}

/// `sweep --dry-run`: the plan on stdout; nothing runs, nothing is written.
fn print_plan(
    plan: &crate::sweep::Plan,
    shard: Option<crate::sweep::Shard>,
    out: &Path,
) -> Result<()> {
    println!(
        "sweep '{}' ({}), dry run: nothing runs, nothing is written",
        plan.base.scenario.name, plan.base.source.path
    );
    for axis in &plan.axes {
        // A label with a comma is quoted, so the list reads unambiguously.
        let values: Vec<String> = axis
            .labels
            .iter()
            .map(|l| {
                if l.contains(',') {
                    format!("{l:?}")
                } else {
                    l.clone()
                }
            })
            .collect();
        println!(
            "  {} = [{}] ({} value{})",
            axis.key,
            values.join(", "),
            values.len(),
            plural(values.len())
        );
    }
    // Logical requests: offered rate × duration of each cell's scenario, times its
    // replications (retries and closed fleets come on top).
    let mut logical = 0.0;
    for cell in 0..plan.cells.len() {
        let loaded = plan.loaded(cell).map_err(Error::from)?;
        let e = crate::explain::explain(&loaded.scenario);
        logical += e.offered_mean * (e.duration as f64 / 1e9) * f64::from(plan.replications);
    }
    println!("  {}", plan_line(plan, shard, out));
    println!(
        "  about {} logical requests in all, offered rate × duration per run (not events: retries and closed fleets come on top)",
        crate::metrics::format::shortest(logical.round())
    );
    Ok(())
}

fn merge(
    dirs: &[PathBuf],
    out: &Path,
    force: bool,
    plots: Option<Format>,
    quiet: bool,
) -> Result<i32> {
    let merged = crate::merge_shards(dirs, out, force)?;
    if let Some(format) = plots {
        crate::draw_folder(out, format.into())?;
    }
    if !quiet {
        println!(
            "merged {} shards of sweep '{}' ({} runs) into {}",
            merged.shards,
            merged.plan.base.scenario.name,
            merged.plan.total_runs(),
            out.display()
        );
    }
    stopped(merged.truncation)
}

fn print_run_table(loaded: &Loaded, folder: &RunFolder) {
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
        let pct = g(columns::SUCCESS_FRACTION.name)
            .as_f64()
            .map_or("-".into(), |x| format!("{:.2}%", 100.0 * x));
        let num = |c: &str, p: usize| g(c).as_f64().map_or("-".into(), |x| format!("{x:.p$}"));
        println!(
            "{:>5} {:>10} {:>9} {:>8} {:>10} {:>10} {:>11} {:>10}",
            r.run,
            g(columns::LOGICAL.name).render(),
            pct,
            num(columns::AMPLIFICATION.name, 3),
            num(columns::LATENCY_P50_MS.name, 1),
            num(columns::LATENCY_P99_MS.name, 1),
            num(columns::RECOVERY_TIME_S.name, 1),
            if g(columns::METASTABLE.name) == Cell::Bool(true) {
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
        "wrote {}/{{summary.csv, timeseries.csv, herd.csv, attempts_by_ordinal.csv, columns.csv, manifest.toml}}",
        folder.out.display()
    );
}

/// `run --json`: the folder's summary.csv as JSON on stdout (the values of the file,
/// typed); stdout holds nothing else.
fn print_run_json(folder: &RunFolder) -> Result<()> {
    let file = folder.dir.join("summary.csv");
    let cap = crate::export::read::MAX_TABLE_BYTES;
    let text = crate::export::read::read_to_string(&file, cap)
        .map_err(|e| Error::io("cannot read back the summary", &file, e))?;
    let json = crate::export::json::table(&text).map_err(|e| {
        Error::Internal(format!("summary '{}' does not parse as CSV: {e}", file.display()).into())
    })?;
    print!("{json}");
    Ok(())
}

fn plot(dir: &Path, format: Format, quiet: bool) -> Result<i32> {
    let files = crate::draw_folder(dir, format.into())?;
    if !quiet {
        println!("wrote {} files in {}", files.len(), dir.display());
    }
    Ok(exit::OK)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Validates each file; the exit code is the first bad one's.
fn validate(paths: &[PathBuf], quiet: bool) -> i32 {
    let mut code = exit::OK;
    for p in paths {
        // What run, sweep and check refuse before running: the scenario, its [sweep]
        // grid (every cell validated) and its [[expect]] rows.
        let checked = crate::load_scenario(Some(p), &Overrides::default()).and_then(|l| {
            let plan = crate::sweep::plan::plan(l.clone())?;
            crate::check::expect::resolve(&plan)?;
            Ok(l)
        });
        match checked {
            Ok(_) if quiet => {}
            Ok(l) => println!(
                "ok: {} ('{}': {} fleet{}, {} outage{})",
                p.display(),
                l.scenario.name,
                l.scenario.fleets.len(),
                plural(l.scenario.fleets.len()),
                l.scenario.outages.len(),
                plural(l.scenario.outages.len()),
            ),
            Err(e) => {
                let c = super::report(&e.into());
                if code == exit::OK {
                    code = c;
                }
            }
        }
    }
    code
}

fn explain(args: ExplainArgs) -> Result<i32> {
    let overrides = Overrides {
        sets: args.set,
        seed: None,
    };
    let e = crate::explain_scenario(&args.scenario, &overrides, &args.deny)?;
    if let Some(code) = super::import::warn(&e.loaded, false, args.deny_unmodelled) {
        return Ok(code);
    }
    print!("{}", e.explanation.render());
    if !e.loaded.imports.is_empty() {
        println!("\nimported:");
        for i in &e.loaded.imports {
            for l in i.provenance() {
                println!("  {l}");
            }
        }
    }
    for l in &e.denied {
        eprintln!(
            "error: scenario '{}': denied lint fired: {l}",
            e.loaded.source.path
        );
    }
    Ok(if e.denied.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    })
}
