//! Arrivals replayed exactly (`arrival = { kind = "trace", file = ... }`): one request
//! per row at the time it gives, to the nanosecond; clients and writes from their
//! columns; the same bytes for the same files and seed, with any number of threads;
//! the file streamed in bounded memory, recorded in the manifest, re-checked by each
//! run; bad traces refused with the file, the line and the column.

use std::io::Write;
use std::path::Path;

use crate::metrics::summary::Layout;
use crate::run::run_one;
use crate::scenario::{load_file, Loaded, Overrides};
use sha2::Digest;

use crate::tests::common::{capped, ok, retrysim};

/// A scenario whose one fleet replays `arrival` (a TOML inline table) for `duration`,
/// against a dependency that never saturates, with no retries.
fn scenario(arrival: &str, duration: &str) -> String {
    format!(
        r#"name = "replay"
seed = 7
duration = "{duration}"
drain = "1s"
bucket = "1s"

[dependency]
servers = "unlimited"
service_time = "1ms"

[[fleets]]
name = "web"
arrival = {arrival}

[[fleets.layers]]
max_attempts = 1
"#
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn loaded(dir: &Path) -> Loaded {
    let o = Overrides {
        sets: vec![],
        seed: None,
    };
    load_file(Some(&dir.join("s.toml")), &o).unwrap_or_else(|e| panic!("{e}"))
}

/// Seconds as traces.csv writes them (`1.25`, `0.000000001`) in nanoseconds, exactly.
fn ns(s: &str) -> u64 {
    let (w, f) = s.split_once('.').unwrap_or((s, ""));
    let f = format!("{f:0<9}");
    w.parse::<u64>().unwrap() * 1_000_000_000 + f.parse::<u64>().unwrap()
}

/// Each traced request's (send time in ns, client), in request order.
fn sends(dir: &Path) -> Vec<(u64, u64)> {
    let mut r = csv::Reader::from_path(dir.join("traces.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (kind, parent, send, client) = (col("kind"), col("parent"), col("send"), col("client"));
    r.records()
        .map(|x| x.unwrap())
        .filter(|x| &x[kind] == "call" && x[parent].is_empty())
        .map(|x| (ns(&x[send]), x[client].parse().unwrap()))
        .collect()
}

/// Rows of a trace: Unix seconds (some with nanoseconds, some RFC 3339), a client
/// column (numbers and names), one row past the 10 s run.
const TRACE: &str = "\
ts,who
1700000000.000000001,0
2023-11-14T22:13:20.000000002Z,1
1700000000.5,2
1700000001.25,7
1700000001.25,web-1
2023-11-14T23:13:29.999999999+01:00,4
1700000010.000000001,5
";

#[test]
fn a_trace_replays_its_timestamps_to_the_nanosecond() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.csv", TRACE);
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ kind = "trace", file = "a.csv", time = "ts", client = "who", clients = 3 }"#,
            "10s",
        ),
    );
    ok(
        d.path(),
        &[
            "run",
            "s.toml",
            "--no-plots",
            "-q",
            "--out",
            "o",
            "--trace",
            "100",
        ],
    );
    let got = sends(&d.path().join("o"));
    // Times from the first row; the row at 10.000000000 s is past the run's 10 s.
    let times: Vec<u64> = got.iter().map(|g| g.0).collect();
    assert_eq!(
        times,
        vec![
            0,
            1,
            499_999_999,
            1_249_999_999,
            1_249_999_999,
            9_999_999_998
        ]
    );
    // Clients: numbers modulo 3; a name hashed to one, the same each time.
    let clients: Vec<u64> = got.iter().map(|g| g.1).collect();
    assert_eq!(&clients[..4], &[0, 1, 2, 1]);
    assert_eq!(clients[5], 1);
    assert!(clients[4] < 3);
    // speed = 2 halves every gap (to the nearest nanosecond).
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ kind = "trace", file = "a.csv", time = "ts", speed = 2 }"#,
            "10s",
        ),
    );
    ok(
        d.path(),
        &[
            "run",
            "s.toml",
            "--no-plots",
            "-q",
            "--out",
            "f",
            "--trace",
            "100",
        ],
    );
    let times: Vec<u64> = sends(&d.path().join("f")).iter().map(|g| g.0).collect();
    assert_eq!(
        times,
        vec![
            0,
            1,
            250_000_000,
            625_000_000,
            625_000_000,
            4_999_999_999,
            5_000_000_000
        ]
    );
    // Without a client column the requests go to the clients in turn.
    let clients: Vec<u64> = sends(&d.path().join("f")).iter().map(|g| g.1).collect();
    assert_eq!(clients, vec![0; 7]);
}

