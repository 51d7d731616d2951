//! The command line's arguments (MODEL.md §8): clap structs and the parsers of the
//! values clap cannot check alone.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Image format of the plots, as `--format` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// PNG bitmaps.
    Png,
    /// SVG vector images.
    Svg,
}

impl From<Format> for crate::plot::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Png => crate::plot::Format::Png,
            Format::Svg => crate::plot::Format::Svg,
        }
    }
}

/// What `check --format` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CheckFormat {
    /// The aligned table, then the failures.
    Text,
    /// One JSON document: every row with its bound and value as numbers.
    Json,
    /// JUnit XML: one test case per row, for CI test reports.
    Junit,
}

/// A deterministic discrete-event simulator of retry storms.
#[derive(Debug, Parser)]
#[command(name = "retrysim", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Colours in help, errors, the progress bar and PASS/FAIL: `auto` on a terminal
    /// unless `NO_COLOR` is set, `always`, `never`.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: super::color::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one scenario (the embedded default when none is given) and write CSV files,
    /// a manifest and plots.
    #[command(
        after_help = "Examples:\n  retrysim run\n  retrysim run scenarios/thundering_herd.toml --set replications=8 -j 2"
    )]
    Run(RunArgs),
    /// Run a scenario's `[sweep]` grid times its replications in parallel; resumable,
    /// and shardable over machines.
    #[command(
        after_help = "Examples:\n  retrysim sweep scenarios/capacity_planning.toml -j 2\n  retrysim sweep scenarios/capacity_planning.toml --dry-run"
    )]
    Sweep(SweepArgs),
    /// Join shard folders into the same files an unsharded sweep writes.
    #[command(
        after_help = "Examples:\n  retrysim merge output/capacity_planning-shard-0-of-2 output/capacity_planning-shard-1-of-2 --out output/capacity_planning"
    )]
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
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Parse and validate scenario files without running them: each scenario, every
    /// cell of its [sweep] grid and its [[expect]] rows.
    #[command(after_help = "Examples:\n  retrysim validate scenarios/*.toml")]
    Validate {
        /// Scenario files.
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Print only the files that do not validate (and why).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the column dictionary as CSV (file, column, unit, kind, description): every
    /// column of every results file. With a scenario, those of the folder it writes
    /// (its columns.csv: a sweep's with a [sweep]), its layers', fleets' and swept keys'
    /// columns by name; without, their templates.
    #[command(
        after_help = "Examples:\n  retrysim columns --markdown\n  retrysim columns scenarios/capacity_planning.toml"
    )]
    Columns {
        /// Scenario file whose columns to list.
        scenario: Option<PathBuf>,
        /// Override a scenario key (repeatable), as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE", requires = "scenario")]
        set: Vec<String>,
        /// Print Markdown tables, one per file, instead of CSV.
        #[arg(long)]
        markdown: bool,
        /// Accepted for uniformity; the dictionary is the only output, so it changes
        /// nothing.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the resolved model (capacity, offered load, worst-case attempts, budgets,
    /// backoff against deadlines) and lint it for retry anti-patterns.
    #[command(
        after_help = "Examples:\n  retrysim explain scenarios/default.toml\n  retrysim explain scenarios/amplification.toml --deny all"
    )]
    Explain(ExplainArgs),
    /// Print the lints `explain` checks for, as CSV (id, why, fires_when): each one's
    /// id for --deny, why it matters and exactly when it fires.
    #[command(after_help = "Examples:\n  retrysim lints\n  retrysim lints --markdown")]
    Lints {
        /// Print a Markdown table instead of CSV.
        #[arg(long)]
        markdown: bool,
        /// Accepted for uniformity; the table is the only output, so it changes nothing.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Redraw the plots and report.html of a run or sweep folder from its CSV files.
    #[command(after_help = "Examples:\n  retrysim plot output/default --format svg")]
    Plot {
        /// The result folder (holds manifest.toml, summary.csv, timeseries.csv...).
        dir: PathBuf,
        /// Image format of the plots.
        #[arg(long, value_enum, default_value = "png")]
        format: Format,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run scenarios in memory and check their `[[expect]]` bounds (and drift against a
    /// baseline): exit 0 if all pass, 1 if any fails, 2 on bad input.
    #[command(
        after_help = "Examples:\n  retrysim check scenarios/*.toml -j 2\n  retrysim check scenarios/default.toml --baseline baseline.csv --format junit"
    )]
    Check(CheckArgs),
    /// Find the smallest (or, with --largest, the largest) value of one scenario key
    /// for which every `[[expect]]` holds, by bisection: exit 0 found, 1 no value in
    /// the range satisfies them, 2 bad input.
    #[command(
        after_help = "Examples:\n  retrysim search scenarios/recorded_day.toml --key dependency.servers --range 1..40"
    )]
    Search(super::search::SearchArgs),
    /// Compare two result folders metric by metric: paired runs, the mean difference
    /// B − A with its 95% interval; exit 1 when a `--fail-on` bound is crossed.
    Diff(super::diff::DiffArgs),
    /// Print the layer a configuration file maps to (`import = { format, file, ... }`
    /// in a retry layer) as TOML, each key commented with the line it came from.
    #[command(
        after_help = "Examples:
  retrysim import service_config.json --format grpc_service_config --service helloworld.Greeter --method SayHello",
        after_long_help = super::import::formats_help()
    )]
    Import(super::import::ImportArgs),
    /// Print the presets (`preset = "NAME"` in a retry layer): every one and what it
    /// is, the keys one expands to as TOML, or with --markdown the book's presets page.
    #[command(after_help = "Examples:
  retrysim presets
  retrysim presets grpc
  retrysim presets budget.envoy_retry_budget
  retrysim presets --markdown")]
    Presets {
        /// A preset: a layer preset's name (`grpc`), or `PART.NAME` for a preset of one
        /// part only (`budget.envoy_retry_budget`).
        #[arg(value_name = "NAME")]
        name: Option<String>,
        /// Print the presets page of the book as Markdown: every preset, the keys it
        /// sets, its source.
        #[arg(long, conflicts_with = "name")]
        markdown: bool,
        /// Accepted for uniformity; the presets are the only output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the scenario file's reference: every key of every table with its type,
    /// allowed values, default and doc, from the parser's own schema; as Markdown (the
    /// book's scenario-key page) or, with --json, as JSON Schema.
    #[command(after_help = "Examples:
  retrysim reference --markdown
  retrysim reference --json > scenario.schema.json")]
    Reference {
        /// Print the book's scenario-key page as Markdown (the default).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
        /// Print the JSON Schema (draft 2020-12) of a scenario file instead, for editors
        /// that complete and check TOML against a schema.
        #[arg(long)]
        json: bool,
        /// Accepted for uniformity; the reference is the only output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print a shell completion script on stdout (bash, zsh, fish, powershell, elvish).
    #[command(after_help = "Examples:
  retrysim completions bash > ~/.local/share/bash-completion/completions/retrysim
  retrysim completions zsh > ~/.zfunc/_retrysim
  retrysim completions fish > ~/.config/fish/completions/retrysim.fish
  retrysim completions powershell >> $PROFILE")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        /// Accepted for uniformity; the script is the only output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the manual page (roff) on stdout, or with --out write retrysim.1 and a
    /// retrysim-<subcommand>.1 page per subcommand into a folder, or with --markdown
    /// print the command-line reference as Markdown.
    #[command(after_help = "Examples:
  retrysim man | man -l -
  retrysim man --out /usr/local/share/man/man1
  retrysim man --markdown > cli.md")]
    Man {
        /// Folder for retrysim.1 and the subcommands' pages (created if missing).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print the reference of every command as Markdown (the book's command-line
        /// page) instead of roff.
        #[arg(long, conflicts_with = "out")]
        markdown: bool,
        /// Print nothing but errors (the page itself is still printed without --out).
        #[arg(long, short)]
        quiet: bool,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Scenario file (TOML). Without one, the embedded default scenario runs.
    pub scenario: Option<PathBuf>,
    /// Output folder [default: output/<scenario name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Do not draw plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Image format of the plots.
    #[arg(long, value_enum, default_value = "png")]
    pub format: Format,
    /// Replace an output folder that holds results of another scenario.
    #[arg(long)]
    pub force: bool,
    /// Print the summary of the run(s) as JSON on stdout (an array, one object per
    /// summary.csv row) instead of the table; notes go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Worker threads for the replications [default: all cores]; the files written
    /// are the same whatever the number.
    #[arg(long, short, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Print nothing but errors (and the `--json` summary).
    #[arg(long, short)]
    pub quiet: bool,
    /// Trace every call and attempt of N logical requests drawn uniformly over the
    /// run (replication 0) into traces.csv and trace.json; the same as
    /// `--set trace.sample=N`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_trace)]
    pub trace: Option<u64>,
    /// Refuse (exit 2) a scenario whose imported configuration files set anything
    /// retrysim cannot model, instead of warning.
    #[arg(long)]
    pub deny_unmodelled: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// Scenario file (TOML) with a `[sweep]` table.
    pub scenario: PathBuf,
    /// Worker threads [default: all cores].
    #[arg(long, short, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Run only the runs with `run % N == I`, into their own folder.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub shard: Option<crate::sweep::Shard>,
    /// Output folder [default: output/<name>/, or output/<name>-shard-I-of-N/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Override a scenario key: `--set duration=30s`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Do not draw plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Image format of the plots.
    #[arg(long, value_enum, default_value = "png")]
    pub format: Format,
    /// Replace an output folder that holds other results.
    #[arg(long)]
    pub force: bool,
    /// Print the plan (swept keys and values, cells, replications, runs, logical
    /// requests, output folder) and exit without running or writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Refuse (exit 2) a scenario whose imported configuration files set anything
    /// retrysim cannot model, instead of warning.
    #[arg(long)]
    pub deny_unmodelled: bool,
}

/// Reads `--seed`: a whole number the manifests and CSVs can hold as a signed 64-bit
/// integer.
pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
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
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    let max = crate::sweep::MAX_JOBS;
    match s.trim().parse::<i128>() {
        Ok(n) if (1..=max as i128).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number of worker threads from 1 to {max} (found '{}')",
            crate::scenario::error::shown(s)
        )),
    }
}

