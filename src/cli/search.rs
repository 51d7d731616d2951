//! `retrysim search`: its arguments, and the answer printed with its evidence (the
//! check rows at the answer and one step past it).

use std::io::Write;
use std::path::PathBuf;

use crate::check;
use crate::error::exit;
use crate::search::{Domain, Probe, Request, Search};
use crate::Overrides;
use anyhow::Result;

use super::args::{parse_jobs, parse_seed};

#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// Scenario file (TOML) with at least one `[[expect]]`.
    pub scenario: PathBuf,
    /// The numeric scenario key searched, by its dotted path: `dependency.servers`.
    #[arg(long, value_name = "KEY")]
    pub key: String,
    /// The values searched, `LOW..HIGH`: whole numbers for an integer key (`1..200`),
    /// numbers for a float key (`0.5..2.0`, with --tolerance).
    #[arg(long, value_name = "LOW..HIGH", allow_hyphen_values = true)]
    pub range: String,
    /// A float key's precision: the search stops when the passing and the failing
    /// values are this close (required for float keys, refused for integer keys).
    #[arg(long, value_name = "WIDTH", allow_hyphen_values = true, value_parser = crate::search::parse_tolerance)]
    pub tolerance: Option<f64>,
    /// Find the largest value for which the expectations hold (e.g. the most load),
    /// instead of the smallest (e.g. the fewest servers).
    #[arg(long)]
    pub largest: bool,
    /// Worker threads for the replications [default: all cores].
    #[arg(long, short, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Base seed, overriding the scenario's `seed`.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Override a scenario key (not the searched one): `--set duration=30s`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print only the answer (or the line saying there is none).
    #[arg(long, short)]
    pub quiet: bool,
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn range(d: Domain) -> String {
    match d {
        Domain::Int { low, high } => format!("{low}..{high}"),
        Domain::Float {
            low,
            high,
            tolerance,
        } => format!(
            "{}..{} (to {})",
            crate::metrics::format::shortest(low),
            crate::metrics::format::shortest(high),
            crate::metrics::format::shortest(tolerance)
        ),
    }
}

/// The first failing row of a probe, as `metric value not bound`.
fn why(p: &Probe) -> String {
    p.rows.iter().find(|r| !r.pass).map_or(String::new(), |r| {
        format!(" ({} {} not {})", r.metric, r.value, r.bound)
    })
}

/// Runs `search`: 0 found, 1 no value in the range satisfies the expectations.
pub(crate) fn search(args: SearchArgs) -> Result<i32> {
    let quiet = args.quiet;
    let req = Request {
        scenario: args.scenario,
        overrides: Overrides {
            sets: args.set,
            seed: args.seed,
        },
        key: args.key,
        range: args.range,
        tolerance: args.tolerance,
        largest: args.largest,
        jobs: args.jobs,
    };
    let mut header = String::new();
    let short = std::cell::RefCell::new(String::new());
    let mut replications = 1u64;
    let outcome = crate::api::search_scenario(
        &req,
        &mut |s: &Search| {
            *short.borrow_mut() = s.short_key().to_string();
            replications = u64::from(s.replications);
            header = format!(
                "{} {} in {}",
                if s.largest { "largest" } else { "smallest" },
                s.key,
                range(s.domain)
            );
            if quiet {
                return;
            }
            if s.sweep_removed {
                eprintln!("note: the scenario has a [sweep]: search runs its base point (the [sweep] removed), as `run` does");
            }
            println!(
                "retrysim {}: search '{}' ({}): the {header} for which {} expectation{} hold{}, {} replication{} per value",
                env!("CARGO_PKG_VERSION"),
                s.base.scenario.name,
                s.base.source.path,
                s.expectations,
                plural(s.expectations as u64),
                if s.expectations == 1 { "s" } else { "" },
                s.replications,
                plural(u64::from(s.replications)),
            );
        },
        &mut |p: &Probe| {
            if !quiet {
                println!(
                    "  {}={}: {}{}",
                    short.borrow(),
                    p.point.render(),
                    if p.pass { "pass" } else { "FAIL" },
                    why(p)
                );
                // A long search shows each value as it is done.
                let _ = std::io::stdout().flush();
            }
        },
    )?;
    let tried = outcome.probes.len() as u64;
    let cost = format!(
        "{tried} value{} tried × {replications} replication{} = {} run{}",
        plural(tried),
        plural(replications),
        outcome.runs,
        plural(outcome.runs)
    );
    let evidence: Vec<check::CheckRow> = outcome
        .answer
        .iter()
        .chain(&outcome.neighbour)
        .flat_map(|p| p.rows.clone())
        .collect();
    match &outcome.answer {
        Some(answer) => {
            if quiet {
                println!("{}", answer.point.render());
                return Ok(exit::OK);
            }
            println!(
                "found: {} = {} ({cost})",
                req.key.trim(),
                answer.point.render()
            );
            print!("{}", check::render_table(&evidence));
            if outcome.neighbour.is_none() && outcome.probes.len() > 1 {
                let (end, way) = if req.largest {
                    ("high", "larger")
                } else {
                    ("low", "smaller")
                };
                println!("note: the {end} end of --range already satisfies every expectation: {way} values were not tried (widen --range to look further)");
            }
            Ok(exit::OK)
        }
        None => {
            let end = if req.largest { "low" } else { "high" };
            let at = outcome
                .neighbour
                .as_ref()
                .map_or(String::new(), |p| p.point.render());
            println!(
                "no value satisfies every expectation: the {header}: the {end} end {at} fails them, and bisection assumes that if any value holds, that end does ({cost})",
            );
            if !quiet {
                print!("{}", check::render_table(&evidence));
                print!("{}", check::render_failures(&evidence));
            }
            Ok(exit::FAILED)
        }
    }
}
