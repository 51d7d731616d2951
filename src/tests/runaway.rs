//! Runaway runs: an overloaded dependency with an unlimited queue, callers that give up
//! on it, orphans of unlimited retries, timers that pile up, a closed fleet of
//! millions, a spike far above the base rate, a run past its event budget. Each stops
//! at a `[limits]` cap with a message naming it and exit code 2, and writes what it
//! measured up to the stop, marked `truncated = true`. The runs execute under a 4 GiB
//! address-space limit (`ulimit -v`): a cap that did not hold would end them with an
//! allocation failure instead.

use std::path::Path;
use std::process::{Command, Output};

use crate::metrics::recorder::BucketRow;
use crate::model::config::Limits;
use crate::model::limits::bytes_per_request;
use crate::model::request::{Node, Request};
use crate::model::windows::SlicedTimes;
use crate::model::world::Event;
use crate::scenario::guard::{bytes_text, memory, Memory, MAX_RUN_BYTES};

/// Runs retrysim in `dir` under a 4 GiB address-space limit.
fn capped(dir: &Path, args: &[&str]) -> Output {
    crate::tests::common::capped(dir, 4 << 10, args)
}

/// Column `name` of every row of a CSV file.
fn column(path: &Path, name: &str) -> Vec<String> {
    let mut rdr = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let i = rdr
        .headers()
        .unwrap()
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("{path:?} has no column {name}"));
    rdr.records().map(|r| r.unwrap()[i].to_string()).collect()
}

/// Writes `text` as `name.toml`, runs it, and checks that it stopped at a limit whose
/// message holds `needle`, before `duration_s`, with its measurements written.
fn stops_at_a_limit(text: &str, sets: &[&str], needle: &str, duration_s: f64) -> String {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), text).unwrap();
    let mut args = vec!["run", "s.toml", "--no-plots", "-q", "--out", "out"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = capped(d.path(), &args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert!(err.contains("run stopped early"), "{err}");
    assert!(err.contains("marked truncated"), "{err}");
    let o = d.path().join("out");
    assert!(o.join("manifest.toml").exists());
    assert_eq!(column(&o.join("summary.csv"), "truncated"), ["true"]);
    let t: Vec<f64> = column(&o.join("timeseries.csv"), "t")
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(!t.is_empty(), "the series up to the stop is written");
    assert!(
        *t.last().unwrap() < duration_s - 1.0,
        "the series ends at the stop, not at the duration: {t:?}"
    );
    err
}

const OVERLOADED: &str = r#"
duration = "300s"
[dependency]
servers = 1
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100000 }
"#;

#[test]
fn an_overloaded_dependency_with_an_unlimited_queue_stops_at_max_in_flight() {
    stops_at_a_limit(
        OVERLOADED,
        &[],
        "more than limits.max_in_flight = 1000000 requests in flight",
        300.0,
    );
}

#[test]
fn callers_that_give_up_on_an_unlimited_queue_stop_at_max_in_flight() {
    // Requests end at their deadline, but their attempts wait on in the queue: the
    // orphaned work, not the requests, is what grows.
    let text = format!(
        "{OVERLOADED}deadline = \"1s\"\n[[fleets.layers]]\nmax_attempts = 3\nattempt_timeout = \"100ms\"\n"
    );
    stops_at_a_limit(&text, &[], "limits.max_in_flight = 1000000", 300.0);
}

#[test]
fn attempts_orphaned_by_unlimited_retries_stop_at_max_in_flight() {
    // Few requests, each timing out an attempt every millisecond forever, at a
    // dependency that holds them all.
    let text = r#"
duration = "300s"
[dependency]
servers = 1
service_time = "1h"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 10 }
[[fleets.layers]]
max_attempts = "unlimited"
attempt_timeout = "1ms"
"#;
    stops_at_a_limit(
        text,
        &[],
        "calls and attempts in flight, orphans included (limits.max_in_flight = 1000000 × 2",
        300.0,
    );
}

#[test]
fn timers_of_finished_requests_are_dropped_as_they_finish() {
    // Each request finishes in a millisecond and leaves a 1000 s deadline timer: the
    // timer lane drops them from its front, so the run completes untruncated.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("s.toml"),
        r#"
duration = "20s"
[dependency]
servers = "unlimited"
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100000 }
deadline = "1000s"
"#,
    )
    .unwrap();
    let out = capped(
        d.path(),
        &[
            "run",
            "s.toml",
            "--no-plots",
            "-q",
            "--out",
            "out",
            "--set",
            "limits.max_in_flight=10000",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        column(&d.path().join("out/summary.csv"), "truncated"),
        ["false"]
    );
}

