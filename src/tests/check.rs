//! `retrysim check`: expectations per cell and per run, bad input named by its field,
//! baselines written, matched within tolerance and failed beyond it.

use std::process::Output;

use crate::tests::common::retrysim;

use crate::scenario::{load, Source};

/// One fleet, one layer of `max_attempts = 3`, a 1 s outage that fails every attempt.
const STORM: &str = r#"
name = "storm"
duration = "5s"
drain = "5s"
replications = 2
[dependency]
servers = 4
queue_limit = 50
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 200 }
[[fleets.layers]]
max_attempts = 3
attempt_timeout = "100ms"
backoff = { kind = "exponential", base = "10ms", cap = "1s", jitter = "full" }
[[outages]]
start = "1s"
end = "2s"
mode = { kind = "fail" }
"#;

/// `STORM` over `max_attempts` 1 and 3.
fn storm_sweep() -> String {
    format!("{STORM}\n[sweep]\n\"fleets.0.layers.0.max_attempts\" = [1, 3]\n")
}

/// No queueing and no faults: the latency is the service time, and only the latency
/// columns move when the service time does.
const CALM: &str = r#"
name = "calm"
duration = "3s"
drain = "1s"
[dependency]
servers = "unlimited"
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
max_attempts = 2
[sweep]
"fleets.0.arrival.rate" = [100, 200]
"#;

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary folder holding `files` (name, text).
fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

fn expect(metric: &str, bound: &str, extra: &str) -> String {
    format!("\n[[expect]]\nmetric = \"{metric}\"\n{bound}\n{extra}\n")
}

fn fail_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("FAIL ")).collect()
}

