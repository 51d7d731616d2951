//! Golden outputs: what every shipped scenario writes, pinned in values a reviewer can
//! read, so that a change of structure (a refactor, a move of code) is proven not to
//! change a result, and a change that is meant to shows which numbers moved. A run
//! folder (`run`, with its charts for the default scenario) and, where the scenario has
//! a `[sweep]`, a sweep folder, both as the CLI writes them.
//!
//! One file per scenario, `tests/fixtures/golden/<scenario>.txt`, a section per output
//! file: its size and hash (any byte change fails), then
//! - `summary.csv`, and any CSV file of at most 16 rows: every value, a line per
//!   column (`column: row0 row1 ...`, a text with a space or an empty field quoted);
//! - the other CSV files: per column, the sum, minimum and maximum of a numeric column
//!   (as written), the values and their counts of a column of a few distinct texts,
//!   the count of empty fields, and a hash of the column;
//! - `manifest.toml`: its lines (as [`comparable`] reads them);
//! - charts and the report: the hash alone.
//!
//! When a change is *meant* to change results, regenerate the pins and say why in the
//! commit: `RETRYSIM_BLESS=1 cargo test --release --test integration golden::`, then
//! `git diff tests/fixtures/golden/` shows what moved. Under CI the bless variable is
//! refused ([`crate::common::bless`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::common::{bless, comparable, ok};

const GOLDEN: &str = "tests/fixtures/golden";
/// Tables up to this many rows are pinned value by value, as `summary.csv` always is.
const FULL_ROWS: usize = 16;

/// FNV-1a of the bytes: stable across machines and Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every file below `dir` (but a sweep's `runs/`), relative, with its comparable bytes.
fn files(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                if rel != "runs" {
                    stack.push(p);
                }
            } else {
                out.insert(format!("{prefix}/{rel}"), comparable(&p));
            }
        }
    }
}

/// A field as one word: numbers and plain words as written, anything else quoted.
fn word(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'));
    if plain {
        v.to_string()
    } else {
        format!("{v:?}")
    }
}

/// The columns of a CSV file: header names and each column's fields, in row order.
fn columns(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new().from_reader(bytes);
    let names: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let mut cols = vec![Vec::new(); names.len()];
    for rec in r.records() {
        let rec = rec.unwrap();
        for (c, f) in cols.iter_mut().zip(rec.iter()) {
            c.push(f.to_string());
        }
    }
    (names, cols)
}

/// One column's digest: numbers by their sum and extremes, a few distinct texts by
/// their counts, many by how many; the empty fields; the column's hash.
fn column_digest(values: &[String]) -> String {
    let full: Vec<&str> = values
        .iter()
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .collect();
    let mut s = String::new();
    let numbers: Option<Vec<f64>> = full.iter().map(|v| v.parse::<f64>().ok()).collect();
    match numbers {
        Some(xs) if !xs.is_empty() => {
            let (mut lo, mut hi) = (0, 0);
            for (i, x) in xs.iter().enumerate() {
                if *x < xs[lo] {
                    lo = i;
                }
                if *x > xs[hi] {
                    hi = i;
                }
            }
            let sum: f64 = xs.iter().sum();
            write!(s, "sum {sum} min {} max {}", full[lo], full[hi]).unwrap();
        }
        _ => {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for v in &full {
                *counts.entry(v).or_default() += 1;
            }
            if counts.len() <= 4 {
                let shown: Vec<String> = counts
                    .iter()
                    .map(|(v, n)| format!("{} x{n}", word(v)))
                    .collect();
                write!(s, "{}", shown.join(", ")).unwrap();
            } else {
                write!(s, "{} distinct texts", counts.len()).unwrap();
            }
        }
    }
    let empty = values.len() - full.len();
    if empty > 0 {
        write!(s, ", {empty} empty").unwrap();
    }
    write!(s, ", fnv {:016x}", fnv(values.join("\n").as_bytes())).unwrap();
    s
}

