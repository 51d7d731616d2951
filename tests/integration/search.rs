//! `retrysim search`: the capacity answer found by bisection, checked against Erlang B
//! (the blocking of an M/M/c/c loss system), its --largest mirror, the exit-1 case and
//! bad input named by its flag.

use std::path::Path;
use std::process::Output;

use crate::common::retrysim;

/// Poisson arrivals on `servers` exponential servers of mean 10 ms with no queue: an
/// M/M/c/c loss system, whose blocking is Erlang B. 400 s × 4 replications (1.4 M
/// arrivals at 900/s): the per-run blocking at c = 16 has a standard deviation of about
/// 0.00045 over 200 s, so the mean of 4 runs of 400 s has a standard error near 0.00016.
fn loss_system(servers: u64, rate: &str, expect: &str) -> String {
    format!(
        r#"
name = "erlang"
duration = "400s"
drain = "1s"
replications = 4
[dependency]
servers = {servers}
queue_limit = 0
service_time = {{ kind = "exponential", mean = "10ms" }}
[[fleets]]
name = "q"
arrival = {{ kind = "poisson", rate = {rate} }}
{expect}
"#
    )
}

const BLOCKING: &str = "[[expect]]\nmetric = \"blocking_fraction\"\nmax = 0.01";

/// Erlang B: B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)).
fn erlang_b(c: u64, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (k as f64 + a * b))
}

fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn search(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    let out: Output = retrysim(dir, &all);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The value of the `found:` line.
fn answer(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("found: "))
        .unwrap_or_else(|| panic!("no answer in:\n{stdout}"));
    let v = line.split(" = ").nth(1).unwrap().split(' ').next().unwrap();
    v.parse().unwrap()
}

#[test]
fn the_fewest_servers_for_one_percent_blocking_is_erlang_b() {
    let a = 9.0; // 900 requests/s × 10 ms
    let c = (1..).find(|&c| erlang_b(c, a) < 0.01).unwrap();
    let (at, below) = (erlang_b(c, a), erlang_b(c - 1, a));
    // The margin: B(c) and B(c−1) are many standard errors (≈ 0.00016) from 1 %.
    println!(
        "Erlang B: B({c}, 9) = {at:.5}, B({}, 9) = {below:.5}",
        c - 1
    );
    assert_eq!(c, 17);
    assert!(at < 0.01 - 0.004 && below > 0.01 + 0.001);
    let d = dir_with(&[("erlang.toml", &loss_system(30, "900", BLOCKING))]);
    let args = [
        "erlang.toml",
        "--key",
        "dependency.servers",
        "--range",
        "1..200",
    ];
    let (code, out, err) = search(d.path(), &args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(answer(&out), c as f64, "{out}");
    // The ends first, then the midpoints; the evidence is the answer and one below.
    let tried: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  servers="))
        .collect();
    assert!(tried[0].starts_with("  servers=200: pass"), "{out}");
    assert!(
        tried[1].starts_with("  servers=1: FAIL (blocking_fraction "),
        "{out}"
    );
    assert!(out.contains(&format!(
        "found: dependency.servers = 17 ({} values tried × 4 replications = {} runs)",
        tried.len(),
        4 * tried.len()
    )));
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("found"))
        .collect();
    assert!(table[1].starts_with("scenario ") && table[1].contains("cell"));
    for (line, cell, result) in [
        (table[2], "servers=17", "pass"),
        (table[3], "servers=16", "FAIL"),
    ] {
        assert!(
            line.contains(cell)
                && line.contains("blocking_fraction  <= 0.01")
                && line.ends_with(result),
            "{line}"
        );
        let value: f64 = line
            .split("<= 0.01")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let theory = erlang_b(cell[8..].parse().unwrap(), a);
        assert!(
            (value - theory).abs() < 0.0008,
            "{cell}: {value} vs Erlang B {theory}"
        );
    }
    // Deterministic, whatever the threads; -q prints the answer alone; no files.
    let (_, again, _) = search(d.path(), &[&args[..], &["--jobs", "1"]].concat());
    assert_eq!(again, out);
    let (code, quiet, _) = search(d.path(), &[&args[..], &["-q"]].concat());
    assert_eq!((code, quiet.as_str()), (0, "17\n"));
    let files: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "search writes nothing");
}

