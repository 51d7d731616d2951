//! The planner's columns against exact counts and closed forms: success latency and
//! time to failure kept apart, collapse (`collapsed_fraction`, `collapse_start_s`) and
//! recovery by queue length (`recovery_queue_s`).

use crate::common::{col, run};

fn cell(r: &retrysim::run::RunResult, name: &str) -> Option<f64> {
    r.summary.get(name).and_then(|c| c.as_f64())
}

#[test]
fn the_latency_of_all_completions_is_the_mix_of_successes_and_failures() {
    // Errors, retries and a queue: both kinds of completion, with varied latencies.
    let r = run(
        r#"
duration = "60s"
[dependency]
servers = 4
queue_limit = 8
error_rate = 0.3
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 300 }
[[fleets.layers]]
max_attempts = 2
backoff = { kind = "fixed", delay = "20ms" }
"#,
        &[],
    );
    let (s, f) = (col(&r, "succeeded"), col(&r, "failed"));
    assert!(s > 1000.0 && f > 1000.0, "{s} successes, {f} failures");
    let mix =
        (s * col(&r, "success_latency_mean_ms") + f * col(&r, "failure_latency_mean_ms")) / (s + f);
    let all = col(&r, "latency_mean_ms");
    assert!((mix - all).abs() < 1e-9 * all, "mix {mix} vs all {all}");
    // A failure here is two errors and a 20 ms backoff; a success needs at least one
    // service: time to failure is the longer.
    assert!(col(&r, "failure_latency_p50_ms") > col(&r, "success_latency_p50_ms"));
    for name in [
        "success_latency_p50_ms",
        "success_latency_p90_ms",
        "success_latency_p99_ms",
    ] {
        assert!(
            col(&r, name) <= col(&r, "success_latency_p999_ms"),
            "{name}"
        );
    }
}

#[test]
fn during_a_blackhole_every_failure_takes_exactly_its_timeouts() {
    // No answer ever: each request times out twice at 100 ms with a 50 ms wait between,
    // so it fails at exactly 250 ms; there is no success latency at all.
    let r = run(
        r#"
duration = "20s"
drain = "5s"
[dependency]
servers = 10
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 50 }
[[fleets.layers]]
max_attempts = 2
attempt_timeout = "100ms"
backoff = { kind = "fixed", delay = "50ms" }
[[outages]]
start = "0s"
end = "30s"
mode = { kind = "blackhole" }
"#,
        &[],
    );
    assert_eq!(col(&r, "succeeded"), 0.0);
    for name in [
        "failure_latency_mean_ms",
        "failure_latency_p50_ms",
        "failure_latency_p99_ms",
    ] {
        let v = col(&r, name);
        assert!((v - 250.0).abs() < 0.3, "{name} = {v}");
    }
    for name in [
        "success_latency_mean_ms",
        "success_latency_p50_ms",
        "wait_mean_ms",
    ] {
        assert_eq!(cell(&r, name), None, "{name} should be empty");
    }
    // Swallowed attempts are neither admitted nor blocked.
    assert_eq!(col(&r, "admitted") + col(&r, "blocked"), 0.0);
}

#[test]
fn a_hard_outage_without_retries_is_collapsed_for_exactly_its_span() {
    // Every attempt in [10 s, 20 s) fails after 1 ms; from the trigger to the end
    // (20 s of series) the 10 outage buckets are collapsed, the others are not.
    let r = run(
        r#"
duration = "30s"
drain = "2s"
[dependency]
servers = 10
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 200 }
[[outages]]
start = "10s"
end = "20s"
mode = { kind = "fail", after = "1ms" }
"#,
        &[],
    );
    assert_eq!(col(&r, "collapsed_fraction"), 0.5);
    assert_eq!(col(&r, "collapse_start_s"), 10.0);
    // Without a trigger there is nothing to measure from.
    let calm = run(
        r#"
duration = "10s"
[dependency]
servers = 10
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 200 }
"#,
        &[],
    );
    assert_eq!(cell(&calm, "collapsed_fraction"), None);
    assert_eq!(cell(&calm, "recovery_queue_s"), None);
}

/// 10 servers at exactly 10 ms (1000/s) take 800/s; a brownout to 1 server for 5 s
/// queues about 3500 attempts, which drain at the spare 200/s. The backlog the servers
/// clear within the 1 s attempt timeout is 10 × 1 s / 10 ms = 1000, reached about
/// (3500 − 1000) / 200 = 12.5 s after the brownout.
fn brownout(discipline: &str) -> retrysim::run::RunResult {
    run(
        &format!(
            r#"
duration = "60s"
drain = "1s"
recovery_hold = 3
[dependency]
servers = 10
queue_limit = "unlimited"
discipline = "{discipline}"
service_time = {{ kind = "deterministic", value = "10ms" }}
[[fleets]]
name = "a"
arrival = {{ kind = "poisson", rate = 800 }}
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "1s"
[[outages]]
start = "10s"
end = "15s"
mode = {{ kind = "capacity", servers = 1 }}
"#
        ),
        &[],
    )
}

#[test]
fn recovery_by_queue_length_sees_the_backlog_that_success_rate_misses() {
    // LIFO serves the newest first: success is back at once while the backlog drains.
    let lifo = brownout("lifo");
    let q = col(&lifo, "recovery_queue_s");
    assert!((11.0..=14.5).contains(&q), "recovery_queue_s = {q}");
    let s = col(&lifo, "recovery_time_s");
    assert!(s < 3.0, "recovery_time_s = {s}");
    // FIFO makes the newest wait behind the backlog: both read the drain.
    let fifo = brownout("fifo");
    let q = col(&fifo, "recovery_queue_s");
    assert!((11.0..=14.5).contains(&q), "FIFO recovery_queue_s = {q}");
    assert!(col(&fifo, "recovery_time_s") > 8.0);
}

#[test]
fn every_seed_written_fits_a_signed_64_bit_integer() {
    // The largest seed a scenario can hold (TOML integers are i64) and its derived
    // replication seeds: all load as int64 in pandas, polars, R and Arrow.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("s.toml"),
        r#"
seed = 9223372036854775807
replications = 50
duration = "1s"
[dependency]
servers = 1
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 5 }
"#,
    )
    .unwrap();
    crate::common::ok(
        d.path(),
        &["run", "s.toml", "--no-plots", "-q", "--out", "o"],
    );
    let text = std::fs::read_to_string(d.path().join("o/summary.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "seed")
        .unwrap();
    let seeds: Vec<String> = r.records().map(|x| x.unwrap()[at].to_string()).collect();
    assert_eq!(seeds.len(), 50);
    assert_eq!(seeds[0], i64::MAX.to_string());
    for s in &seeds {
        s.parse::<i64>()
            .unwrap_or_else(|_| panic!("seed {s} is not an int64"));
    }
    // --seed above it is refused, naming the limit.
    let o = crate::common::retrysim(
        d.path(),
        &["run", "s.toml", "--seed", "9223372036854775808"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("9223372036854775807"));
}
