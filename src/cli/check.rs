//! `retrysim check`: every scenario validated, then each run and checked; prints the
//! table, the failures and what stopped early. With `--format json` or `junit`, stdout
//! holds the report alone: the plan lines, the baselines written and the failures go to
//! stderr.

use crate::check::{self, report, Request};
use crate::error::exit;
use crate::Overrides;
use anyhow::Result;

use super::args::{CheckArgs, CheckFormat};
use super::color::{self, Paint};

/// The table with its result column coloured (the words keep their width).
fn paint_table(table: &str) -> String {
    table
        .lines()
        .map(|l| {
            let t = l.trim_end();
            let painted = if let Some(head) = t.strip_suffix("FAIL") {
                format!("{head}{}", color::out("FAIL", Paint::Red))
            } else if let Some(head) = t.strip_suffix("pass") {
                format!("{head}{}", color::out("pass", Paint::Green))
            } else {
                t.to_owned()
            };
            painted + &l[t.len()..] + "\n"
        })
        .collect()
}

/// The failure lines with their leading FAIL coloured by `paint` (stdout's or stderr's).
fn paint_failures(text: &str, paint: fn(&str, Paint) -> String) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("FAIL") {
            Some(rest) => format!("{}{rest}\n", paint("FAIL", Paint::Red)),
            None => format!("{l}\n"),
        })
        .collect()
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Runs `check`: 0 all pass, 1 any failure, else the code of the first error.
pub(crate) fn check(args: CheckArgs) -> Result<i32> {
    let quiet = args.quiet;
    let format = args.format;
    // The human lines: stdout for the table, stderr when stdout holds a report.
    let say = |line: String| match format {
        CheckFormat::Text => println!("{line}"),
        CheckFormat::Json | CheckFormat::Junit => eprintln!("{line}"),
    };
    let req = Request {
        scenarios: args.scenarios,
        overrides: Overrides {
            sets: args.set,
            seed: args.seed,
        },
        baseline: args.baseline,
        tolerance: args.tolerance,
        write_baseline: args.write_baseline,
        force: args.force,
        jobs: args.jobs,
    };
    // Everything is validated before anything runs.
    let prepared = match check::prepare(&req) {
        Ok(p) => p,
        Err(errors) => return Ok(report_all(errors)),
    };
    // Import warnings, or with --deny-unmodelled errors, before anything runs.
    let mut denied = None;
    for p in &prepared {
        denied = denied.or(super::import::warn(
            &p.plan.base,
            quiet,
            args.deny_unmodelled,
        ));
    }
    if let Some(code) = denied {
        return Ok(code);
    }
    let checked = check::run_all(&req, &prepared, &mut |plan| {
        if !quiet {
            let (cells, reps) = (plan.cells.len() as u64, u64::from(plan.replications));
            say(format!(
                "retrysim {}: check '{}' ({}): {cells} cell{} × {reps} replication{} = {} run{}",
                env!("CARGO_PKG_VERSION"),
                plan.base.scenario.name,
                plan.base.source.path,
                plural(cells),
                plural(reps),
                plan.total_runs(),
                plural(plan.total_runs()),
            ));
        }
    })?;
    let mut stopped = Vec::new();
    for c in &checked {
        if let (Some((file, cells)), false) = (&c.wrote_baseline, quiet) {
            say(format!(
                "wrote baseline {} ({cells} cell{})",
                file.display(),
                plural(*cells as u64)
            ));
        }
        if c.nothing_to_check && !quiet {
            eprintln!(
                "note: scenario '{}' has no [[expect]] and no --baseline was given: nothing to check",
                c.path
            );
        }
        stopped.extend(c.truncation.clone().map(crate::Error::Stopped));
    }
    let rows: Vec<check::CheckRow> = checked.iter().flat_map(|c| c.rows.clone()).collect();
    let failed = rows.iter().filter(|r| !r.pass).count();
    match format {
        CheckFormat::Text => {
            if !quiet {
                if rows.is_empty() {
                    println!("check: nothing to check");
                } else {
                    print!("{}", paint_table(&check::render_table(&rows)));
                    let paint = if failed > 0 { Paint::Red } else { Paint::Green };
                    let line = format!("check: {} passed, {failed} failed", rows.len() - failed);
                    println!("{}", color::out(&line, paint));
                }
            }
            print!(
                "{}",
                paint_failures(&check::render_failures(&rows), color::out)
            );
        }
        CheckFormat::Json | CheckFormat::Junit => {
            let doc = if format == CheckFormat::Json {
                report::json(&checked)
            } else {
                report::junit(&checked)
            };
            print!("{doc}");
            eprint!(
                "{}",
                paint_failures(&check::render_failures(&rows), color::err)
            );
        }
    }
    Ok(if !stopped.is_empty() {
        report_all(stopped)
    } else if failed > 0 {
        exit::FAILED
    } else {
        exit::OK
    })
}

/// Prints every error; the exit code is the first one's.
fn report_all(errors: Vec<crate::Error>) -> i32 {
    let mut code = exit::OK;
    for e in errors {
        let c = super::report(&e.into());
        if code == exit::OK {
            code = c;
        }
    }
    code
}