#[test]
fn timers_behind_a_hung_request_stop_at_the_pending_cap() {
    // A blackhole swallows the first requests, which stay in flight until their 1000 s
    // deadline; every later request finishes in a millisecond, but its timer waits
    // behind theirs in the lane.
    let text = r#"
duration = "300s"
[dependency]
servers = "unlimited"
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100000 }
deadline = "1000s"
[[outages]]
start = "0s"
end = "1ms"
mode = { kind = "blackhole" }
"#;
    stops_at_a_limit(
        text,
        &["limits.max_in_flight=10000"],
        "events pending, timers of finished requests included (limits.max_in_flight = 10000 × 16",
        300.0,
    );
}

#[test]
fn a_closed_fleet_of_millions_stops_at_max_in_flight() {
    let text = r#"
duration = "60s"
[dependency]
servers = 10
service_time = "10ms"
[[fleets]]
name = "fleet"
arrival = { kind = "closed", clients = 5000000, think_time = "1ms" }
[[fleets.layers]]
max_attempts = 2
"#;
    stops_at_a_limit(
        text,
        &[],
        "more than limits.max_in_flight = 1000000 requests in flight",
        60.0,
    );
}

#[test]
fn a_spike_far_above_the_base_rate_stops_at_max_in_flight() {
    let text = r#"
duration = "10s"
[dependency]
servers = 10
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 1e8 }
load_profile = [{ at = "0s", multiplier = 1e-6 }, { at = "1s", multiplier = 1000 }, { at = "1001ms", multiplier = 0 }]
"#;
    let err = stops_at_a_limit(text, &[], "limits.max_in_flight = 1000000", 10.0);
    assert!(err.contains("at t = 1.000s"), "{err}");
}

#[test]
fn a_run_past_max_events_stops_with_what_it_measured() {
    let d = tempfile::tempdir().unwrap();
    let default = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/default.toml"),
    )
    .unwrap();
    std::fs::write(d.path().join("d.toml"), &default).unwrap();
    let err = stops_at_a_limit(
        &default,
        &["limits.max_events=100000"],
        "limits.max_events = 100000 events handled at t = ",
        60.0,
    );
    // The summary counts what happened before the stop.
    let out = capped(
        d.path(),
        &[
            "run",
            "d.toml",
            "-q",
            "--out",
            "o",
            "--set",
            "limits.max_events=100000",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    let events = column(&d.path().join("o/summary.csv"), "events");
    assert_eq!(events, ["100000"]);
    assert!(
        d.path().join("o/plots/timeseries.png").exists(),
        "plots are drawn from a truncated run too"
    );
}

const SWEEP: &str = r#"
name = "capped"
duration = "10s"
[dependency]
servers = 4
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 200 }
[sweep]
"limits.max_events" = [1000, 100000000]
"fleets.0.arrival.rate" = [100, 200]
"#;

#[test]
fn a_truncated_run_in_a_sweep_is_written_and_reported_also_when_resumed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sw.toml"), SWEEP).unwrap();
    for pass in ["first", "resumed"] {
        let out = capped(
            d.path(),
            &["sweep", "sw.toml", "--no-plots", "-q", "--out", "out"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{pass}: {err}");
        assert!(
            err.contains("run 0:") && err.contains("run 1:"),
            "{pass}: {err}"
        );
        assert!(
            !err.contains("run 2:") && !err.contains("run 3:"),
            "{pass}: {err}"
        );
        assert!(err.contains("limits.max_events"), "{pass}: {err}");
        assert!(err.contains("marked truncated"), "{pass}: {err}");
        let o = d.path().join("out");
        assert_eq!(
            column(&o.join("summary.csv"), "truncated"),
            ["true", "true", "false", "false"],
            "{pass}"
        );
        assert!(o.join("aggregate.csv").exists());
    }
    // Sharded and merged: each shard holds one truncated run, the merge reports both.
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("s{i}");
        let args = [
            "sweep",
            "sw.toml",
            "--no-plots",
            "-q",
            "--shard",
            &shard,
            "--out",
            &out,
        ];
        let o = capped(d.path(), &args);
        assert_eq!(o.status.code(), Some(2));
    }
    let o = capped(d.path(), &["merge", "--no-plots", "--out", "m", "s0", "s1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2 of 4 runs stopped early")
            && err.contains("run 0: stopped early")
            && err.contains("run 1: stopped early"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.path().join("m/summary.csv")).unwrap(),
        std::fs::read(d.path().join("out/summary.csv")).unwrap()
    );
}