/// Reads `--trace`: 1 to [`crate::model::config::MAX_TRACE_SAMPLE`] logical
/// requests.
pub(crate) fn parse_trace(s: &str) -> Result<u64, String> {
    let max = crate::model::config::MAX_TRACE_SAMPLE;
    match s.trim().parse::<i128>() {
        Ok(n) if (1..=i128::from(max)).contains(&n) => Ok(n as u64),
        _ => Err(format!(
            "must be a whole number of logical requests from 1 to {max} (found '{}')",
            crate::scenario::error::shown(s)
        )),
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Make a lint an error (exit 1) when it fires; repeatable; `all` denies every lint
    /// (`retrysim lints` lists them).
    #[arg(long = "deny", value_name = "LINT")]
    pub deny: Vec<String>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Accepted for uniformity; the explanation is the only output, so it changes
    /// nothing (denied lints are errors, printed on stderr).
    #[arg(long, short)]
    pub quiet: bool,
    /// Refuse (exit 2) a scenario whose imported configuration files set anything
    /// retrysim cannot model, instead of warning.
    #[arg(long)]
    pub deny_unmodelled: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Compare the summary with this baseline CSV (one scenario only).
    #[arg(long, value_name = "FILE.csv")]
    pub baseline: Option<PathBuf>,
    /// Largest relative drift from the baseline per metric: `5%` or `0.05`; the
    /// scenario's `[check.tolerance]` overrides it per metric.
    #[arg(long, value_name = "TOL", default_value = "5%", allow_hyphen_values = true, value_parser = crate::check::baseline::parse_tolerance)]
    pub tolerance: f64,
    /// Write (or refresh) the `--baseline` file from this run instead of comparing.
    #[arg(long)]
    pub write_baseline: bool,
    /// Let --write-baseline replace a file that is not a baseline.
    #[arg(long, requires = "write_baseline")]
    pub force: bool,
    /// What stdout gets: the table (`text`), one JSON document (`json`) or JUnit XML
    /// (`junit`); with json and junit, plan lines and failures go to stderr.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub format: CheckFormat,
    /// Worker threads [default: all cores].
    #[arg(long, short, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Base seed, overriding the scenarios' `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Override a scenario key: `--set fleets.0.layers.0.max_attempts=5`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print nothing but failures and errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Refuse (exit 2) a scenario whose imported configuration files set anything
    /// retrysim cannot model, instead of warning.
    #[arg(long)]
    pub deny_unmodelled: bool,
}