#[test]
fn the_largest_rate_17_servers_carry_at_99_percent_success_is_erlang_b() {
    // Solve B(17, λ × 10 ms) = 0.01 for λ.
    let (mut lo, mut hi) = (500.0, 1500.0);
    for _ in 0..60 {
        let m = (lo + hi) / 2.0;
        if erlang_b(17, m / 100.0) <= 0.01 {
            lo = m;
        } else {
            hi = m;
        }
    }
    let theory = lo; // ≈ 965.2 requests/s
    let expect = "[[expect]]\nmetric = \"success_fraction\"\nmin = 0.99";
    let d = dir_with(&[("rate.toml", &loss_system(17, "900.0", expect))]);
    let (code, out, err) = search(
        d.path(),
        &[
            "rate.toml",
            "--key",
            "fleets.0.arrival.rate",
            "--range",
            "500..1500",
            "--tolerance",
            "2",
            "--largest",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let found = answer(&out);
    // dB/dλ ≈ 7.7e-5 per request/s there: a standard error of 0.00016 in the blocking
    // is about 2 requests/s; allow 5 of them and the tolerance.
    assert!(
        (found - theory).abs() < 12.0,
        "{found} vs Erlang B {theory:.2}\n{out}"
    );
    assert!(out.contains("the largest fleets.0.arrival.rate in 500..1500 (to 2)"));
    // The evidence: the answer passes, the value just above it (within 2) fails.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("rate.toml "))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].ends_with("pass") && rows[1].ends_with("FAIL"));
    let rate = |l: &str| -> f64 {
        l.split("rate=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let step = rate(rows[1]) - rate(rows[0]);
    assert!(step > 0.0 && step <= 2.0, "{step}");
}

#[test]
fn a_range_where_nothing_holds_exits_1_and_shows_the_failing_end() {
    let d = dir_with(&[("erlang.toml", &loss_system(30, "900", BLOCKING))]);
    let (code, out, _) = search(
        d.path(),
        &[
            "erlang.toml",
            "--key",
            "dependency.servers",
            "--range",
            "1..10",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no value satisfies every expectation: the smallest dependency.servers in 1..10: the high end 10 fails them"), "{out}");
    assert!(
        out.contains("(1 value tried × 4 replications = 4 runs)"),
        "{out}"
    );
    assert!(
        out.contains("FAIL erlang.toml servers=10 blocking_fraction: "),
        "{out}"
    );
    // The low end already holds: it is the answer, and nothing below was tried.
    let (code, out, _) = search(
        d.path(),
        &[
            "erlang.toml",
            "--key",
            "dependency.servers",
            "--range",
            "20..40",
        ],
    );
    assert_eq!((code, answer(&out)), (0, 20.0), "{out}");
    assert!(out.contains("note: the low end of --range already satisfies every expectation"));
}

#[test]
fn bad_input_names_the_flag_and_exits_2() {
    let small = |expect: &str, extra: &str| {
        format!(
            "duration = \"1s\"\nname = \"s\"\n[dependency]\nservers = 4\nqueue_limit = 0\nservice_time = \"10ms\"\n[[fleets]]\nname = \"q\"\narrival = {{ kind = \"poisson\", rate = 100.0 }}\n{expect}\n{extra}"
        )
    };
    let d = dir_with(&[
        ("s.toml", &small(BLOCKING, "")),
        ("none.toml", &small("", "")),
        (
            "swept.toml",
            &small(BLOCKING, "[sweep]\n\"dependency.servers\" = [1, 2]"),
        ),
        (
            "other.toml",
            &small(BLOCKING, "[sweep]\n\"fleets.0.arrival.rate\" = [1.0, 2.0]"),
        ),
    ]);
    let key = |k: &'static str, range: &'static str| vec!["s.toml", "--key", k, "--range", range];
    let servers = |r: &'static str| key("dependency.servers", r);
    let with = |mut v: Vec<&'static str>, more: &[&'static str]| {
        v.extend_from_slice(more);
        v
    };
    for (args, needle) in [
        (vec!["none.toml", "--key", "dependency.servers", "--range", "1..9"], "scenario 'none.toml' has no [[expect]]"),
        (servers("1-200"), "--range '1-200': expected LOW..HIGH"),
        (servers("9..3"), "--range '9..3': the low end must be at most the high end (found 9 > 3)"),
        (servers("0.5..2"), "'dependency.servers' is an integer key: both ends must be whole numbers (found '0.5')"),
        (servers("0..9"), "--range 0..9: the low end dependency.servers = 0: scenario 's.toml': dependency.servers"),
        (with(servers("1..9"), &["--tolerance", "0.1"]), "--tolerance: 'dependency.servers' is an integer key"),
        (key("fleets.0.arrival.rate", "1..9"), "--tolerance: 'fleets.0.arrival.rate' is a float key"),
        (key("dependency.server", "1..9"), "--key 'dependency.server': scenario 's.toml' has no such key (numeric keys of dependency: servers, queue_limit)"),
        (key("dependency.service_time", "1..9"), "--key 'dependency.service_time': scenario 's.toml' holds a string there (10ms), not a number"),
        (key("fleets.*.arrival.rate", "1..9"), "--key 'fleets.*.arrival.rate': name one scenario key"),
        (with(servers("1..9"), &["--set", "dependency.servers=3"]), "--set dependency.servers=3: sets the searched key 'dependency.servers' (--key)"),
        (with(servers("1..9"), &["--tolerance", "0"]), "--tolerance <WIDTH>': must be a positive number"),
        (vec!["swept.toml", "--key", "dependency.servers", "--range", "1..9"], "scenario 'swept.toml': [sweep] sweeps 'dependency.servers', which --key 'dependency.servers' searches"),
        (vec!["s.toml", "--range", "1..9"], "--key <KEY>"),
    ] {
        let (code, out, err) = search(d.path(), &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing runs: {out}");
    }
    // A [sweep] of another key is removed, as `run` does, with a note.
    let (code, out, err) = search(
        d.path(),
        &[
            "other.toml",
            "--key",
            "dependency.servers",
            "--range",
            "1..9",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("note: the scenario has a [sweep]: search runs its base point"),
        "{err}"
    );
}

#[test]
fn every_search_the_readme_and_the_book_show_on_a_shipped_scenario_finds_an_answer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut shown = Vec::new();
    for page in [
        "README.md",
        "docs/src/guide/tour.md",
        "docs/src/reference/cli.md",
    ] {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        for line in text.lines() {
            let line = line.trim();
            // A command on a shipped scenario (the guides' own files, erlang.toml and
            // the like, are written out beside them).
            if let Some(rest) = line.strip_prefix("retrysim search scenarios/") {
                let cmd = rest.split("  #").next().unwrap().trim();
                shown.push((page, format!("scenarios/{cmd}")));
            }
        }
    }
    assert!(shown.len() >= 3, "{shown:?}");
    for (page, cmd) in shown {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let (code, stdout, stderr) = search(root, &args);
        assert_eq!(code, 0, "{page}: retrysim search {cmd}: {stdout}{stderr}");
        assert!(stdout.contains("found: "), "{page}: {cmd}: {stdout}");
    }
}
