//! `retrysim diff A B`: two result folders compared metric by metric (paired runs, the
//! mean difference B − A and its 95% interval), one table block per cell, and the
//! `--fail-on` gates.

use std::path::PathBuf;

use crate::diff::{self, CellDiff, Diff, FailOn};
use crate::error::exit;
use crate::metrics::format::{shortest, signed_percent};
use anyhow::Result;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  retrysim run old.toml --out a && retrysim run new.toml --out b
  retrysim diff a b
  retrysim diff a b --metric amplification --metric success_fraction
  retrysim diff a b --fail-on success_fraction:-0.01 --fail-on latency_p99_ms:+10%

BOUND is a signed number bounding the mean of B − A: `-X` fails when it is below −X,
`+X` when it is above X; with `%`, X is a percentage of A's mean (`+10%`: B more than
10% above A). Exit 0: no bound crossed; 1: a bound crossed (a FAIL line each); 2: bad
input (folders that do not pair, an unknown metric, a malformed bound).")]
pub(crate) struct DiffArgs {
    /// The result folder before the change (written by `run` or `sweep`).
    pub a: PathBuf,
    /// The result folder after the change (the same plan: cells × replications).
    pub b: PathBuf,
    /// Compare only this summary metric (repeatable) [default: every numeric one].
    #[arg(long, value_name = "NAME")]
    pub metric: Vec<String>,
    /// Exit 1 when the mean of B − A crosses BOUND: `success_fraction:-0.01`,
    /// `latency_p99_ms:+10%` (repeatable).
    #[arg(long = "fail-on", value_name = "METRIC:BOUND", allow_hyphen_values = true,
          value_parser = diff::parse_fail_on)]
    pub fail_on: Vec<FailOn>,
    /// Print only the FAIL lines and errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `diff`: 0 no bound crossed, 1 a bound crossed.
pub(crate) fn diff(args: DiffArgs) -> Result<i32> {
    // Every metric is compared (a gate may name one --metric leaves out); --metric
    // chooses what is printed.
    let d = diff::compare(&args.a, &args.b, &[])?;
    let names = args.metric.iter().map(|m| ("--metric", m));
    for (flag, m) in names.chain(args.fail_on.iter().map(|f| ("--fail-on", &f.metric))) {
        if !d.known.contains(m) {
            return Err(diff::unknown_metric(flag, m, &d.known).into());
        }
    }
    let shown = |m: &String| args.metric.is_empty() || args.metric.contains(m);
    if !args.quiet {
        print_header(&d);
        for c in &d.cells {
            print!("{}", table(c, &shown));
        }
        let skipped: Vec<&str> = d
            .skipped
            .iter()
            .filter(|m| shown(m))
            .map(String::as_str)
            .collect();
        if !skipped.is_empty() {
            println!(
                "\nskipped (no pair has a value in both A and B): {}",
                skipped.join(", ")
            );
        }
    }
    let failures = gates(&d, &args.fail_on);
    for f in &failures {
        println!("{f}");
    }
    Ok(if failures.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    })
}

fn print_header(d: &Diff) {
    let n = d.pairs();
    println!(
        "retrysim {}: diff A = '{}' ({}) vs B = '{}' ({}): {} cell{}, {n} paired run{}",
        env!("CARGO_PKG_VERSION"),
        d.a.scenario,
        d.a.dir.display(),
        d.b.scenario,
        d.b.dir.display(),
        d.cells.len(),
        if d.cells.len() == 1 { "" } else { "s" },
        if n == 1 { "" } else { "s" },
    );
    if d.same_seeds == n {
        println!("seeds: the same in every pair (common random numbers: tight intervals)");
    } else {
        println!(
            "seeds: differ in {} of {n} pairs (independent runs: wider intervals)",
            n - d.same_seeds
        );
    }
}

/// One cell's block: its label line, then the aligned table.
fn table(c: &CellDiff, shown: &dyn Fn(&String) -> bool) -> String {
    let header = [
        "metric",
        "n",
        "mean A",
        "mean B",
        "B - A",
        "95% interval",
        "change",
    ];
    let lines: Vec<[String; 7]> = c
        .metrics
        .iter()
        .filter(|m| shown(&m.metric))
        .map(|m| {
            [
                m.metric.clone(),
                m.n.to_string(),
                shortest(m.mean_a),
                shortest(m.mean_b),
                signed(m.diff),
                format!("[{}, {}]", signed(m.low), signed(m.high)),
                m.relative.map_or("-".into(), signed_percent),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for l in &lines {
        for (w, f) in widths.iter_mut().zip(l) {
            *w = (*w).max(f.chars().count());
        }
    }
    let label = if c.label.is_empty() {
        "all runs"
    } else {
        &c.label
    };
    let mut out = format!(
        "\ncell {label} ({} pair{})\n",
        c.pairs,
        if c.pairs == 1 { "" } else { "s" }
    );
    let head = header.map(String::from);
    for l in std::iter::once(&head).chain(&lines) {
        let mut line = String::new();
        for (i, (f, w)) in l.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = w - f.chars().count();
            // Names left-aligned, numbers right-aligned.
            if i == 0 {
                line.push_str(f);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(f);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A difference with its sign.
fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", shortest(x))
    } else {
        shortest(x)
    }
}

/// One FAIL line per bound crossed, per cell.
fn gates(d: &Diff, fail_on: &[FailOn]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fail_on {
        for c in &d.cells {
            let cell = if c.label.is_empty() {
                String::new()
            } else {
                format!(" [{}]", c.label)
            };
            match c.metrics.iter().find(|m| m.metric == f.metric) {
                Some(m) if f.crossed(m) => out.push(format!(
                    "FAIL {}{cell}: B - A = {} (A {} → B {}) crosses {} (limit {})",
                    f.metric,
                    signed(m.diff),
                    shortest(m.mean_a),
                    shortest(m.mean_b),
                    f.text,
                    signed(f.limit(m.mean_a)),
                )),
                Some(_) => {}
                None => eprintln!(
                    "note: --fail-on {}:{}{cell}: no pair has a value in both A and B: not checked",
                    f.metric, f.text
                ),
            }
        }
    }
    out
}
