//! Formula injection (issue 38): no cell of any CSV retrysim writes starts a formula a
//! spreadsheet would run, whatever names, labels and swept text the scenario holds.
//! Every CSV record goes through one writer (`crate::export::csv`), which guards
//! every field: a field that starts with `=`, `+`, `-`, `@`, a tab or a carriage
//! return and is not a number gets a leading `'`.

use std::path::{Path, PathBuf};

use crate::tests::common::{ok, retrysim};

/// A service graph whose every user text that can reach a CSV starts a formula:
/// service names (the `service` and `caller` columns), fleet names, layer names, swept
/// string values (a baseline's `param_` cells), labels given inline and in
/// `[sweep.labels]` (the summary's and the aggregate's `param_` cells). Names allow no
/// control characters, so no tab or carriage return reaches a CSV this way.
const SCENARIO: &str = r#"
name = "formula"
duration = "2s"
drain = "1s"
replications = 2

[[services]]
name = "-frontend"
servers = 4
service_time = "5ms"

[[services.calls]]
to = "-backend"
[[services.calls.layers]]
name = "@call(1)"
max_attempts = 2
attempt_timeout = "50ms"

[[services]]
name = "-backend"
servers = 2
service_time = "5ms"

[[fleets]]
name = "=1+2"
arrival = { kind = "poisson", rate = 200 }
[[fleets.layers]]
name = '=HYPERLINK("http://example.com","x")'
max_attempts = 3
attempt_timeout = "20ms"
[[fleets.layers]]
name = "+cmd|' /C calc'!A0"
max_attempts = 2

[[fleets]]
name = "@SUM(A1)"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
name = "-2+3"
max_attempts = 2

[[outages]]
start = "500ms"
end = "1s"
mode = { kind = "fail" }

[sweep]
"fleets.0.layers.0.name" = ["=a()", "@b()"]
"fleets.0.arrival.rate" = [{ label = "+fast", value = 200 }, 100]

[sweep.labels]
"fleets.0.layers.0.name" = ['=HYPERLINK("http://example.com")', "-1+1"]
"#;

/// Whether a spreadsheet would run `cell` as a formula: it starts with a trigger and is
/// not a number (`-0.5` reads as a number).
fn runs_as_formula(cell: &str) -> bool {
    cell.starts_with(['=', '+', '-', '@', '\t', '\r'])
        && !cell.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Every `.csv` file under `dir`.
fn csv_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "csv") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every cell of CSV `text` (header included), with where it is.
fn cells(name: &str, text: &str) -> Vec<(String, String)> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (line, rec) in r.records().enumerate() {
        let rec = rec.unwrap_or_else(|e| panic!("{name}: not CSV: {e}"));
        for (col, cell) in rec.iter().enumerate() {
            out.push((format!("{name}:{}:{}", line + 1, col + 1), cell.to_string()));
        }
    }
    out
}

/// Asserts no cell of CSV `text` runs as a formula; returns its cells.
fn guarded(name: &str, text: &str) -> Vec<String> {
    let all = cells(name, text);
    let bad: Vec<&(String, String)> = all.iter().filter(|(_, c)| runs_as_formula(c)).collect();
    assert!(bad.is_empty(), "cells a spreadsheet would run: {bad:?}");
    all.into_iter().map(|(_, c)| c).collect()
}

/// Asserts no cell of any CSV under `dir` runs as a formula; returns the cells by file
/// name (`runs/000000/summary.csv` relative to `dir`).
fn walk(dir: &Path) -> Vec<(String, Vec<String>)> {
    let files = csv_files(dir);
    assert!(!files.is_empty(), "no CSV in {dir:?}");
    files
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(p).unwrap();
            let cells = guarded(&format!("{}", p.display()), &text);
            (rel, cells)
        })
        .collect()
}

/// Whether file `name` among `files` holds the cell `cell`.
fn holds(files: &[(String, Vec<String>)], name: &str, cell: &str) -> bool {
    files
        .iter()
        .any(|(n, cells)| n == name && cells.iter().any(|c| c == cell))
}

