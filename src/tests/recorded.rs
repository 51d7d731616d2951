//! Load profiles recorded by a monitoring system (`load_profile = { file = ... }`): the
//! rate a CSV table or a Prometheus range query gives, replayed; the file's SHA-256 in
//! the manifest; bad recordings refused with the file, the line and the column.

use std::path::Path;

use crate::metrics::summary::Layout;
use crate::run::run_one;
use crate::scenario::{load_file, Loaded, Overrides};
use sha2::Digest;

use crate::tests::common::{ok, retrysim};

/// A scenario whose one fleet follows `profile` (a TOML inline table), with 10 s
/// buckets and no retries, against a dependency that never saturates.
fn scenario(profile: &str, arrival: &str) -> String {
    format!(
        r#"name = "recorded"
seed = 7
duration = "120s"
drain = "1s"
bucket = "10s"

[dependency]
servers = "unlimited"
service_time = "1ms"

[[fleets]]
name = "web"
arrival = {arrival}
load_profile = {profile}

[[fleets.layers]]
max_attempts = 1
"#
    )
}

fn poisson() -> &'static str {
    r#"{ kind = "poisson", clients = 10 }"#
}

/// Rates per 10 s row: a ramp up, a spike, a fall.
const RATES: [f64; 12] = [
    200.0, 300.0, 400.0, 500.0, 600.0, 1500.0, 600.0, 500.0, 400.0, 300.0, 200.0, 100.0,
];

fn day_csv() -> String {
    let mut s = String::from("ts,rps\n");
    for (i, r) in RATES.iter().enumerate() {
        s.push_str(&format!("{},{r}\n", 1_700_000_000 + 10 * i));
    }
    s
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn loaded(dir: &Path, sets: &[&str]) -> Loaded {
    let o = Overrides {
        sets: sets.iter().map(|s| s.to_string()).collect(),
        seed: None,
    };
    load_file(Some(&dir.join("s.toml")), &o).unwrap_or_else(|e| panic!("{e}"))
}

/// The fleet's offered logical requests per 10 s bucket.
fn offered(l: &Loaded) -> Vec<u64> {
    let layout = Layout::of(&l.scenario);
    let r = run_one(&l.scenario, &layout, 0, 0);
    r.metrics.buckets.iter().map(|b| b.offered).collect()
}

#[test]
fn a_poisson_fleet_follows_the_recorded_rate_within_its_poisson_error() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "day.csv", time = "ts", value = "rps" }"#,
            poisson(),
        ),
    );
    let counts = offered(&loaded(d.path(), &[]));
    assert!(counts.len() >= 12, "{counts:?}");
    for (i, want) in RATES.iter().enumerate() {
        let lambda = want * 10.0;
        let got = counts[i] as f64;
        // 4.5 standard deviations: a false alarm about once in 150,000 buckets.
        assert!(
            (got - lambda).abs() <= 4.5 * lambda.sqrt(),
            "bucket {i}: {got} requests, {lambda} expected"
        );
    }
}

#[test]
fn scale_and_speed_multiply_the_rate_and_compress_the_time() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "day.csv", time = "ts", value = "rps" }"#,
            poisson(),
        ),
    );
    // speed 2: the 120 s recording plays in 60 s, each row 5 s, at the rates recorded.
    let l = loaded(
        d.path(),
        &[
            "fleets.0.load_profile.scale=1.5",
            "fleets.0.load_profile.speed=2",
        ],
    );
    let counts = offered(&l);
    for (i, pair) in RATES.chunks(2).enumerate() {
        let lambda = 1.5 * 5.0 * (pair[0] + pair[1]);
        let got = counts[i] as f64;
        assert!(
            (got - lambda).abs() <= 4.5 * lambda.sqrt(),
            "bucket {i}: {got} requests, {lambda} expected"
        );
    }
    // Past the recording's end (60 s) the last rate holds.
    let tail = 1.5 * 10.0 * RATES[11];
    assert!(
        (counts[8] as f64 - tail).abs() <= 4.5 * tail.sqrt(),
        "{counts:?}"
    );
}