#[test]
fn the_default_limits_bound_the_memory_of_work_in_flight() {
    // What one in-flight request of the deepest stack (16 layers) can hold: its slot,
    // a call per layer and the attempt, and its share of pending events.
    let l = Limits::default();
    let request = std::mem::size_of::<Request>() as u64;
    let node = std::mem::size_of::<Node>() as u64;
    let event = std::mem::size_of::<(u64, u64, Event)>() as u64;
    let pending = crate::model::limits::PENDING_PER_REQUEST;
    let per_request = request + 17 * node + pending * event;
    let total = l.max_in_flight * per_request;
    assert!(
        total <= 2 << 30,
        "{} requests × {per_request} B = {total} B",
        l.max_in_flight
    );
    // The estimate validation uses counts at least that, and the side tables.
    assert!(bytes_per_request(16) >= per_request);
    // And the book says so.
    let readme = readme();
    assert!(readme.contains(&format!("max_in_flight = {}", l.max_in_flight)));
    assert!(readme.contains(&format!("max_events = {}", l.max_events)));
}

/// The book's pages that state the caps and the memory figures: the robustness page
/// and the scenario-files guide.
fn readme() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src");
    let text = ["reference/robustness.md", "guide/scenario-files.md"]
        .map(|p| std::fs::read_to_string(root.join(p)).unwrap())
        .join("\n");
    // Lines are wrapped anywhere: compare with single spaces.
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `x` bytes in GB with two decimals, as the book writes them.
fn gb(x: u64) -> String {
    format!("{:.2} GB", x as f64 / 1e9)
}

/// The in-flight part of the estimate for a scenario of `layers` layers at the caps.
fn at_caps(layers: usize) -> (u64, Memory) {
    let mut text = String::from(
        "duration = \"10s\"\n[dependency]\nservers = 1\nservice_time = \"10ms\"\n[[fleets]]\nname = \"web\"\narrival = { kind = \"poisson\", rate = 100 }\n",
    );
    for _ in 0..layers {
        text.push_str("[[fleets.layers]]\nmax_attempts = 2\n");
    }
    let l = crate::tests::common::scenario(&text, &[]);
    let m = memory(&l.scenario);
    (
        Limits::default().max_in_flight * bytes_per_request(layers),
        m,
    )
}

#[test]
fn the_readme_memory_figures_are_the_estimate_validation_uses() {
    let r = readme();
    let request = std::mem::size_of::<Request>() + 4;
    let node = crate::model::limits::bytes_per_node();
    let event = crate::model::limits::bytes_per_event();
    for needle in [
        format!("a request in flight takes {request} bytes"),
        format!("a call or an attempt {node}"),
        format!("a pending event {event}"),
        format!("{} bytes a bucket", std::mem::size_of::<BucketRow>()),
        format!(
            "at most {} KiB",
            2 * SlicedTimes::max_bytes(SlicedTimes::SLICES) / 1024
        ),
        format!("more than {}", bytes_text(MAX_RUN_BYTES)),
    ] {
        assert!(r.contains(&needle), "the book should say {needle:?}");
    }
    let (one, m1) = at_caps(1);
    let (deep, m16) = at_caps(16);
    assert_eq!(m1.in_flight, 2 * one);
    assert_eq!(m16.in_flight, 2 * deep);
    for needle in [
        format!(
            "one retry layer holds at most {} of work in flight, {} while its tables grow",
            gb(one),
            gb(2 * one)
        ),
        format!(
            "the deepest stack (16 layers) {}, {} while growing",
            gb(deep),
            gb(2 * deep)
        ),
    ] {
        assert!(r.contains(&needle), "the book should say {needle:?}");
    }
    // Its sums: 3 runs of any accepted scenario fit in 24 GB, 12 of one layer whose
    // state and series take at most 0.5 GB.
    const { assert!(3 * MAX_RUN_BYTES <= 24 << 30) };
    assert!(r.contains("fits in 24 GB whatever its runs on 3 workers"));
    assert!(12 * (2 * one + 500_000_000) <= 24_000_000_000);
    assert!(r.contains("on 12 when each run has one layer and at most 0.5 GB of state and series"));
    assert!(
        m16.total() <= MAX_RUN_BYTES,
        "the defaults are accepted with 16 layers"
    );
}

/// GNU time, which measures peak memory (Debian package `time`).
const GNU_TIME: &str = "/usr/bin/time";