/// The readable pin of one output file (see the module's documentation).
fn section(rel: &str, bytes: &[u8], out: &mut String) {
    let name = rel.rsplit('/').next().unwrap();
    let head = format!("== {rel}: {} bytes, fnv {:016x}", bytes.len(), fnv(bytes));
    if name.ends_with(".csv") {
        let (names, cols) = columns(bytes);
        let rows = cols.first().map_or(0, Vec::len);
        writeln!(out, "{head}, {rows} rows, {} columns", names.len()).unwrap();
        for (n, c) in names.iter().zip(&cols) {
            if name == "summary.csv" || rows <= FULL_ROWS {
                let vals: Vec<String> = c.iter().map(|v| word(v)).collect();
                writeln!(out, "{n}: {}", vals.join(" ")).unwrap();
            } else {
                writeln!(out, "{n}: {}", column_digest(c)).unwrap();
            }
        }
    } else if name == "manifest.toml" {
        writeln!(out, "{head}").unwrap();
        for l in String::from_utf8_lossy(bytes).lines() {
            writeln!(out, "  {l}").unwrap();
        }
    } else {
        writeln!(out, "{head}").unwrap();
    }
}

/// A golden file's sections by file name: the header line and the lines under it.
fn sections(text: &str) -> BTreeMap<&str, (&str, Vec<&str>)> {
    let mut out: BTreeMap<&str, (&str, Vec<&str>)> = BTreeMap::new();
    let mut at: Option<&str> = None;
    for l in text.lines() {
        if let Some(h) = l.strip_prefix("== ") {
            let file = h.split(": ").next().unwrap_or(h);
            out.insert(file, (l, Vec::new()));
            at = Some(file);
        } else if let Some(f) = at {
            out.get_mut(f).unwrap().1.push(l);
        }
    }
    out
}

/// What a pin line is about: the column (`name: ...`) or the manifest key (`k = ...`).
fn key(line: &str) -> &str {
    let line = line.trim_start();
    let at = [line.find(": "), line.find(" = ")]
        .into_iter()
        .flatten()
        .min();
    at.map_or(line, |i| &line[..i])
}

/// What moved between two golden texts, by file: the lines of each that the other
/// lacks (at most `max` lines in all).
fn moved(want: &str, got: &str, max: usize) -> Vec<String> {
    let (w, g) = (sections(want), sections(got));
    let mut out = Vec::new();
    let files: std::collections::BTreeSet<&str> = w.keys().chain(g.keys()).copied().collect();
    for f in files {
        match (w.get(f), g.get(f)) {
            (Some(_), None) => out.push(format!("gone: {f}")),
            (None, Some(_)) => out.push(format!("new: {f}")),
            (Some((wh, wl)), Some((gh, gl))) if wh != gh || wl != gl => {
                out.push(format!("changed: {f}"));
                if wh != gh {
                    out.push(format!("  - {wh}"));
                    out.push(format!("  + {gh}"));
                }
                let gone: Vec<&str> = wl.iter().copied().filter(|l| !gl.contains(l)).collect();
                let mut new: Vec<&str> = gl.iter().copied().filter(|l| !wl.contains(l)).collect();
                // A line and its replacement side by side (same column or key).
                for l in gone {
                    out.push(format!("  - {l}"));
                    if let Some(i) = new.iter().position(|n| key(n) == key(l)) {
                        out.push(format!("  + {}", new.remove(i)));
                    }
                }
                out.extend(new.iter().map(|l| format!("  + {l}")));
            }
            _ => {}
        }
    }
    if out.len() > max {
        let more = out.len() - max;
        out.truncate(max);
        out.push(format!("... and {more} more lines"));
    }
    out
}

/// The golden text of one scenario: its run folder, then its sweep folder.
fn golden_text(root: &Path, tmp: &Path, file: &str) -> String {
    let stem = file.trim_end_matches(".toml");
    // Relative to the crate root, so the manifest's `source` is the same on every
    // checkout.
    let src = format!("scenarios/{file}");
    let mut got = BTreeMap::new();
    let run_out = tmp.join(format!("run-{stem}"));
    let mut args = vec!["run", &src, "-q", "--out", run_out.to_str().unwrap()];
    if stem != "default" {
        args.push("--no-plots");
    }
    ok(root, &args);
    files(&run_out, "run", &mut got);
    let text = std::fs::read_to_string(root.join(&src)).unwrap();
    if text.contains("\n[sweep]") {
        let sweep_out = tmp.join(format!("sweep-{stem}"));
        let out = sweep_out.to_str().unwrap();
        ok(root, &["sweep", &src, "-q", "--no-plots", "--out", out]);
        files(&sweep_out, "sweep", &mut got);
    }
    let mut s = format!(
        "# The outputs of {src}, pinned by tests/integration/golden.rs.\n# Re-bless: RETRYSIM_BLESS=1 cargo test --release --test integration golden::\n"
    );
    for (rel, bytes) in &got {
        section(rel, bytes, &mut s);
    }
    s
}