#[test]
fn counts_per_row_are_rates_over_the_row() {
    let d = tempfile::tempdir().unwrap();
    let mut counts_csv = String::from("time,value\n");
    for (i, r) in RATES.iter().enumerate() {
        counts_csv.push_str(&format!("{},{}\n", 10 * i, r * 10.0));
    }
    write(d.path(), "rates.csv", &day_csv());
    write(d.path(), "counts.csv", &counts_csv);
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "rates.csv", time = "ts", value = "rps" }"#,
            poisson(),
        ),
    );
    let by_rate = offered(&loaded(d.path(), &[]));
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ file = "counts.csv", values = "count" }"#, poisson()),
    );
    // The same rates, so the same arrivals, to the request.
    assert_eq!(offered(&loaded(d.path(), &[])), by_rate);
}

#[test]
fn linear_interpolation_ramps_between_points() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "ramp.csv", "time,value\n0,0\n120,2400\n");
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "ramp.csv", interpolate = "linear" }"#,
            r#"{ kind = "constant" }"#,
        ),
    );
    // Constant arrivals where the integrated rate 10·t² reaches each count: bucket k
    // holds 10·((10k+10)² − (10k)²) = 2000k + 1000 of them (±1 at the edges).
    let counts = offered(&loaded(d.path(), &[]));
    for (k, &c) in counts.iter().take(12).enumerate() {
        let want = 2000 * k as i64 + 1000;
        assert!(
            (c as i64 - want).abs() <= 1,
            "bucket {k}: {c}, {want} expected"
        );
    }
}

/// A Prometheus `query_range` answer holding `rows` of [`RATES`] (by index), for two
/// series of which `job="api"` is the one wanted.
fn prometheus(rows: std::ops::Range<usize>) -> String {
    let values = |f: f64| {
        rows.clone()
            .map(|i| format!("[{},\"{}\"]", 1_700_000_000 + 10 * i, RATES[i] * f))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        r#"{{"status":"success","data":{{"resultType":"matrix","result":[
{{"metric":{{"job":"batch"}},"values":[{}]}},
{{"metric":{{"job":"api","instance":"a:9090"}},"values":[{}]}}]}}}}"#,
        values(0.5),
        values(1.0)
    )
}

#[test]
fn a_prometheus_export_in_chunks_gives_the_bytes_the_csv_gives() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    // Two chunks sharing their boundary point, as consecutive range queries do.
    write(d.path(), "a.json", &prometheus(0..7));
    write(d.path(), "b.json", &prometheus(6..12));
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "day.csv", time = "ts", value = "rps" }"#,
            poisson(),
        ),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "csv"],
    );
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = ["a.json", "b.json"], format = "prometheus", series = { job = "api" } }"#,
            poisson(),
        ),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "prom"],
    );
    for f in ["timeseries.csv", "summary.csv", "herd.csv"] {
        let a = std::fs::read(d.path().join("csv").join(f)).unwrap();
        let b = std::fs::read(d.path().join("prom").join(f)).unwrap();
        assert!(a == b, "{f} differs");
    }
}

#[test]
fn the_manifest_records_each_file_with_its_sha256_and_a_changed_file_changes_the_fingerprint() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.json", &prometheus(0..7));
    write(d.path(), "b.json", &prometheus(6..12));
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = ["a.json", "b.json"], format = "prometheus", series = { job = "api" } }"#,
            poisson(),
        ),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "one"],
    );
    let manifest = |dir: &str| -> toml::Table {
        let text = std::fs::read_to_string(d.path().join(dir).join("manifest.toml")).unwrap();
        toml::from_str(&text).unwrap()
    };
    let m = manifest("one");
    let inputs = m["inputs"].as_array().expect("[[inputs]]");
    assert_eq!(inputs.len(), 2);
    for (i, name) in ["a.json", "b.json"].iter().enumerate() {
        let bytes = std::fs::read(d.path().join(name)).unwrap();
        let sha: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let rec = inputs[i].as_table().unwrap();
        assert_eq!(
            rec["key"].as_str(),
            Some(format!("fleets[0].load_profile.file[{i}]").as_str())
        );
        assert_eq!(rec["file"].as_str(), Some(*name));
        assert_eq!(rec["bytes"].as_integer(), Some(bytes.len() as i64));
        assert_eq!(rec["sha256"].as_str(), Some(sha.as_str()));
    }
    // The same scenario text over a changed recording: another fingerprint.
    write(d.path(), "b.json", &prometheus(6..11));
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "two"],
    );
    let fp = |m: &toml::Table| m["run"]["fingerprint"].as_str().unwrap().to_string();
    assert_ne!(fp(&m), fp(&manifest("two")));
    // A scenario reading no file writes no [[inputs]].
    write(
        d.path(),
        "s.toml",
        &scenario(
            "[{ at = \"0s\", multiplier = 1 }]",
            r#"{ kind = "poisson", rate = 10 }"#,
        ),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "three"],
    );
    assert!(!manifest("three").contains_key("inputs"));
}

