//! The planner's columns against exact counts and closed forms: success latency and
//! time to failure kept apart, collapse (`collapsed_fraction`, `collapse_start_s`) and
//! recovery by queue length (`recovery_queue_s`).

use crate::tests::common::{col, run};

fn cell(r: &crate::run::RunResult, name: &str) -> Option<f64> {
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
fn brownout(discipline: &str) -> crate::run::RunResult {
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
    crate::tests::common::ok(
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
    let o = crate::tests::common::retrysim(
        d.path(),
        &["run", "s.toml", "--seed", "9223372036854775808"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("9223372036854775807"));
}

#[test]
fn mm1_success_latency_percentiles_are_those_of_an_exponential_sojourn() {
    // M/M/1 FIFO, λ = 50/s, μ = 100/s: the sojourn is exponential with rate μ − λ, so its
    // q-quantile is −ln(1 − q)/(μ − λ). 4 replications of 400 s (20,000 requests each);
    // accept 5 standard errors plus 2% (the histogram keeps 3 significant digits).
    let text = r#"
duration = "400s"
[dependency]
servers = 1
queue_limit = "unlimited"
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "q"
arrival = { kind = "poisson", rate = 50 }
"#;
    let rate = 50.0;
    for (name, q) in [
        ("success_latency_p50_ms", 0.5),
        ("success_latency_p90_ms", 0.9),
        ("success_latency_p99_ms", 0.99),
    ] {
        let xs: Vec<f64> = (0..4)
            .map(|rep| col(&crate::tests::common::run_rep(text, &[], rep), name))
            .collect();
        let (m, se) = crate::tests::common::mean_se(&xs);
        let expect = -(1.0f64 - q).ln() / rate * 1e3;
        assert!(
            (m - expect).abs() < 5.0 * se + 0.02 * expect,
            "{name}: {m} ± {se} vs {expect} ms"
        );
    }
    // The mean: 1/(μ − λ) = 20 ms, and nothing fails.
    let r = run(text, &[]);
    let mean = col(&r, "success_latency_mean_ms");
    assert!((mean - 20.0).abs() < 1.0, "mean sojourn {mean}");
    assert_eq!(cell(&r, "failure_latency_mean_ms"), None);
}

/// A numeric column of `timeseries.csv` text, bucket by bucket (`None` when empty).
fn series(text: &str, name: &str) -> Vec<Option<f64>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let at = r.headers().unwrap().iter().position(|h| h == name).unwrap();
    r.records()
        .map(|x| x.unwrap()[at].parse::<f64>().ok())
        .collect()
}

#[test]
fn the_per_bucket_columns_add_up_to_the_summary() {
    // 1 s buckets over 60 s: the buckets' mean in-system level is the run's, the
    // blocked attempts per bucket add up to the series' blocked attempts, and during a
    // blackhole with 100 ms timeouts every bucket's time to failure is exactly 100 ms.
    let r = run(
        r#"
duration = "60s"
drain = "0s"
[dependency]
servers = 3
queue_limit = 2
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "a"
arrival = { kind = "poisson", rate = 250 }
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "100ms"
[[outages]]
start = "40s"
end = "50s"
mode = { kind = "blackhole" }
"#,
        &[],
    );
    let text = crate::export::csv::timeseries_rows(&r, Some(3));
    let header = crate::metrics::columns::TIMESERIES_COLUMNS.join(",");
    let text = format!("{header}\n{text}");
    let l: Vec<f64> = series(&text, "in_system_mean")
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(l.len(), 60);
    let mean = l.iter().sum::<f64>() / 60.0;
    let whole = col(&r, "in_system_mean");
    assert!((mean - whole).abs() < 1e-9 * whole, "{mean} vs {whole}");
    // Blocked per bucket = blocking_fraction × inbound (1 s buckets: inbound is a count).
    let blocked: f64 = series(&text, "blocking_fraction")
        .iter()
        .zip(series(&text, "inbound"))
        .map(|(f, n)| f.unwrap_or(0.0) * n.unwrap_or(0.0))
        .sum();
    let in_series: u64 = r.metrics.buckets.iter().map(|b| b.blocked).sum();
    assert!(
        (blocked - in_series as f64).abs() < 1e-6,
        "{blocked} vs {in_series}"
    );
    assert!(in_series > 100, "the queue blocks: {in_series}");
    let ttf = series(&text, "failure_latency_p50_ms");
    for (t, v) in ttf.iter().enumerate().skip(41).take(9) {
        assert_eq!(*v, Some(100.0), "bucket {t}");
    }
    // Inside the blackhole nothing succeeds: no success latency in those buckets.
    let ok = series(&text, "success_latency_p50_ms");
    assert!(ok[41..50].iter().all(Option::is_none));
    assert!(ok[..40].iter().all(Option::is_some));
}
