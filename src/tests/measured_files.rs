//! Delay distributions read from files (issue 43): `histogram` buckets from a CSV
//! table or a Prometheus answer, HdrHistogram interval logs (`hdr`), raw samples
//! (`empirical`).

use std::path::Path;

use crate::engine::rng::stream;
use crate::engine::Nanos;
use crate::model::dist::Dist;
use crate::scenario::{load_file, Loaded, Overrides};
use sha2::Digest;

use crate::tests::common::{ok, retrysim};

/// A scenario whose dependency's service time is `dist`.
fn scenario(dist: &str) -> String {
    format!(
        "duration = \"2s\"\n[dependency]\nservers = 4\nservice_time = {dist}\n\
         [[fleets]]\nname = \"web\"\narrival = {{ kind = \"poisson\", rate = 100 }}\n\
         [[fleets.layers]]\nmax_attempts = 2\n"
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn load(dir: &Path, name: &str) -> Loaded {
    load_file(Some(&dir.join(name)), &Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// `n` draws of the dependency's service time of `l`, from a fixed stream.
fn draws(l: &Loaded, n: usize) -> Vec<Nanos> {
    let d: &Dist = &l.scenario.dependency.service_time;
    let mut r = stream(43, "files");
    (0..n).map(|_| d.sample(&mut r)).collect()
}

const LAT_CSV: &str = "le,count\n0.005,10\n0.01,40\n0.025,90\n0.1,99\n+Inf,100\n";

/// A Prometheus range answer of the same buckets (the last sample) after an earlier
/// sample of other counts, series in a shuffled order, beside another handler's.
fn lat_json() -> String {
    let series = |handler: &str, le: &str, first: u32, last: u32| {
        format!(
            r#"{{"metric":{{"__name__":"http_request_duration_seconds_bucket","handler":"{handler}","le":"{le}"}},"values":[[1700000000,"{first}"],[1700000060,"{last}"]]}}"#
        )
    };
    let rows = [
        series("/api", "0.025", 9, 90),
        series("/api", "+Inf", 10, 100),
        series("/api", "0.005", 1, 10),
        series("/api", "0.1", 10, 99),
        series("/api", "0.01", 4, 40),
        series("/other", "0.1", 1, 1),
        series("/other", "+Inf", 1, 1),
    ];
    format!(
        r#"{{"status":"success","data":{{"resultType":"matrix","result":[{}]}}}}"#,
        rows.join(",")
    )
}

#[test]
fn a_histogram_file_gives_the_inline_histograms_draws_and_bytes() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "lat.csv", LAT_CSV);
    write(d.path(), "lat.json", &lat_json());
    let inline = r#"{ kind = "histogram", le = ["5ms", "10ms", "25ms", "100ms"], counts = [10, 40, 90, 99, 100], max = "300ms" }"#;
    write(d.path(), "inline.toml", &scenario(inline));
    write(
        d.path(),
        "csv.toml",
        &scenario(r#"{ kind = "histogram", file = "lat.csv", max = "300ms" }"#),
    );
    write(
        d.path(),
        "json.toml",
        &scenario(
            r#"{ kind = "histogram", file = "lat.json", series = { handler = "/api" }, max = "300ms" }"#,
        ),
    );
    // The bounds in milliseconds, with `unit`.
    write(
        d.path(),
        "ms.csv",
        "le,count\n5,10\n10,40\n25,90\n100,99\n+Inf,100\n",
    );
    write(
        d.path(),
        "ms.toml",
        &scenario(r#"{ kind = "histogram", file = "ms.csv", unit = "ms", max = "300ms" }"#),
    );
    let want = draws(&load(d.path(), "inline.toml"), 10_000);
    for name in ["csv.toml", "json.toml", "ms.toml"] {
        assert_eq!(draws(&load(d.path(), name), 10_000), want, "{name}");
    }
    // `time` picks the earlier sample: other counts, other draws.
    write(
        d.path(),
        "early.toml",
        &scenario(
            r#"{ kind = "histogram", file = "lat.json", series = { handler = "/api" }, time = 1700000000, max = "300ms" }"#,
        ),
    );
    let early = load(d.path(), "early.toml");
    let inline_early = r#"{ kind = "histogram", le = ["5ms", "10ms", "25ms", "100ms"], counts = [1, 4, 9, 10, 10], max = "300ms" }"#;
    write(d.path(), "inline_early.toml", &scenario(inline_early));
    assert_eq!(
        draws(&early, 1000),
        draws(&load(d.path(), "inline_early.toml"), 1000)
    );
    // The run's files, byte for byte (the manifest aside: it records the file).
    for (name, out) in [("inline.toml", "a"), ("csv.toml", "b")] {
        ok(d.path(), &["run", name, "--no-plots", "-q", "--out", out]);
    }
    for f in ["summary.csv", "timeseries.csv"] {
        let a = std::fs::read(d.path().join("a").join(f)).unwrap();
        let b = std::fs::read(d.path().join("b").join(f)).unwrap();
        assert!(a == b, "{f} differs");
    }
}

/// An interval log of two tagged intervals ("a": values around 1 ms, "b": around
/// 20 ms) and one untagged, in microseconds, written by the crate's own writer; and
/// the crate's histograms of what it holds (all, and "a" alone).
fn hlog() -> (
    String,
    hdrhistogram::Histogram<u64>,
    hdrhistogram::Histogram<u64>,
) {
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::Histogram;
    let mut a = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    let mut b = a.clone();
    let mut c = a.clone();
    for i in 0..5000u64 {
        a.record(800 + (i * 7919) % 400).unwrap();
        b.record(15_000 + (i * 104_729) % 10_000).unwrap();
        c.record(100 + i % 50).unwrap();
    }
    a.record(250_000).unwrap();
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let t0 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let mut w = IntervalLogWriterBuilder::new()
            .add_comment("test log")
            .with_start_time(t0)
            .with_base_time(t0)
            .begin_log_with(&mut buf, &mut ser)
            .unwrap();
        let sec = std::time::Duration::from_secs(1);
        w.write_histogram(&a, std::time::Duration::ZERO, sec, Tag::new("a"))
            .unwrap();
        w.write_histogram(&b, sec, sec, Tag::new("b")).unwrap();
        w.write_histogram(&c, sec * 2, sec, None).unwrap();
    }
    let mut all = a.clone();
    all.add(&b).unwrap();
    all.add(&c).unwrap();
    (String::from_utf8(buf).unwrap(), all, a)
}

#[test]
fn an_hdr_log_round_trips_to_the_quantiles_the_crate_computes() {
    let d = tempfile::tempdir().unwrap();
    let (log, all, a) = hlog();
    write(d.path(), "latency.hlog", &log);
    write(
        d.path(),
        "all.toml",
        &scenario(r#"{ kind = "hdr", file = "latency.hlog", unit = "us" }"#),
    );
    write(
        d.path(),
        "a.toml",
        &scenario(r#"{ kind = "hdr", file = "latency.hlog", tag = "a", unit = "us" }"#),
    );
    for (name, h) in [("all.toml", &all), ("a.toml", &a)] {
        let l = load(d.path(), name);
        let Dist::Measured(m) = &l.scenario.dependency.service_time else {
            panic!("{name}: not measured");
        };
        for q in [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999] {
            // The crate answers the highest value equivalent to the bin holding the
            // quantile; ours lies in that bin (values in us, ours in ns).
            let want = h.value_at_quantile(q);
            let (lo, hi) = (h.lowest_equivalent(want), h.highest_equivalent(want));
            let got = m.quantile(q) / 1e3;
            assert!(
                got >= lo as f64 - 1e-9 && got <= hi as f64 + 1e-9,
                "{name} q{q}: {got} not in the crate's bin [{lo}, {hi}] of {want}"
            );
        }
        assert_eq!(m.quantile(1.0) / 1e3, h.highest_equivalent(h.max()) as f64);
        // Draws too: the sorted draws' median lies in the median's bin.
        let mut v = draws(&l, 20_001);
        v.sort_unstable();
        let med = v[10_000] as f64 / 1e3;
        let want = h.value_at_quantile(0.5);
        let (lo, hi) = (
            h.lowest_equivalent(h.value_at_quantile(0.49)),
            h.highest_equivalent(h.value_at_quantile(0.51)),
        );
        assert!(
            med >= lo as f64 - 1.0 && med <= hi as f64 + 1.0,
            "{name}: median {med} (crate {want})"
        );
    }
    // The default unit is ns.
    write(
        d.path(),
        "ns.toml",
        &scenario(r#"{ kind = "hdr", file = "latency.hlog", tag = "a" }"#),
    );
    let Dist::Measured(m) = &load(d.path(), "ns.toml").scenario.dependency.service_time else {
        panic!("not measured");
    };
    assert_eq!(m.quantile(1.0), a.highest_equivalent(a.max()) as f64);
}

#[test]
fn an_empirical_distribution_draws_only_the_files_values_at_their_frequencies() {
    let d = tempfile::tempdir().unwrap();
    // 5 samples of 1 ms, 3 of 2.5 ms, 2 of 7 ms, in no order.
    let values = [1.0, 7.0, 2.5, 1.0, 1.0, 2.5, 7.0, 1.0, 2.5, 1.0];
    let mut csv = String::from("host,latency_ms\n");
    for v in values {
        csv.push_str(&format!("h1,{v}\n"));
    }
    write(d.path(), "samples.csv", &csv);
    write(
        d.path(),
        "s.toml",
        &scenario(
            r#"{ kind = "empirical", file = "samples.csv", column = "latency_ms", unit = "ms" }"#,
        ),
    );
    let n = 200_000;
    let v = draws(&load(d.path(), "s.toml"), n);
    for (value, p) in [(1_000_000u64, 0.5), (2_500_000, 0.3), (7_000_000, 0.2)] {
        let got = v.iter().filter(|&&x| x == value).count() as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (got - p).abs() < 5.0 * se,
            "{value}: fraction {got}, expected {p}"
        );
    }
    assert!(
        v.iter()
            .all(|x| [1_000_000, 2_500_000, 7_000_000].contains(x)),
        "a draw not in the file"
    );
}

#[test]
fn the_manifest_records_each_distribution_file_and_explain_shows_its_quantiles() {
    let d = tempfile::tempdir().unwrap();
    let (log, _, _) = hlog();
    write(d.path(), "latency.hlog", &log);
    write(d.path(), "lat.csv", LAT_CSV);
    write(d.path(), "think.csv", "t\n0.5\n1.5\n");
    let text = "duration = \"2s\"\n[dependency]\nservers = 4\n\
         service_time = { kind = \"hdr\", file = \"latency.hlog\", unit = \"us\" }\n\
         [[fleets]]\nname = \"web\"\n\
         arrival = { kind = \"closed\", clients = 5, think_time = { kind = \"empirical\", file = \"think.csv\", column = \"t\" } }\n\
         [[fleets.layers]]\nmax_attempts = 2\n\
         hop_latency = { kind = \"histogram\", file = \"lat.csv\", max = \"300ms\" }\n";
    write(d.path(), "s.toml", text);
    ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "out"],
    );
    let m: toml::Table =
        toml::from_str(&std::fs::read_to_string(d.path().join("out/manifest.toml")).unwrap())
            .unwrap();
    let inputs = m["inputs"].as_array().expect("[[inputs]]");
    let keys: Vec<(&str, &str)> = inputs
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["file"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("fleets[0].arrival.think_time.file", "think.csv"),
            ("fleets[0].layers[0].hop_latency.file", "lat.csv"),
            ("dependency.service_time.file", "latency.hlog"),
        ]
    );
    for r in inputs {
        let bytes = std::fs::read(d.path().join(r["file"].as_str().unwrap())).unwrap();
        let sha: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(r["sha256"].as_str(), Some(sha.as_str()));
        assert_eq!(r["bytes"].as_integer(), Some(bytes.len() as i64));
    }
    let out = retrysim(d.path(), &["explain", "s.toml"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "measured by HdrHistogram (3 intervals merged, 15001 values), sampled evenly within each recorded bin as p50 ",
        "  think time measured as 2 raw samples, resampled exactly as p50 1.5s, p90 1.5s, p99 1.5s, p99.9 1.5s, max 1.5s",
        "      hop latency measured as a histogram of 5 buckets (100 observations), sampled linearly between them as p50 ",
    ] {
        assert!(text.contains(want), "expected {want:?} in:\n{text}");
    }
}

/// Runs `run` on a scenario whose service time is `dist`, with `files` beside it,
/// expecting exit 2, each of `expect` in the message, and no folder.
fn refused(files: &[(&str, &str)], dist: &str, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(d.path(), name, text);
    }
    write(d.path(), "s.toml", &scenario(dist));
    let out = retrysim(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "out"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("s.toml"), "{err}");
    for e in expect {
        assert!(err.contains(e), "expected {e:?} in: {err}");
    }
    assert!(
        !d.path().join("out").exists(),
        "a refused scenario wrote a folder"
    );
}

#[test]
fn bad_distribution_files_are_refused_with_the_key_the_file_and_the_line() {
    let hist = r#"{ kind = "histogram", file = "h.csv", max = "1s" }"#;
    let key = "dependency.service_time.file: ";
    refused(
        &[("h.csv", "le,count\n0.1,5\n0.2,3\n+Inf,9\n")],
        hist,
        &[&format!("{key}'h.csv' at line 3, column \"count\": cumulative counts must not fall, as Prometheus exports them (found 3 after 5)")],
    );
    refused(
        &[("h.csv", "le,count\n0.2,5\n0.1,6\n")],
        hist,
        &["'h.csv' at line 3, column \"le\": bounds must increase (found 0.1 after 0.2)"],
    );
    refused(
        &[("h.csv", "le,count\n0.1,NaN\n")],
        hist,
        &["'h.csv' at line 2, column \"count\": must be a finite number at least 0 (found \"NaN\")"],
    );
    refused(
        &[("h.csv", "le,count\n0.1,-1\n")],
        hist,
        &["at line 2, column \"count\": must be a finite number at least 0 (found \"-1\")"],
    );
    refused(
        &[("h.csv", "le,count\n+Inf,3\n0.1,4\n")],
        hist,
        &["'h.csv' at line 3, column \"le\": no bucket may follow +Inf"],
    );
    refused(&[("h.csv", "")], hist, &["'h.csv' is empty"]);
    refused(&[("h.csv", "le,count\n")], hist, &["'h.csv' holds no rows"]);
    refused(
        &[("h.csv", "le,n\n0.1,1\n")],
        hist,
        &["'h.csv' has no column \"count\"; its columns: \"le\", \"n\""],
    );
    refused(
        &[("h.csv", "le,count\n0.1,0\n+Inf,0\n")],
        hist,
        &["'h.csv' holds no observations"],
    );
    refused(
        &[("h.csv", LAT_CSV)],
        r#"{ kind = "histogram", file = "h.csv", le = ["1s"], counts = [1] }"#,
        &["takes no `le` or `counts` beside it"],
    );
    refused(
        &[],
        r#"{ kind = "histogram", le = ["1s"], counts = [1], unit = "ms" }"#,
        &["dependency.service_time.unit: applies only to buckets read from a file"],
    );
    refused(&[], hist, &[key, "cannot read"]);
    // Too many buckets: refused at the row past the cap.
    let mut many = String::from("le,count\n");
    for i in 0..10_002 {
        many.push_str(&format!("{},{i}\n", i + 1));
    }
    refused(
        &[("h.csv", &many)],
        hist,
        &["at line 10003, column \"le\": at most 10000 buckets are allowed"],
    );
    // Prometheus answers.
    let json = r#"{ kind = "histogram", file = "h.json", max = "1s" }"#;
    refused(
        &[("h.json", &lat_json())],
        json,
        &["must hold the `_bucket` series (with an `le` label) of exactly one histogram matching `series` {} (found 2: {__name__=\"http_request_duration_seconds_bucket\",handler=\"/api\"}, {__name__=\"http_request_duration_seconds_bucket\",handler=\"/other\"})"],
    );
    refused(
        &[("h.json", &lat_json().replace("\"40\"", "\"95\""))],
        r#"{ kind = "histogram", file = "h.json", series = { handler = "/api" }, max = "1s" }"#,
        &["'h.json' at result[0].values[1] (le=\"0.025\"): cumulative counts must not fall, as Prometheus exports them (found 90 after 95)"],
    );
    refused(
        &[("h.json", &lat_json())],
        r#"{ kind = "histogram", file = "h.json", series = { handler = "/api" }, time = 5, max = "1s" }"#,
        &["has no sample at `time` 5"],
    );
    refused(
        &[("h.json", r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#)],
        json,
        &["'h.json' is a Prometheus error answer (status \"error\", errorType \"bad_data\", error \"parse error\")"],
    );
    // HdrHistogram logs.
    let (log, _, _) = hlog();
    refused(
        &[("l.hlog", &log)],
        r#"{ kind = "hdr", file = "l.hlog", tag = "c" }"#,
        &["dependency.service_time.file: 'l.hlog' has no interval tagged \"c\" (its tags: \"a\", \"b\")"],
    );
    refused(
        &[("l.hlog", "#only a comment\n")],
        r#"{ kind = "hdr", file = "l.hlog" }"#,
        &["'l.hlog' holds no interval histograms"],
    );
    refused(
        &[("l.hlog", "#c\n0.1,1.0,2.0,notbase64!!\n")],
        r#"{ kind = "hdr", file = "l.hlog" }"#,
        &["'l.hlog' at line 2: "],
    );
    refused(
        &[("l.hlog", "")],
        r#"{ kind = "hdr", file = "l.hlog" }"#,
        &["'l.hlog' is empty"],
    );
    // Raw samples.
    let emp = r#"{ kind = "empirical", file = "e.csv", column = "ms", unit = "ms" }"#;
    refused(
        &[("e.csv", "ms\n1\n2\nNaN\n")],
        emp,
        &["dependency.service_time.file: 'e.csv' at line 4, column \"ms\": must be a finite number at least 0 (found \"NaN\")"],
    );
    refused(
        &[("e.csv", "ms\n1\n-2\n")],
        emp,
        &["'e.csv' at line 3, column \"ms\": must be a finite number at least 0 (found \"-2\")"],
    );
    refused(
        &[("e.csv", "latency\n1\n")],
        emp,
        &["'e.csv' has no column \"ms\"; its columns: \"latency\""],
    );
    refused(&[("e.csv", "ms\n")], emp, &["'e.csv' holds no rows"]);
    refused(&[("e.csv", "\n")], emp, &["'e.csv' is empty"]);
}

#[test]
fn a_samples_file_over_the_cap_is_refused_at_the_row_past_it() {
    let cap = crate::scenario::inputs::dists::MAX_SAMPLES;
    let mut csv = String::with_capacity(2 * (cap + 2) + 4);
    csv.push_str("v\n");
    for _ in 0..=cap {
        csv.push_str("1\n");
    }
    refused(
        &[("e.csv", &csv)],
        r#"{ kind = "empirical", file = "e.csv", column = "v" }"#,
        &[&format!(
            "'e.csv' at line {}: holds more than {cap} samples: at most {cap} are allowed",
            cap + 2
        )],
    );
}

#[test]
fn an_hdr_histogram_whose_header_asks_for_too_many_counts_is_refused_before_it_is_decoded() {
    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::Histogram;
    // 5 significant digits over 1 ns to 2^62 ns: 131072 × 47 = 6160384 counts (47 MiB).
    let log = |h: &Histogram<u64>| {
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        {
            let t0 = std::time::UNIX_EPOCH;
            let mut w = IntervalLogWriterBuilder::new()
                .with_start_time(t0)
                .with_base_time(t0)
                .begin_log_with(&mut buf, &mut ser)
                .unwrap();
            w.write_histogram(
                h,
                std::time::Duration::ZERO,
                std::time::Duration::from_secs(1),
                None,
            )
            .unwrap();
        }
        String::from_utf8(buf).unwrap()
    };
    let mut wide = Histogram::<u64>::new_with_bounds(1, 1 << 62, 5).unwrap();
    wide.record(1_000_000).unwrap();
    refused(
        &[("wide.hlog", &log(&wide))],
        r#"{ kind = "hdr", file = "wide.hlog" }"#,
        &[
            "dependency.service_time.file: ",
            "'wide.hlog'",
            "the histogram's header asks for 6160384 counts (5 significant digits from 1 to 4611686018427387904): at most 1048576 are read",
        ],
    );
    // 4 digits over the same range fit: 16384 × 50 counts.
    let mut fits = Histogram::<u64>::new_with_bounds(1, 1 << 62, 4).unwrap();
    fits.record(1_000_000).unwrap();
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "fits.hlog", &log(&fits));
    write(
        d.path(),
        "s.toml",
        &scenario(r#"{ kind = "hdr", file = "fits.hlog" }"#),
    );
    let out = retrysim(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "out"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