#[test]
fn explain_summarises_the_recording() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ file = "day.csv", time = "ts", value = "rps", scale = 2 }"#,
            poisson(),
        ),
    );
    let out = retrysim(d.path(), &["explain", "s.toml"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The mean over the recording's span, first point to last (110 s): the first 11
    // rates, each held 10 s, sum to 5500 · 10, over 110 s, doubled.
    assert!(
        text.contains("recorded load profile: 12 points over 110s of the run (steps), mean 1000/s, peak 3000/s, the recording times 2"),
        "{text}"
    );
}

/// Runs `validate` on a scenario with `profile` and `arrival`, expecting exit 2 and
/// each of `expect` in the message, and no output folder.
fn refused(files: &[(&str, &str)], profile: &str, arrival: &str, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(d.path(), name, text);
    }
    write(d.path(), "s.toml", &scenario(profile, arrival));
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
fn bad_recordings_are_refused_with_the_file_the_line_and_the_column() {
    let p = poisson();
    refused(
        &[("d.csv", "t,v\n0,1\n60,2\n30,3\n")],
        r#"{ file = "d.csv", time = "t", value = "v" }"#,
        p,
        &["fleets[0].load_profile.file: 'd.csv' at line 4, column \"t\": times must increase strictly (found 30 after 60)"],
    );
    refused(
        &[("d.csv", "t,v\n0,1\n60,-2\n")],
        r#"{ file = "d.csv", time = "t", value = "v" }"#,
        p,
        &["'d.csv' at line 3, column \"v\": must be a finite number at least 0 (found -2)"],
    );
    refused(
        &[("d.csv", "t,v\n0,1\n60,NaN\n")],
        r#"{ file = "d.csv", time = "t", value = "v" }"#,
        p,
        &["'d.csv' at line 3, column \"v\": must be a finite number at least 0 (found NaN)"],
    );
    refused(
        &[("d.csv", "")],
        r#"{ file = "d.csv" }"#,
        p,
        &["fleets[0].load_profile.file: 'd.csv' is empty"],
    );
    refused(
        &[("d.csv", "t,rps\n0,1\n")],
        r#"{ file = "d.csv", time = "t" }"#,
        p,
        &["'d.csv' has no column \"value\" (`value`); its columns: \"t\", \"rps\""],
    );
    refused(
        &[],
        r#"{ file = 3 }"#,
        p,
        &["fleets[0].load_profile.file: invalid type: integer `3`, expected a file path (file = \"day.csv\") or a list of them"],
    );
    refused(
        &[],
        r#"{ file = "missing.csv" }"#,
        p,
        &["fleets[0].load_profile.file: cannot read", "missing.csv"],
    );
    refused(
        &[("e.json", r#"{"status":"error","errorType":"timeout","error":"query timed out"}"#)],
        r#"{ file = "e.json", format = "prometheus" }"#,
        p,
        &["'e.json' is a Prometheus error answer (status \"error\", errorType \"timeout\", error \"query timed out\")"],
    );
    refused(
        &[("m.json", &prometheus(0..3))],
        r#"{ file = "m.json", format = "prometheus" }"#,
        p,
        &["must hold exactly one series matching `series` {} (found 2 of 2: {job=\"batch\"}, {instance=\"a:9090\",job=\"api\"})"],
    );
    refused(
        &[
            ("a.json", &prometheus(0..7)),
            ("b.json", &prometheus(3..12)),
        ],
        r#"{ file = ["a.json", "b.json"], format = "prometheus", series = { job = "api" } }"#,
        p,
        &["fleets[0].load_profile.file[1]: 'b.json' must start after the file before it ends"],
    );
    refused(
        &[("d.csv", "time,value\n0,0\n60,0\n")],
        r#"{ file = "d.csv" }"#,
        p,
        &["records no requests over the run"],
    );
    refused(
        &[("d.csv", "time,value\n0,1\n")],
        r#"{ file = "d.csv" }"#,
        r#"{ kind = "poisson", rate = 100 }"#,
        &["fleets[0].arrival.rate: must be left out: load_profile.file gives the fleet's rate (found 100)"],
    );
    refused(
        &[],
        "[{ at = \"0s\", multiplier = 1 }]",
        p,
        &["fleets[0].arrival.rate: is required"],
    );
    refused(
        &[("d.csv", "time,value\n0,1\n")],
        r#"{ file = "d.csv", ramp = [] }"#,
        p,
        &["`ramp` and `file` are two kinds of load profile: write one"],
    );
    refused(
        &[("d.csv", "time,value\n0,1\n")],
        r#"{ file = "d.csv", speed = 0 }"#,
        p,
        &["fleets[0].load_profile.speed: must be above 0 and at most 1000000 (found 0)"],
    );
    refused(
        &[("d.csv", "time,value\n0,1\n")],
        r#"{ file = "d.csv" }"#,
        r#"{ kind = "closed", clients = 3, think_time = "1s" }"#,
        &["fleets[0].load_profile: applies only to poisson and constant arrivals"],
    );
}

#[test]
fn a_file_over_the_cap_is_refused_before_it_is_read() {
    let d = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(d.path().join("huge.csv")).unwrap();
    // A sparse file: its length, not its bytes, is over the cap.
    f.set_len(crate::scenario::inputs::MAX_INPUT_BYTES + 1)
        .unwrap();
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ file = "huge.csv" }"#, poisson()),
    );
    let out = retrysim(d.path(), &["validate", "s.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fleets[0].load_profile.file: cannot read") && err.contains("64 MiB"),
        "{err}"
    );
}

#[test]
fn scale_is_sweepable_and_searchable() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    let text = scenario(
        r#"{ file = "day.csv", time = "ts", value = "rps", scale = 1.0 }"#,
        poisson(),
    )
    .replace(
        "servers = \"unlimited\"\nservice_time = \"1ms\"",
        "servers = 4\nqueue_limit = 20\nservice_time = \"5ms\"",
    );
    // 4 servers at 5 ms serve 800/s: the recording (mean 500/s, peak 1500/s for 10 s)
    // loses the spike's excess; half of it fits.
    write(
        d.path(),
        "s.toml",
        &format!("{text}\n[[expect]]\nmetric = \"success_fraction\"\nmin = 0.97\n"),
    );
    let out = retrysim(
        d.path(),
        &[
            "search",
            "s.toml",
            "--key",
            "fleets.0.load_profile.scale",
            "--range",
            "0.2..2.0",
            "--tolerance",
            "0.05",
            "--largest",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("found: fleets.0.load_profile.scale = "))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(found > 0.2 && found < 2.0, "{found}");
    // A sweep over scale: the second cell offers twice the first's requests.
    write(
        d.path(),
        "s.toml",
        &format!("{text}\n[sweep]\n\"fleets.0.load_profile.scale\" = [1.0, 2.0]\n"),
    );
    ok(
        d.path(),
        &["sweep", "s.toml", "--no-plots", "-q", "--out", "sweep"],
    );
    let summary = std::fs::read_to_string(d.path().join("sweep/summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let at = headers.iter().position(|h| h == "logical").unwrap();
    let logical: Vec<f64> = rows
        .records()
        .map(|r| r.unwrap()[at].parse().unwrap())
        .collect();
    assert_eq!(logical.len(), 2);
    let ratio = logical[1] / logical[0];
    assert!((ratio - 2.0).abs() < 0.05, "{logical:?}");
}

/// [`scenario`] with `outages` appended.
fn with_outages(outages: &str) -> String {
    format!(
        "{}\n{outages}",
        scenario(
            "[{ at = \"0s\", multiplier = 1 }]",
            r#"{ kind = "poisson", rate = 300, clients = 10 }"#
        )
    )
}

#[test]
fn an_incident_timeline_gives_the_outages_its_rows_describe() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "inc.csv",
        "start,end,mode,p,servers\n20s,30s,error_rate,0.5,\n60s,75s,blackhole,,\n",
    );
    write(
        d.path(),
        "s.toml",
        &with_outages("[[outages]]\nfile = \"inc.csv\"\n"),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "timeline"],
    );
    write(
        d.path(),
        "s.toml",
        &with_outages(
            "[[outages]]\nstart = \"20s\"\nend = \"30s\"\nmode = { kind = \"error_rate\", p = 0.5 }\n\n[[outages]]\nstart = \"60s\"\nend = \"75s\"\nmode = { kind = \"blackhole\" }\n",
        ),
    );
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "inline"],
    );
    for f in ["timeseries.csv", "summary.csv", "herd.csv"] {
        let a = std::fs::read(d.path().join("timeline").join(f)).unwrap();
        let b = std::fs::read(d.path().join("inline").join(f)).unwrap();
        assert!(a == b, "{f} differs");
    }
    let m = std::fs::read_to_string(d.path().join("timeline/manifest.toml")).unwrap();
    assert!(
        m.contains("key = \"outages[0].file\"\nfile = \"inc.csv\""),
        "{m}"
    );
}