#[test]
fn every_shipped_scenario_writes_its_golden_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let blessing = bless();
    let d = tempfile::tempdir().unwrap();
    let mut scenarios: Vec<String> = std::fs::read_dir(root.join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    scenarios.sort();
    let dir = root.join(GOLDEN);
    let mut report = Vec::new();
    for f in &scenarios {
        let got = golden_text(root, d.path(), f);
        let pin = dir.join(f.replace(".toml", ".txt"));
        if blessing {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&pin, &got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&pin) {
            Ok(want) if want == got => {}
            Ok(want) => {
                report.push(format!("{GOLDEN}/{}:", f.replace(".toml", ".txt")));
                report.extend(moved(&want, &got, 60));
            }
            Err(e) => report.push(format!("{}: {e}", pin.display())),
        }
    }
    // A pin of a scenario that is no longer shipped.
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let scenario = name.replace(".txt", ".toml");
        if name.ends_with(".txt") && !scenarios.contains(&scenario) {
            if blessing {
                std::fs::remove_file(dir.join(&name)).unwrap();
            } else {
                report.push(format!("{GOLDEN}/{name}: no scenarios/{scenario}"));
            }
        }
    }
    assert!(
        report.is_empty(),
        "outputs differ from {GOLDEN}/ (if the change is meant to change results, bless it and say why):\n{}",
        report.join("\n")
    );
}

#[test]
fn a_golden_diff_names_the_file_and_the_values_that_moved() {
    let csv = "run,seed,goodput,phase\n0,1,10.5,ok\n1,2,11.25,ok\n";
    // A long table: the two rows, then 16 more of zeros.
    let long = format!("{csv}{}", "2,3,0,ok\n".repeat(FULL_ROWS));
    let mut a = String::new();
    section("run/summary.csv", csv.as_bytes(), &mut a);
    section("run/timeseries.csv", long.as_bytes(), &mut a);
    assert!(a.contains("\ngoodput: 10.5 11.25\n"), "{a}");
    assert!(
        a.contains("\ngoodput: sum 21.75 min 0 max 11.25, fnv "),
        "{a}"
    );
    assert!(a.contains("\nphase: ok x18, fnv "), "{a}");
    let moved_csv = csv.replace("11.25", "11.5");
    let mut b = String::new();
    section("run/summary.csv", moved_csv.as_bytes(), &mut b);
    section("run/timeseries.csv", long.as_bytes(), &mut b);
    let m = moved(&a, &b, 60);
    assert_eq!(m[0], "changed: run/summary.csv");
    let at = m
        .iter()
        .position(|l| l == "  - goodput: 10.5 11.25")
        .expect("the old line");
    assert_eq!(m[at + 1], "  + goodput: 10.5 11.5", "side by side: {m:?}");
    assert_eq!(
        m.len(),
        5,
        "the header's hash, the column; nothing else: {m:?}"
    );
    // An empty field and a text with a space are quoted; a byte change the values
    // do not show still changes the hash.
    let mut c = String::new();
    section("x/summary.csv", b"a,b\n,no budget\n".as_ref(), &mut c);
    assert!(c.contains("\na: \"\"\nb: \"no budget\"\n"), "{c}");
    let mut d = String::new();
    section("x/summary.csv", b"a,b\n,\"no budget\"\n".as_ref(), &mut d);
    assert_ne!(c.lines().next(), d.lines().next());
}

/// The pinning tests refuse `RETRYSIM_BLESS` under CI: run here as a child test with
/// both set, the book's column tables (the cheaper of the two) must fail with the
/// refusal rather than rewrite their pin.
#[test]
fn the_bless_variable_is_refused_under_ci() {
    let test = "columns::the_book_lists_every_column_with_its_unit";
    for ci in ["true", "1"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([test, "--exact", "--nocapture", "--test-threads", "1"])
            .env("RETRYSIM_BLESS", "1")
            .env("CI", ci)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "CI={ci}: {text}");
        assert!(text.contains("1 failed"), "the test ran: {text}");
        assert!(
            text.contains(&format!("RETRYSIM_BLESS is refused under CI (CI={ci})")),
            "{text}"
        );
    }
}