#[test]
fn the_write_column_says_which_requests_are_writes() {
    // A timed-out write is not retried (it may have been applied); a read is: 100 ms
    // of service against a 10 ms timeout, three attempts for a read, one for a write.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "w.csv",
        "time,w\n0,1\n1,0\n2,true\n3,FALSE\n4,0\n",
    );
    let text = scenario(r#"{ kind = "trace", file = "w.csv", write = "w" }"#, "10s")
        .replace("service_time = \"1ms\"", "service_time = \"100ms\"")
        .replace(
            "max_attempts = 1",
            "max_attempts = 3\nattempt_timeout = \"10ms\"",
        );
    write(d.path(), "s.toml", &text);
    let l = loaded(d.path());
    let r = run_one(&l.scenario, &Layout::of(&l.scenario), 0, 0);
    assert_eq!(r.metrics.totals.logical, 5);
    assert_eq!(r.metrics.totals.attempts, 2 + 3 * 3);
    // `writes` beside the column is refused: the column says it.
    write(
        d.path(),
        "s.toml",
        &text.replace("name = \"web\"", "name = \"web\"\nwrites = 0.5"),
    );
    let out = retrysim(d.path(), &["validate", "s.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fleets[0].writes: cannot be written beside the trace's `write` column"),
        "{err}"
    );
}