/// Peak resident memory of `retrysim args` in `dir`, in bytes, measured by
/// `/usr/bin/time` (None where it is missing, a failure under `CI_REQUIRE_TIME=1`,
/// which `.ci/run` sets after installing it).
fn peak_rss(dir: &Path, args: &[&str]) -> Option<(u64, Output)> {
    let time = Path::new(GNU_TIME);
    if !time.exists() {
        if std::env::var("CI_REQUIRE_TIME").as_deref() == Ok("1") {
            panic!("CI_REQUIRE_TIME=1 but {GNU_TIME} is missing (apt-get install -y time)");
        }
        eprintln!("skipped: no {GNU_TIME}: peak memory not measured");
        return None;
    }
    let out = Command::new(time)
        .current_dir(dir)
        .args(["-f", "peak-rss-kb=%M"])
        .arg(crate::tests::common::bin())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let kb: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kb="))
        .unwrap_or_else(|| panic!("{err}"))
        .trim()
        .parse()
        .unwrap();
    Some((kb * 1024, out))
}

#[test]
fn a_long_ratio_window_and_a_long_bucket_do_not_grow_with_the_events() {
    // Every call stayed in the budget's window and every latency in the bucket: at
    // the default max_events this run took 3.9 GB. Its window now holds 64 slices and
    // the bucket at most 2^20 exact latencies.
    let text = r#"
duration = "1000s"
bucket = "1000s"
[dependency]
servers = "unlimited"
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 1000000 }
[[fleets.layers]]
max_attempts = 3
instances = 1
budget = { kind = "ratio", percent = 20, min_per_sec = 1, window = "1000s" }
"#;
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("m.toml"), text).unwrap();
    let args = [
        "run",
        "m.toml",
        "--no-plots",
        "-q",
        "--out",
        "out",
        "--set",
        "limits.max_events=8000000",
    ];
    let Some((peak, out)) = peak_rss(d.path(), &args) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("limits.max_events = 8000000"), "{err}");
    // 4,000,000 calls and latencies were 64 MB and more.
    assert!(peak < 48 << 20, "peak {peak} B");
    let p50 = column(&d.path().join("out/timeseries.csv"), "latency_p50_ms");
    assert!(
        !p50[0].is_empty(),
        "a busy bucket still has its percentiles"
    );
}

#[test]
fn runs_stopped_at_their_caps_stay_within_the_estimate() {
    let hung = r#"
duration = "300s"
[dependency]
servers = "unlimited"
service_time = "1ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100000 }
deadline = "1000s"
[[fleets.layers]]
max_attempts = 2
[[outages]]
start = "0s"
end = "1ms"
mode = { kind = "blackhole" }
"#;
    let orphans = r#"
duration = "300s"
[dependency]
servers = 1
service_time = "1h"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
[[fleets.layers]]
max_attempts = "unlimited"
attempt_timeout = "1ms"
"#;
    let queue = format!("{OVERLOADED}[[fleets.layers]]\nmax_attempts = 3\n");
    for (name, text) in [
        ("hung", hung),
        ("orphans", orphans),
        ("queue", queue.as_str()),
    ] {
        let sets = ["limits.max_in_flight=100000"];
        let estimate = memory(&crate::tests::common::scenario(text, &sets).scenario).total();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("s.toml"), text).unwrap();
        let args = [
            "run",
            "s.toml",
            "--no-plots",
            "-q",
            "--out",
            "out",
            "--set",
            sets[0],
        ];
        let Some((peak, out)) = peak_rss(d.path(), &args) else {
            return;
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("run stopped early"), "{name}: {err}");
        // The binary, its libraries and its output buffers: 16 MB.
        assert!(
            peak <= estimate + (16 << 20),
            "{name}: peak {peak} B, estimate {estimate} B"
        );
    }
}

#[test]
fn a_request_of_more_calls_than_the_estimate_can_count_is_refused_before_it_runs() {
    // 16 layers each hedging 16 copies at once over a slow dependency: one request
    // would hold 16^16 calls and attempts. The estimate saturates (it used to wrap
    // around to a few hundred bytes, pass, and the run aborted out of memory).
    let layer = "[[fleets.layers]]\nmax_attempts = 1\nhedging = { max_attempts = 16 }\n";
    let text = format!(
        "duration = \"1s\"\n[dependency]\nservers = \"unlimited\"\nservice_time = \"10s\"\n\
         [[fleets]]\nname = \"f\"\narrival = {{ kind = \"poisson\", rate = 10 }}\n{}",
        layer.repeat(16)
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("tower.toml"), text).unwrap();
    for args in [
        &["validate", "tower.toml"][..],
        &["run", "tower.toml", "-q"],
    ] {
        let out = capped(d.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(
                "scenario 'tower.toml': fleets[0]: one request could hold 2^64 or more calls and attempts at once"
            ),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("even with limits.max_in_flight = 1"),
            "{args:?}: {err}"
        );
        assert!(!d.path().join("output").exists(), "nothing is written");
    }
}
