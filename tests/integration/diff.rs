//! `retrysim diff A B`: identical folders differ by exactly 0, the paired difference of
//! a retry policy change equals the mean of the per-run differences read from the two
//! summary.csv files, `--fail-on` gates exit 1 with a FAIL line, folders that do not
//! pair and unknown metrics exit 2, and a sweep gets one block per cell.

use std::path::Path;
use std::process::Output;

use crate::common::{ok, retrysim};

/// One fleet, one layer, a 1 s outage that fails every attempt: retries amplify.
const STORM: &str = r#"
name = "storm"
duration = "5s"
drain = "5s"
replications = 3
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

const ONE_ATTEMPT: &str = "fleets.0.layers.0.max_attempts=1";

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("storm.toml"), STORM).unwrap();
    std::fs::write(
        d.path().join("grid.toml"),
        format!("{STORM}\n[sweep]\n\"dependency.servers\" = [3, 8]\n"),
    )
    .unwrap();
    d
}

fn run(dir: &Path, out: &str, sets: &[&str]) {
    let mut args = vec!["run", "storm.toml", "--no-plots", "-q", "--out", out];
    for s in sets {
        args.extend(["--set", s]);
    }
    ok(dir, &args);
}

fn diff(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    let o: Output = retrysim(dir, &all);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The table rows of the output: `[metric, n, mean A, mean B, B - A, low, high, change]`
/// per cell block.
fn blocks(stdout: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut out: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for line in stdout.lines() {
        if let Some(label) = line.strip_prefix("cell ") {
            out.push((label.to_string(), Vec::new()));
        } else if line.starts_with("metric ") || line.trim().is_empty() {
            continue;
        } else if let Some((_, rows)) = out.last_mut() {
            if line.starts_with("skipped") || line.starts_with("FAIL") {
                continue;
            }
            let f: Vec<String> = line
                .split_whitespace()
                .map(|t| {
                    t.trim_matches(|c| c == '[' || c == ']' || c == ',')
                        .to_string()
                })
                .collect();
            assert_eq!(f.len(), 8, "{line}");
            rows.push(f);
        }
    }
    out
}

/// The column `name` of a summary.csv, per row.
fn column(file: &Path, name: &str) -> Vec<f64> {
    let mut r = csv::Reader::from_path(file).unwrap();
    let i = r.headers().unwrap().iter().position(|h| h == name).unwrap();
    r.records()
        .map(|rec| rec.unwrap()[i].parse::<f64>().unwrap())
        .collect()
}

#[test]
fn the_same_scenario_twice_differs_by_exactly_zero() {
    let d = setup();
    let p = d.path();
    run(p, "a", &[]);
    run(p, "b", &[]);
    let (code, out, err) = diff(p, &["a", "b"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("'storm' (a) vs B = 'storm' (b)"), "{out}");
    assert!(out.contains("seeds: the same in every pair"), "{out}");
    let b = blocks(&out);
    assert_eq!(b.len(), 1, "{out}");
    assert!(b[0].0.starts_with("all runs (3 pairs)"), "{out}");
    assert!(b[0].1.len() > 20, "{out}");
    for row in &b[0].1 {
        assert_eq!(row[1], "3", "{row:?}");
        assert_eq!(row[2], row[3], "{row:?}");
        assert_eq!(&row[4..7], ["0", "0", "0"], "{row:?}");
    }
    let metrics: Vec<&str> = b[0].1.iter().map(|r| r[0].as_str()).collect();
    assert!(metrics.contains(&"amplification") && metrics.contains(&"success_fraction"));
    assert!(!metrics.contains(&"seed") && !metrics.contains(&"run"));
}

#[test]
fn more_attempts_on_a_failing_dependency_raise_amplification_by_the_paired_mean() {
    let d = setup();
    let p = d.path();
    run(p, "one", &[ONE_ATTEMPT]);
    run(p, "three", &[]);
    let a = column(&p.join("one/summary.csv"), "amplification");
    let b = column(&p.join("three/summary.csv"), "amplification");
    let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    assert!(mean > 0.1, "{diffs:?}");
    let sd = (diffs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let half = 4.303 * sd / 3f64.sqrt();

    let (code, out, err) = diff(p, &["one", "three", "--metric", "amplification"]);
    assert_eq!(code, 0, "{err}");
    let b = blocks(&out);
    assert_eq!(b[0].1.len(), 1, "only the metric asked for: {out}");
    let row = &b[0].1[0];
    assert_eq!(row[0], "amplification");
    let num = |s: &str| s.parse::<f64>().unwrap();
    assert!((num(&row[4]) - mean).abs() < 1e-8, "{row:?} vs {mean}");
    assert!((num(&row[5]) - (mean - half)).abs() < 1e-8, "{row:?}");
    assert!((num(&row[6]) - (mean + half)).abs() < 1e-8, "{row:?}");
    let mean_a = a.iter().sum::<f64>() / 3.0;
    assert!((num(&row[2]) - mean_a).abs() < 1e-8, "{row:?}");
    assert!(row[7].starts_with('+') && row[7].ends_with('%'), "{row:?}");

    let (code, out, _) = diff(p, &["one", "three", "--fail-on", "amplification:+0.1"]);
    assert_eq!(code, 1, "{out}");
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 1, "{out}");
    assert!(
        fails[0].starts_with("FAIL amplification: B - A = +"),
        "{out}"
    );
    assert!(fails[0].contains("crosses +0.1"), "{out}");
    // The same change seen from the other side, and a bound it stays within.
    let (code, out, _) = diff(
        p,
        &["three", "one", "--fail-on", "amplification:+0.1", "-q"],
    );
    assert_eq!((code, out.as_str()), (0, ""));
    let (code, out, _) = diff(p, &["three", "one", "--fail-on", "amplification:-1%"]);
    assert_eq!(code, 1, "{out}");
    // A gate on a metric --metric leaves out of the table still gates.
    let args = [
        "one",
        "three",
        "--metric",
        "logical",
        "--fail-on",
        "amplification:+0.1",
    ];
    assert_eq!(diff(p, &args).0, 1);
}

#[test]
fn folders_that_do_not_pair_and_unknown_metrics_exit_2() {
    let d = setup();
    let p = d.path();
    run(p, "a", &[]);
    run(p, "two", &["replications=2"]);
    let (code, _, err) = diff(p, &["a", "two"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("'a' has 3 runs, 'two' has 2"), "{err}");

    let (code, _, err) = diff(p, &["a", "a", "--metric", "amplificaton"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--metric 'amplificaton'"), "{err}");
    assert!(err.contains("known: logical, succeeded"), "{err}");
    let (code, _, err) = diff(p, &["a", "a", "--fail-on", "nope:+1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--fail-on 'nope'"), "{err}");
    let (code, _, err) = diff(p, &["a", "a", "--fail-on", "amplification:0.1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs its sign"), "{err}");
    let (code, _, err) = diff(p, &["a", "missing"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing"), "{err}");
}

#[test]
fn a_sweep_gets_one_block_per_cell() {
    let d = setup();
    let p = d.path();
    let sweep = |out: &str, sets: &[&str]| {
        let mut args = vec!["sweep", "grid.toml", "--no-plots", "-q", "--out", out];
        for s in sets {
            args.extend(["--set", s]);
        }
        ok(p, &args);
    };
    sweep("ga", &[ONE_ATTEMPT]);
    sweep("gb", &[]);
    let (code, out, err) = diff(p, &["ga", "gb", "--metric", "amplification"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 cells, 6 paired runs"), "{out}");
    let b = blocks(&out);
    assert_eq!(b.len(), 2, "{out}");
    assert!(
        b[0].0.starts_with("dependency.servers=3 (3 pairs)"),
        "{out}"
    );
    assert!(
        b[1].0.starts_with("dependency.servers=8 (3 pairs)"),
        "{out}"
    );
    let a = column(&p.join("ga/summary.csv"), "amplification");
    let bb = column(&p.join("gb/summary.csv"), "amplification");
    for (cell, (_, rows)) in b.iter().enumerate() {
        let r = cell * 3..cell * 3 + 3;
        let mean = r.map(|i| bb[i] - a[i]).sum::<f64>() / 3.0;
        let got: f64 = rows[0][4].parse().unwrap();
        assert!((got - mean).abs() < 1e-8, "cell {cell}: {got} vs {mean}");
    }
    // A sweep against a single run does not pair.
    run(p, "single", &[]);
    let (code, _, err) = diff(p, &["ga", "single"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("swept columns"), "{err}");
}

/// Copies result folder `from` to `to` (its manifest and summary), the summary's data
/// rows (split into fields) changed by `edit`.
fn edited(dir: &Path, from: &str, to: &str, edit: impl Fn(&[String], &mut Vec<Vec<String>>)) {
    let (src, dst) = (dir.join(from), dir.join(to));
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(src.join("manifest.toml"), dst.join("manifest.toml")).unwrap();
    let text = std::fs::read_to_string(src.join("summary.csv")).unwrap();
    assert!(!text.contains('"'), "a summary of plain fields");
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect());
    let header: Vec<String> = lines.next().unwrap();
    let mut rows: Vec<Vec<String>> = lines.collect();
    edit(&header, &mut rows);
    let mut out = header.join(",") + "\n";
    for r in rows {
        out.push_str(&(r.join(",") + "\n"));
    }
    std::fs::write(dst.join("summary.csv"), out).unwrap();
}

/// Sets column `name` of data row `row` (from 0).
fn set(header: &[String], rows: &mut [Vec<String>], row: usize, name: &str, value: &str) {
    let i = header.iter().position(|h| h == name).unwrap();
    rows[row][i] = value.to_string();
}

#[test]
fn nan_and_infinities_are_bad_input_not_values_that_pass_every_gate() {
    let d = setup();
    let p = d.path();
    run(p, "a", &[]);
    for bad in ["NaN", "inf", "-inf", "infinity"] {
        edited(p, "a", "b", |h, rows| set(h, rows, 1, "amplification", bad));
        for (x, y, file) in [("a", "b", "b"), ("b", "a", "b")] {
            let (code, out, err) = diff(p, &[x, y, "--fail-on", "amplification:+0.1"]);
            assert_eq!(code, 2, "{bad} in {file}: {out}{err}");
            assert!(
                err.contains(&format!(
                    "'{file}/summary.csv': row 2, column 'amplification': '{bad}' is not a finite number"
                )),
                "{bad}: {err}"
            );
        }
    }
}

#[test]
fn rows_pair_by_run_index_not_by_position() {
    let d = setup();
    let p = d.path();
    run(p, "a", &[]);
    // The same runs in another order: each still meets itself.
    edited(p, "a", "reversed", |_, rows| rows.reverse());
    let (code, out, err) = diff(p, &["a", "reversed"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("seeds: the same in every pair"), "{out}");
    let b = blocks(&out);
    for row in &b[0].1 {
        assert_eq!(&row[4..7], ["0", "0", "0"], "{row:?}");
    }
    // Another run in place of run 2, or run 0 twice: they do not pair.
    edited(p, "a", "renumbered", |h, rows| set(h, rows, 2, "run", "7"));
    let (code, _, err) = diff(p, &["a", "renumbered"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the folders do not pair: run 2 is in 'a' but not in 'renumbered'"),
        "{err}"
    );
    edited(p, "a", "twice", |h, rows| set(h, rows, 2, "run", "0"));
    let (code, _, err) = diff(p, &["twice", "a"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'twice/summary.csv': rows 1 and 3 are both run 0"),
        "{err}"
    );
}