#[test]
fn no_csv_of_run_sweep_merge_check_or_columns_holds_a_formula() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("f.toml"), SCENARIO).unwrap();

    // run, with traces (traces.csv, services.csv, aggregate.csv, columns.csv ...).
    ok(
        dir,
        &[
            "run",
            "f.toml",
            "--trace",
            "5",
            "--out",
            "run",
            "--no-plots",
            "-q",
        ],
    );
    let run = walk(&dir.join("run"));
    let names: Vec<&str> = run.iter().map(|(n, _)| n.as_str()).collect();
    for f in [
        "summary.csv",
        "timeseries.csv",
        "herd.csv",
        "attempts_by_ordinal.csv",
        "columns.csv",
        "aggregate.csv",
        "aggregate_long.csv",
        "services.csv",
        "traces.csv",
    ] {
        assert!(names.contains(&f), "run wrote no {f}: {names:?}");
    }
    // The names are there, shown and not run.
    for cell in [
        "'=1+2",
        "'@SUM(A1)",
        "'-frontend",
        "'-backend",
        "'=HYPERLINK(\"http://example.com\",\"x\")",
        "'+cmd|' /C calc'!A0",
        "'-2+3",
        "'@call(1)",
    ] {
        assert!(holds(&run, "traces.csv", cell), "traces.csv lacks {cell}");
    }
    assert!(holds(&run, "services.csv", "'-backend"));

    // sweep, with plots: every table, every run's folder.
    ok(dir, &["sweep", "f.toml", "--out", "sweep", "-q", "-j", "2"]);
    let sweep = walk(&dir.join("sweep"));
    for cell in ["'=HYPERLINK(\"http://example.com\")", "'-1+1", "'+fast"] {
        assert!(
            holds(&sweep, "summary.csv", cell),
            "summary.csv lacks {cell}"
        );
        assert!(
            holds(&sweep, "aggregate.csv", cell),
            "aggregate.csv lacks {cell}"
        );
    }

    // merge of two shards.
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("s{i}");
        ok(
            dir,
            &[
                "sweep",
                "f.toml",
                "--shard",
                &shard,
                "--out",
                &out,
                "--no-plots",
                "-q",
            ],
        );
        walk(&dir.join(&out));
    }
    ok(
        dir,
        &["merge", "s0", "s1", "--out", "merged", "--no-plots", "-q"],
    );
    walk(&dir.join("merged"));

    // check --write-baseline: the swept values themselves are its param_ cells ...
    std::fs::create_dir(dir.join("base")).unwrap();
    ok(
        dir,
        &[
            "check",
            "f.toml",
            "--baseline",
            "base/b.csv",
            "--write-baseline",
            "-q",
        ],
    );
    let base = walk(&dir.join("base"));
    assert!(holds(&base, "b.csv", "'=a()") && holds(&base, "b.csv", "'@b()"));
    // ... and the file written is still this grid's baseline.
    ok(dir, &["check", "f.toml", "--baseline", "base/b.csv", "-q"]);

    // columns prints the folder's dictionary as CSV.
    let out = retrysim(dir, &["columns", "f.toml"]);
    assert!(out.status.success());
    guarded("columns", &String::from_utf8(out.stdout).unwrap());
}

/// A baseline written before the guard (its `param_` cells raw) still matches its grid.
#[test]
fn a_baseline_with_raw_formula_text_from_before_the_guard_still_matches() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let one_axis = SCENARIO
        .split("\"fleets.0.arrival.rate\"")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(dir.join("f.toml"), one_axis).unwrap();
    ok(
        dir,
        &[
            "check",
            "f.toml",
            "--baseline",
            "b.csv",
            "--write-baseline",
            "-q",
        ],
    );
    let text = std::fs::read_to_string(dir.join("b.csv")).unwrap();
    let raw = text
        .replace(",'=a(),", ",=a(),")
        .replace(",'@b(),", ",@b(),");
    assert_ne!(raw, text);
    std::fs::write(dir.join("b.csv"), raw).unwrap();
    ok(dir, &["check", "f.toml", "--baseline", "b.csv", "-q"]);
}

/// The structure that makes the guard hold for a writer added later: no code outside
/// `src/export/csv.rs` builds a CSV writer or writes a record past it.
#[test]
fn every_csv_record_is_written_through_the_guarded_writer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let patterns = [
        "csv::Writer",
        "WriterBuilder",
        "write_record(",
        "write_field(",
    ];
    let mut offenders = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "export/csv.rs" || rel.starts_with("tests/") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for pat in patterns {
                if text.contains(pat) {
                    offenders.push(format!("{rel}: {pat}"));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "write CSV records through crate::export::csv (record, rows, Writer): {offenders:?}"
    );
}