#[test]
fn a_timeline_in_recorded_time_lands_where_the_recording_has_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "day.csv", &day_csv());
    // The recording starts at 1700000000 (2023-11-14T22:13:20Z), played 2x faster: its
    // 40th second is the run's 20th.
    write(
        d.path(),
        "inc.csv",
        "start,end,mode\n1700000040,2023-11-14T22:14:20Z,blackhole\n",
    );
    write(
        d.path(),
        "s.toml",
        &format!(
            "{}\n[[outages]]\nfile = \"inc.csv\"\n",
            scenario(
                r#"{ file = "day.csv", time = "ts", value = "rps", speed = 2 }"#,
                poisson()
            )
        ),
    );
    let l = loaded(d.path(), &[]);
    match l.scenario.outages[0].timing {
        crate::model::config::OutageTiming::Window { start, end } => {
            assert_eq!((start, end), (20_000_000_000, 30_000_000_000));
        }
        ref t => panic!("{t:?}"),
    }
}

#[test]
fn a_bad_timeline_row_is_named_by_its_file_and_line() {
    let refused_outages = |csv: &str, entry: &str, expect: &str| {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "inc.csv", csv);
        write(d.path(), "s.toml", &with_outages(entry));
        let out = retrysim(d.path(), &["validate", "s.toml"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(expect), "expected {expect:?} in: {err}");
    };
    let entry = "[[outages]]\nfile = \"inc.csv\"\n";
    refused_outages(
        "start,end,mode\n1s,2s,fail\n3s,4s,melt\n",
        entry,
        "outages[0].file: 'inc.csv' at line 3, column \"mode\": must be fail, error_rate, slow, capacity or blackhole (found \"melt\")",
    );
    // A rule validation checks, on the row that breaks it.
    refused_outages(
        "start,end,mode,p\n1s,2s,fail,\n3s,4s,error_rate,2\n",
        entry,
        "outages[0].file: 'inc.csv' at line 3 (mode.p): must be",
    );
    refused_outages(
        "start,end,mode\n5s,2s,fail\n",
        entry,
        "outages[0].file: 'inc.csv' at line 2 (end): must be after start 5s (found 2s)",
    );
    // An entry after a timeline keeps its own index in messages.
    refused_outages(
        "start,end,mode\n1s,2s,fail\n3s,4s,fail\n",
        "[[outages]]\nfile = \"inc.csv\"\n\n[[outages]]\nstart = \"9s\"\nend = \"8s\"\nmode = { kind = \"fail\" }\n",
        "outages[1].end: must be after start 9s (found 8s)",
    );
    refused_outages(
        "start,end,mode\n1s,2s,fail\n",
        "[[outages]]\nfile = \"inc.csv\"\nstart = \"1s\"\n",
        "outages[0].file: takes no other key in its entry but `target`",
    );
    refused_outages(
        "",
        "[[outages]]\nstart = \"1s\"\nend = \"2s\"\n",
        "outages[0].mode: is required",
    );
}