#[test]
fn a_passing_expectation_exits_0_and_a_failing_one_exits_1_naming_the_failing_line() {
    let pass = format!("{STORM}{}", expect("amplification", "max = 5", ""));
    let fail = format!("{pass}{}", expect("success_fraction", "min = 0.99", ""));
    let d = folder(&[("pass.toml", &pass), ("fail.toml", &fail)]);
    let o = retrysim(d.path(), &["check", "pass.toml"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("scenario"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("pass.toml"))
        .expect("a row for the expectation");
    assert!(
        row.contains("amplification") && row.contains("<= 5"),
        "{row}"
    );
    assert!(
        row.contains("(mean of 2)") && row.ends_with("pass"),
        "{row}"
    );
    assert!(fail_lines(&out).is_empty(), "{out}");

    let o = retrysim(d.path(), &["check", "fail.toml"]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let fails = fail_lines(&out);
    assert_eq!(fails.len(), 1, "{out}");
    assert!(
        fails[0].starts_with("FAIL fail.toml - success_fraction: ")
            && fails[0].ends_with(" (mean of 2) not >= 0.99"),
        "{}",
        fails[0]
    );
    assert!(out.contains("check: 1 passed, 1 failed"), "{out}");

    // Both files at once: the failure decides.
    let o = retrysim(d.path(), &["check", "pass.toml", "fail.toml", "-q"]);
    assert_eq!(code(&o), 1);
    assert_eq!(fail_lines(&stdout(&o)).len(), 1);
    assert_eq!(stdout(&o).lines().count(), 1, "-q prints only the failures");
}

#[test]
fn where_selects_grid_cells_and_each_cell_is_checked_on_its_own() {
    // No retries, no amplification: only the max_attempts = 1 cell stays at 1.
    let text = format!(
        "{}{}{}",
        storm_sweep(),
        expect(
            "amplification",
            "max = 1",
            "where = { \"fleets.0.layers.0.max_attempts\" = 1 }"
        ),
        expect("attempts_layer_0", "max = 1", "")
    );
    let d = folder(&[("s.toml", &text)]);
    let o = retrysim(d.path(), &["check", "s.toml"]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("s.toml")).collect();
    assert_eq!(
        rows.len(),
        3,
        "one row for the selected cell, two for all: {out}"
    );
    assert!(rows[0].contains("max_attempts=1") && rows[0].ends_with("pass"));
    let fails = fail_lines(&out);
    assert_eq!(fails.len(), 1, "{out}");
    assert!(
        fails[0].starts_with("FAIL s.toml max_attempts=3 attempts_layer_0: "),
        "{}",
        fails[0]
    );

    // The column name selects the same cells.
    let text = format!(
        "{}{}",
        storm_sweep(),
        expect(
            "amplification",
            "max = 1",
            "where = { \"param_fleets.0.layers.0.max_attempts\" = 1 }"
        )
    );
    let d = folder(&[("s.toml", &text)]);
    let o = retrysim(d.path(), &["check", "s.toml"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn per_run_checks_every_run_where_the_cell_mean_would_pass() {
    // The two replications' amplification, from the library.
    let src = Source {
        path: "s.toml".into(),
        stem: "s".into(),
        text: STORM.into(),
    };
    let plan = crate::sweep::plan(load(src, &[]).unwrap()).unwrap();
    let results = crate::sweep::run_in_memory(&plan).unwrap();
    let amp: Vec<f64> = results
        .iter()
        .map(|r| r.summary.get("amplification").unwrap().as_f64().unwrap())
        .collect();
    assert_eq!(amp.len(), 2);
    assert_ne!(amp[0], amp[1], "the replications must differ for this test");
    let mean = (amp[0] + amp[1]) / 2.0;
    let hi = amp[0].max(amp[1]);
    let bound = format!("max = {:?}", mean + (hi - mean) / 2.0);

    let cell = format!("{STORM}{}", expect("amplification", &bound, ""));
    let run = format!(
        "{STORM}{}",
        expect("amplification", &bound, "per = \"run\"")
    );
    let d = folder(&[("cell.toml", &cell), ("run.toml", &run)]);
    let o = retrysim(d.path(), &["check", "cell.toml"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let o = retrysim(d.path(), &["check", "run.toml"]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("run.toml")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(
        rows[0].contains("run 0") && rows[1].contains("run 1"),
        "{out}"
    );
    let fails = fail_lines(&out);
    assert_eq!(fails.len(), 1, "{out}");
    let which = if amp[0] > amp[1] { "run 0" } else { "run 1" };
    assert!(
        fails[0].starts_with(&format!("FAIL run.toml {which} amplification: ")),
        "{}",
        fails[0]
    );
}

#[test]
fn bad_expectations_and_tolerances_are_bad_input_naming_the_field_before_anything_runs() {
    let sweep = storm_sweep();
    for (name, text, field) in [
        (
            "metric",
            format!("{sweep}{}", expect("latency_p95_ms", "max = 1", "")),
            "expect[0].metric: no summary column 'latency_p95_ms' (known: logical, ",
        ),
        (
            "param",
            format!(
                "{sweep}{}",
                expect("param_fleets.0.layers.0.max_attempts", "max = 1", "")
            ),
            "expect[0].metric: 'param_fleets.0.layers.0.max_attempts' is a swept parameter",
        ),
        (
            "where-key",
            format!(
                "{sweep}{}{}",
                expect("amplification", "max = 9", ""),
                expect("amplification", "max = 1", "where = { rate = 100 }")
            ),
            "expect[1].where.rate: 'rate' is not a swept key (swept: fleets.0.layers.0.max_attempts)",
        ),
        (
            "where-value",
            format!(
                "{sweep}{}",
                expect(
                    "amplification",
                    "max = 1",
                    "where = { \"fleets.0.layers.0.max_attempts\" = 2 }"
                )
            ),
            "expect[0].where.fleets.0.layers.0.max_attempts: no cell has fleets.0.layers.0.max_attempts = 2 (swept values: 1, 3)",
        ),
        (
            "min-max",
            format!("{sweep}{}", expect("amplification", "min = 2\nmax = 1", "")),
            "expect[0].min: must be at most max (found min 2 > max 1)",
        ),
        (
            "per",
            format!("{sweep}{}", expect("amplification", "max = 1", "per = \"all\"")),
            "expect[0].per: unknown variant `all`, expected `cell` or `run`",
        ),
        (
            "tolerance",
            format!("{sweep}\n[check.tolerance]\nlatency_p99_ms = \"lots\"\n"),
            "check.tolerance.latency_p99_ms: expected a percentage such as 5% or a fraction such as 0.05 (found 'lots')",
        ),
        (
            "tolerance-key",
            format!("{sweep}\n[check.tolerance]\nlatency_p95_ms = \"5%\"\n"),
            "check.tolerance.latency_p95_ms: no summary column 'latency_p95_ms'",
        ),
    ] {
        let file = format!("{name}.toml");
        let d = folder(&[(&file, &text)]);
        let o = retrysim(d.path(), &["check", &file]);
        assert_eq!(code(&o), 2, "{name}: {}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("error: scenario '{file}': {field}")),
            "{name}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{name}: ran anyway: {}", stdout(&o));
    }
}

#[test]
fn bad_command_lines_are_bad_input() {
    let d = folder(&[("a.toml", CALM), ("b.toml", CALM)]);
    for (args, needle) in [
        (
            vec!["check", "a.toml", "--baseline", "x.csv", "--tolerance", "5"],
            "write 5% for a percentage",
        ),
        (
            vec![
                "check",
                "a.toml",
                "--baseline",
                "x.csv",
                "--tolerance",
                "much",
            ],
            "--tolerance",
        ),
        (
            vec!["check", "a.toml", "b.toml", "--baseline", "x.csv"],
            "--baseline holds the summary of one scenario: give exactly one (found 2)",
        ),
        (
            vec!["check", "a.toml", "--write-baseline"],
            "--write-baseline needs --baseline",
        ),
        (
            vec!["check", "a.toml", "--baseline", "x.csv"],
            "baseline 'x.csv' does not exist: create it with --write-baseline",
        ),
        (
            vec!["check", "missing.toml"],
            "cannot read scenario 'missing.toml'",
        ),
    ] {
        let o = retrysim(d.path(), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn a_scenario_without_expectations_passes_with_a_note_and_check_writes_no_files() {
    let d = folder(&[("calm.toml", CALM)]);
    let o = retrysim(d.path(), &["check", "calm.toml"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: scenario 'calm.toml' has no [[expect]]"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("check: nothing to check"));
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "check wrote files: {names:?}");
}

#[test]
fn the_output_does_not_depend_on_the_thread_count() {
    let text = format!(
        "{}{}{}",
        storm_sweep(),
        expect("amplification", "max = 1.5", ""),
        expect("recovery_time_s", "max = 2", "per = \"run\"")
    );
    let d = folder(&[("s.toml", &text)]);
    let a = retrysim(d.path(), &["check", "s.toml", "--jobs", "1"]);
    let b = retrysim(d.path(), &["check", "s.toml", "--jobs", "2"]);
    assert_eq!(code(&a), code(&b));
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn a_baseline_passes_within_tolerance_and_fails_on_drift_beyond_it_unless_the_scenario_allows_it() {
    // What a slower service moves: the latencies, and the attempts in the system
    // with them (Little's law).
    let latency = [
        "latency_mean_ms",
        "latency_p50_ms",
        "latency_p90_ms",
        "latency_p99_ms",
        "latency_p999_ms",
        "success_latency_mean_ms",
        "success_latency_p50_ms",
        "success_latency_p90_ms",
        "success_latency_p99_ms",
        "success_latency_p999_ms",
        "in_system_mean",
    ];
    let allow = |t: &str| {
        let mut s = format!("{CALM}\n[check.tolerance]\n");
        for m in latency {
            s.push_str(&format!("{m} = \"{t}\"\n"));
        }
        s
    };
    let (wide, narrow) = (allow("25%"), allow("10%"));
    let d = folder(&[
        ("calm.toml", CALM),
        ("wide.toml", &wide),
        ("narrow.toml", &narrow),
    ]);
    let p = d.path();

    let o = retrysim(
        p,
        &[
            "check",
            "calm.toml",
            "--baseline",
            "b.csv",
            "--write-baseline",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let csv = std::fs::read_to_string(p.join("b.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "a header and one row per cell: {csv}");
    assert!(
        lines[0].starts_with("cell,param_fleets.0.arrival.rate,logical,"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("0,100,"), "{}", lines[1]);
    assert!(lines[2].starts_with("1,200,"), "{}", lines[2]);

    // The same run is within any tolerance.
    let o = retrysim(
        p,
        &[
            "check",
            "calm.toml",
            "--baseline",
            "b.csv",
            "--tolerance",
            "0",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("within 0% of 10"), "{}", stdout(&o));

    // A service time 20% longer moves those columns, and only them, by 20%.
    let slower = ["--set", "dependency.service_time=12ms"];
    let args = |file: &'static str, tol: &'static str| {
        let mut a = vec!["check", file, "--baseline", "b.csv", "--tolerance", tol];
        a.extend(slower);
        a
    };
    let o = retrysim(p, &args("calm.toml", "5%"));
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let fails = fail_lines(&out);
    assert_eq!(fails.len(), 2 * latency.len(), "{out}");
    for f in &fails {
        assert!(
            latency.iter().any(|m| f.contains(&format!(" {m}: "))),
            "{f}"
        );
    }
    assert!(
        out.contains("FAIL calm.toml rate=100 latency_mean_ms: 12 (+20.00%) not within 5% of 10"),
        "{out}"
    );
    // Within a 25% global tolerance it passes.
    let o = retrysim(p, &args("calm.toml", "25%"));
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    // So it does when the scenario allows the latency columns 25%, not when it allows 10%.
    let o = retrysim(p, &args("wide.toml", "5%"));
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("within 25% of 10"), "{}", stdout(&o));
    let o = retrysim(p, &args("narrow.toml", "5%"));
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(fail_lines(&stdout(&o)).len(), 2 * latency.len());

    // Refreshing the baseline makes the slower service the reference.
    let mut refresh = vec![
        "check",
        "calm.toml",
        "--baseline",
        "b.csv",
        "--write-baseline",
    ];
    refresh.extend(slower);
    assert_eq!(code(&retrysim(p, &refresh)), 0);
    let o = retrysim(p, &args("calm.toml", "0%"));
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_baseline_of_another_grid_is_bad_input_naming_the_file() {
    let three = CALM.replace("[100, 200]", "[100, 200, 300]");
    let other = CALM.replace("[100, 200]", "[100, 300]");
    let flat = CALM
        .replace("[sweep]", "")
        .replace("\"fleets.0.arrival.rate\" = [100, 200]", "");
    let d = folder(&[
        ("calm.toml", CALM),
        ("three.toml", &three),
        ("other.toml", &other),
        ("flat.toml", &flat),
    ]);
    let p = d.path();
    let o = retrysim(
        p,
        &[
            "check",
            "calm.toml",
            "--baseline",
            "b.csv",
            "--write-baseline",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for (file, needle) in [
        (
            "three.toml",
            "the file has 2 cells but scenario 'three.toml' has 3",
        ),
        (
            "other.toml",
            "cell 1 is (200) in the file but (300) in scenario 'other.toml'",
        ),
        (
            "flat.toml",
            "the file's cells sweep fleets.0.arrival.rate but scenario 'flat.toml' has no [sweep]",
        ),
    ] {
        let o = retrysim(p, &["check", file, "--baseline", "b.csv"]);
        assert_eq!(code(&o), 2, "{file}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("error: baseline 'b.csv': "), "{file}: {err}");
        assert!(err.contains(needle), "{file}: {err}");
        assert!(err.contains("--write-baseline"), "{file}: {err}");
        assert!(stdout(&o).is_empty(), "{file}: ran anyway");
    }
    // A file that is not a baseline at all.
    std::fs::write(p.join("junk.csv"), "run,x\n0,1\n").unwrap();
    let o = retrysim(p, &["check", "calm.toml", "--baseline", "junk.csv"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("baseline 'junk.csv': not a retrysim baseline"));
}

#[test]
fn a_run_stopped_at_a_limit_is_bad_input_and_writes_no_baseline() {
    let text = format!("{STORM}{}", expect("amplification", "max = 5", ""));
    let d = folder(&[("s.toml", &text)]);
    let args = [
        "check",
        "s.toml",
        "--set",
        "limits.max_events=1000",
        "--baseline",
        "b.csv",
        "--write-baseline",
    ];
    let o = retrysim(d.path(), &args);
    assert_eq!(code(&o), 2, "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: scenario 's.toml': 2 of 2 runs stopped early at a limit")
            && err.contains("run 0: limits.max_events = 1000")
            && err.contains("baseline 'b.csv' was not written"),
        "{err}"
    );
    assert!(!d.path().join("b.csv").exists());
}

#[test]
fn write_baseline_replaces_only_an_absent_file_or_a_baseline_unless_forced() {
    let other = "run,x\n0,1\n";
    let d = folder(&[("calm.toml", CALM), ("other.csv", other)]);
    let p = d.path();
    let write = |file: &str, force: bool| {
        let mut a = vec!["check", "calm.toml", "--baseline", file, "--write-baseline"];
        if force {
            a.push("--force");
        }
        retrysim(p, &a)
    };
    // The scenario itself, or a CSV of something else: refused before anything runs,
    // the file untouched.
    for (file, text) in [("calm.toml", CALM), ("other.csv", other)] {
        let o = write(file, false);
        assert_eq!(code(&o), 2, "{file}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "error: --write-baseline would overwrite '{file}', which is not a retrysim baseline (not a retrysim baseline: its first column must be 'cell'"
            )) && err.contains("use --force to replace it"),
            "{file}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{file}: ran anyway: {}", stdout(&o));
        assert_eq!(std::fs::read_to_string(p.join(file)).unwrap(), text);
    }
    // An absent file is written; a baseline is refreshed.
    for _ in 0..2 {
        let o = write("b.csv", false);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(std::fs::read_to_string(p.join("b.csv"))
            .unwrap()
            .starts_with("cell,"));
    }
    // --force replaces the other file.
    let o = write("other.csv", true);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        std::fs::read(p.join("other.csv")).unwrap(),
        std::fs::read(p.join("b.csv")).unwrap()
    );
    // --force means nothing without --write-baseline.
    let o = retrysim(p, &["check", "calm.toml", "--force"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--write-baseline"), "{}", stderr(&o));
    // Nothing else was left behind (no temporary files).
    let mut names: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["b.csv", "calm.toml", "other.csv"]);
}