#[test]
fn the_same_files_and_seed_give_the_same_bytes_with_one_thread_or_two() {
    let d = tempfile::tempdir().unwrap();
    let mut rows = String::from("t\n");
    for k in 0..3000u64 {
        // Uneven gaps: bursts of three at one instant, then a pause.
        rows.push_str(&format!("{}.{:03}\n", k / 300, (k / 3) % 100 * 10));
    }
    write(d.path(), "a.csv", &rows);
    let text = scenario(
        r#"{ kind = "trace", file = "a.csv", time = "t", clients = 4 }"#,
        "10s",
    )
    .replace("servers = \"unlimited\"", "servers = 2\nqueue_limit = 10")
        + "\n[sweep]\n\"fleets.0.arrival.speed\" = [1.0, 2.0, 4.0]\n";
    write(d.path(), "s.toml", &text);
    for (out, threads) in [("one", "1"), ("two", "2"), ("again", "2")] {
        ok(
            d.path(),
            &[
                "sweep",
                "s.toml",
                "--no-plots",
                "-q",
                "--out",
                out,
                "--jobs",
                threads,
            ],
        );
    }
    for file in ["summary.csv", "aggregate.csv"] {
        let a = std::fs::read(d.path().join("one").join(file)).unwrap();
        for other in ["two", "again"] {
            let b = std::fs::read(d.path().join(other).join(file)).unwrap();
            assert!(a == b, "{file} differs between one and {other}");
        }
    }
    // Each cell replayed the trace: speed 2 and 4 play all 3000 rows (10 s of trace in
    // 5 s and 2.5 s), speed 1 all of them too; their logical counts agree.
    let summary = std::fs::read_to_string(d.path().join("one/summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(summary.as_bytes());
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "logical")
        .unwrap();
    let logical: Vec<String> = r.records().map(|x| x.unwrap()[at].to_string()).collect();
    assert_eq!(logical, vec!["3000"; 3]);
}

#[test]
fn the_manifest_records_the_trace_and_explain_summarises_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.csv", TRACE);
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ kind = "trace", file = "a.csv", time = "ts" }"#, "5s"),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "o"],
    );
    let text = std::fs::read_to_string(d.path().join("o/manifest.toml")).unwrap();
    let m: toml::Table = toml::from_str(&text).unwrap();
    let inputs = m["inputs"].as_array().expect("[[inputs]]");
    assert_eq!(inputs.len(), 1);
    let rec = inputs[0].as_table().unwrap();
    let sha: String = sha2::Sha256::digest(TRACE.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(rec["key"].as_str(), Some("fleets[0].arrival.file"));
    assert_eq!(rec["file"].as_str(), Some("a.csv"));
    assert_eq!(rec["bytes"].as_integer(), Some(TRACE.len() as i64));
    assert_eq!(rec["sha256"].as_str(), Some(sha.as_str()));
    let out = retrysim(d.path(), &["explain", "s.toml"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // 7 rows over 10.000000000 s; the run's 5 s holds the first 5 exactly (the marks
    // are every row of a small trace).
    assert!(
        text.contains("fleet 'web': trace arrivals")
            && text.contains(
                "trace 'a.csv': 7 requests over 10s of the run, mean 0.7/s; the run's 5s replays about 5 of them"
            ),
        "{text}"
    );
}

#[test]
fn a_trace_changed_after_it_was_checked_stops_the_run_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let rows = "t\n0\n1\n2\n3\n";
    write(d.path(), "a.csv", rows);
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ kind = "trace", file = "a.csv", time = "t" }"#, "10s"),
    );
    let run = |l: &Loaded| {
        let r = run_one(&l.scenario, &Layout::of(&l.scenario), 0, 0);
        (r.metrics.totals.logical, r.metrics.totals.truncated)
    };
    let l = loaded(d.path());
    assert_eq!(run(&l), (4, None));
    // The same size, other bytes: read to its end, its SHA-256 differs.
    write(d.path(), "a.csv", "t\n0\n1\n2\n4\n");
    let (n, why) = run(&l);
    let why = why.expect("a changed trace stops the run");
    assert_eq!(n, 4);
    assert!(
        why.contains("fleet 'web': its trace file 'a.csv' (fleets[0].arrival.file) changed since it was checked"),
        "{why}"
    );
    // Another size: refused when the run opens it.
    write(d.path(), "a.csv", "t\n0\n1\n2\n3\n4\n");
    let (n, why) = run(&l);
    assert_eq!(n, 0);
    assert!(why.unwrap().contains("(10 bytes then, 12 now)"));
    // A run that stops reading early (rows past its end) checks size and time.
    let l = {
        write(d.path(), "a.csv", "t\n0\n1\n20\n30\n");
        loaded(d.path())
    };
    assert_eq!(run(&l), (2, None));
    write(d.path(), "a.csv", "t\n0\n1\n20\n31\n");
    let f = std::fs::File::options()
        .write(true)
        .open(d.path().join("a.csv"))
        .unwrap();
    f.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
    drop(f);
    let (n, why) = run(&l);
    assert_eq!(n, 2);
    assert!(why.unwrap().contains("changed since it was checked"));
}

/// Runs `run` on a scenario replaying `arrival` with `files`, expecting exit 2, each
/// of `expect` in the message, and no output folder.
fn refused(files: &[(&str, &str)], arrival: &str, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(d.path(), name, text);
    }
    write(d.path(), "s.toml", &scenario(arrival, "10s"));
    let out = retrysim(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "out"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for e in expect {
        assert!(err.contains(e), "expected {e:?} in: {err}");
    }
    assert!(
        !d.path().join("out").exists(),
        "a refused scenario wrote a folder"
    );
}

#[test]
fn bad_traces_are_refused_with_the_file_the_line_and_the_column() {
    let at = |extra: &str| format!(r#"{{ kind = "trace", file = "a.csv", time = "ts"{extra} }}"#);
    refused(
        &[("a.csv", "")],
        &at(""),
        &["error: scenario 's.toml': fleets[0].arrival.file: 'a.csv' is empty"],
    );
    refused(
        &[("a.csv", "ts\n")],
        &at(""),
        &["fleets[0].arrival.file: 'a.csv' holds no rows"],
    );
    refused(
        &[("a.csv", "t,who\n0,1\n")],
        &at(""),
        &["fleets[0].arrival.file: 'a.csv' has no column \"ts\" (`time`); its columns: \"t\", \"who\""],
    );
    refused(
        &[("a.csv", "ts\n0\n")],
        &at(r#", client = "who""#),
        &["'a.csv' has no column \"who\" (`client`)"],
    );
    refused(
        &[("a.csv", "ts\n5\n7\n6\n")],
        &at(""),
        &["fleets[0].arrival.file: 'a.csv' at line 4, column \"ts\": times must not go back (found 6 after 7)"],
    );
    refused(
        &[("a.csv", "ts\n5\nlater\n")],
        &at(""),
        &["'a.csv' at line 3, column \"ts\": must be seconds (a number) or an RFC 3339 time"],
    );
    refused(
        &[("a.csv", "ts\n-5\n")],
        &at(""),
        &["'a.csv' at line 2, column \"ts\": must be at least 0 (found -5)"],
    );
    refused(
        &[("a.csv", "ts,w\n5,1\n6,yes\n")],
        &at(r#", write = "w""#),
        &["'a.csv' at line 3, column \"w\": must be 1, 0, true or false (found \"yes\")"],
    );
    refused(
        &[("a.csv", "ts,who\n5,\n")],
        &at(r#", client = "who""#),
        &["'a.csv' at line 2, column \"who\": is empty"],
    );
    refused(
        &[],
        &at(""),
        &["fleets[0].arrival.file: cannot read '", "a.csv'"],
    );
    refused(
        &[("a.csv", &format!("ts\n1\n{}\n", "9".repeat(70_000)))],
        &at(""),
        &["'a.csv' at line 3: a row is longer than the 65536 bytes allowed"],
    );
    refused(
        &[("a.csv", "ts\n1\n")],
        &at(", speed = 0"),
        &["fleets[0].arrival.speed: must be above 0"],
    );
    // The other arrival kinds' keys are not a trace's.
    refused(
        &[("a.csv", "ts\n1\n")],
        &at(", rate = 10"),
        &["fleets[0].arrival", "rate"],
    );
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.csv", "ts\n1\n");
    write(
        d.path(),
        "s.toml",
        &(scenario(&at(""), "10s") + "").replace(
            "arrival = {",
            "load_profile = [{ at = \"0s\", multiplier = 2 }]\narrival = {",
        ),
    );
    let out = retrysim(d.path(), &["validate", "s.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fleets[0].load_profile: applies only to poisson and constant arrivals: a trace gives its own times"),
        "{err}"
    );
}

#[test]
fn a_trace_over_the_cap_is_refused_before_it_is_read() {
    let d = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(d.path().join("a.csv")).unwrap();
    // A sparse file: its length, not its bytes, is over the cap.
    f.set_len(crate::scenario::inputs::trace::MAX_TRACE_BYTES + 1)
        .unwrap();
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ kind = "trace", file = "a.csv" }"#, "10s"),
    );
    let out = retrysim(d.path(), &["validate", "s.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fleets[0].arrival.file: cannot read")
            && err.contains("(4 GiB) allowed for a trace"),
        "{err}"
    );
}

#[test]
fn a_trace_larger_than_memory_is_streamed() {
    // 120 MB of rows, one per millisecond over three and a half hours: above the 64 MiB cap of a
    // file read whole, and above the 64 MiB of address space the run is given. The
    // run replays the first second and stops reading.
    let d = tempfile::tempdir().unwrap();
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(d.path().join("a.csv")).unwrap());
        w.write_all(b"t\n").unwrap();
        for k in 0..13_000_000u64 {
            writeln!(w, "{}.{:03}", k / 1000, k % 1000).unwrap();
        }
    }
    let size = std::fs::metadata(d.path().join("a.csv")).unwrap().len();
    assert!(size > 100 << 20, "{size}");
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ kind = "trace", file = "a.csv", time = "t" }"#, "1s"),
    );
    let out = capped(
        d.path(),
        64,
        &["run", "s.toml", "--no-plots", "-q", "--out", "o"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = std::fs::read_to_string(d.path().join("o/summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(summary.as_bytes());
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "logical")
        .unwrap();
    let logical: Vec<String> = r.records().map(|x| x.unwrap()[at].to_string()).collect();
    assert_eq!(logical, vec!["1000"]);
}
