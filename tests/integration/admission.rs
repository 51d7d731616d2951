//! Server-side admission control (issue 41): the limiters' bounds measured over whole
//! runs, `reject_cost` against the servers it takes, the computed Retry-After as the
//! clients obey it, and bad input.

use std::process::Command;

use retrysim::engine::time::{MILLISECOND, SECOND};
use retrysim::metrics::ordinal::End;
use retrysim::model::outcome::Class;

use crate::common::{count, run};

/// One fleet of `rate`/s poisson requests (one attempt each unless `layer` says more)
/// against a dependency with `dep` appended to its table.
fn scenario(dep: &str, rate: u32, layer: &str) -> String {
    format!(
        r#"
duration = "60s"
drain = "5s"
bucket = "1s"
[dependency]
servers = 1000
service_time = "1ms"
{dep}
[[fleets]]
name = "web"
arrival = {{ kind = "poisson", rate = {rate}, clients = 1000 }}
[[fleets.layers]]
name = "client"
{layer}
"#
    )
}

const ONE_ATTEMPT: &str = "max_attempts = 1";

#[test]
fn a_token_bucket_admits_at_most_max_tokens_plus_rate_times_t_in_any_aligned_interval() {
    // 50 tokens, 10 per 100 ms (100/s), offered 300/s: overloaded all the time.
    let r = run(
        &scenario(
            r#"admission = { kind = "token_bucket", max_tokens = 50, tokens_per_fill = 10, fill_interval = "100ms" }"#,
            300,
            ONE_ATTEMPT,
        ),
        &[],
    );
    let c = r.metrics.admission.as_ref().expect("admission counts");
    let s = &c.admitted_series;
    assert_eq!(s.len(), 60);
    // Intervals of k whole buckets start on a fill instant: at most max + rate·T.
    for k in 1..=10 {
        for i in 0..=s.len() - k {
            let got: u64 = s[i..i + k].iter().sum();
            assert!(got <= 50 + 100 * k as u64, "{k} s from {i} s: {got}");
        }
    }
    // Tight: the first second has the full bucket and the 9 fills after 0 (the
    // bucket starts full, so the timer's first fill is at 100 ms), every later second
    // exactly the refill; a window from 0 admits max + rate·T − 10.
    assert_eq!(s[0], 50 + 90);
    assert!(s[1..].iter().all(|&n| n == 100), "{s:?}");
    let t = &r.metrics.totals;
    assert_eq!(
        count(&r, "admission_rejected"),
        c.total_limited(),
        "summary column"
    );
    assert_eq!(count(&r, "rate_limited"), c.total_limited());
    assert_eq!(
        count(&r, "rejected"),
        0,
        "a limiter's refusal is not a full queue's"
    );
    assert_eq!(t.logical, c.total_admitted() + c.total_limited());
}

#[test]
fn a_fixed_window_admits_exactly_its_limit_per_window_under_overload() {
    let r = run(
        &scenario(
            r#"admission = { kind = "fixed_window", limit = 37, window = "500ms" }"#,
            400,
            ONE_ATTEMPT,
        ),
        &["bucket=\"500ms\""],
    );
    let s = &r.metrics.admission.as_ref().unwrap().admitted_series;
    assert_eq!(s.len(), 120);
    assert!(s.iter().all(|&n| n == 37), "{s:?}");
}

/// With `reject_cost = c`, `s` servers spend `r·c` of their time rejecting: the
/// server time of a run is `served · service + rejections · c`, all of `s · T` when
/// the servers never idle (the queue is always full here). Measured over the series
/// `[5 s, 60 s)`, the identity holds up to what is in progress at its two ends: at
/// most `s` services of 100 ms each end, 2 server-seconds of 550 (0.4%).
#[test]
fn with_reject_cost_c_a_tier_rejecting_at_rate_r_has_s_minus_r_c_servers_for_work() {
    let text = r#"
duration = "60s"
drain = "1s"
bucket = "1s"
[dependency]
servers = 10
queue_limit = 20
service_time = "100ms"
reject_cost = "2ms"
admission = { kind = "fixed_window", limit = 100, window = "100ms" }
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 2000, clients = 1000 }
[[fleets.layers]]
name = "client"
max_attempts = 1
"#;
    let r = run(text, &[]);
    let b = &r.metrics.buckets[5..];
    let adm = r.metrics.admission.as_ref().unwrap();
    let served: u64 = b.iter().map(|b| b.served).sum();
    let full: u64 = b.iter().map(|b| b.blocked).sum();
    let limited: u64 = adm.limited_series[5..].iter().sum();
    let secs = b.len() as f64;
    let (s, svc, c) = (10.0, 0.1, 0.002);
    let rate = (full + limited) as f64 / secs;
    let work = served as f64 / secs * svc; // servers busy with work
    let expected = s - rate * c;
    assert!(rate > 1500.0, "rejections/s: {rate}");
    assert!(
        (work - expected).abs() <= 2.0 * s * svc / secs,
        "work servers {work:.3}, expected s − r·c = {expected:.3} (r = {rate:.1}/s)"
    );
    // Free rejections would leave all 10 servers to the work.
    assert!(expected < 7.0, "{expected}");
}

#[test]
fn free_rejections_take_no_server() {
    let r = run(
        &scenario(
            r#"admission = { kind = "fixed_window", limit = 10, window = "1s" }"#,
            500,
            ONE_ATTEMPT,
        ),
        &[],
    );
    assert_eq!(r.metrics.totals.served, 600);
}

/// A burst of 20 at 1 s against GCRA 1/s, no burst: the first passes and every other
/// is told Retry-After 1 s (the TAT stays put on a rejection). Clients that wait it
/// come back all at 2 s, then the rest at 3 s.
fn gcra_burst(extra: &str, layer: &str) -> String {
    format!(
        r#"
duration = "10s"
herd_bucket = "10ms"
[dependency]
servers = 100
service_time = "1ms"
admission = {{ kind = "gcra", rate = 1, period = "1s", max_burst = 0{extra} }}
[[fleets]]
name = "web"
arrival = {{ kind = "burst", at = "1s", count = 20, clients = 20 }}
[[fleets.layers]]
name = "client"
max_attempts = 3
backoff = {{ kind = "none" }}
{layer}
"#
    )
}

/// Herd arrivals at `t` (ns) of a run's herd window.
fn herd_at(r: &retrysim::run::RunResult, t: u64) -> u64 {
    let (start, width, counts) = r.metrics.herd.as_ref().expect("herd window");
    counts[((t - start) / width) as usize]
}

#[test]
fn clients_wait_the_computed_retry_after_in_whole_seconds() {
    let r = run(&gcra_burst("", ""), &[]);
    assert_eq!(herd_at(&r, SECOND), 20);
    assert_eq!(herd_at(&r, 2 * SECOND), 19);
    assert_eq!(herd_at(&r, 3 * SECOND), 18);
    assert_eq!(count(&r, "succeeded"), 3);
    // Counted per refused attempt, where it arises, as `rejected` counts a full queue.
    assert_eq!(count(&r, "rate_limited"), 17 + 18 + 19);
    assert_eq!(count(&r, "admission_rejected"), 17 + 18 + 19);
    // attempts_by_ordinal: 19 first attempts, 18 second, 17 third ended rate_limited.
    let rl = End::Class(Class::RateLimited);
    let o = &r.metrics.ordinals;
    assert_eq!(
        [o.count(0, 1, rl), o.count(0, 2, rl), o.count(0, 3, rl)],
        [19, 18, 17]
    );
    assert_eq!(o.count(0, 1, End::Cancelled), 0);
    // Without a Retry-After (or ignoring it) they retry at once.
    for sets in [
        &["dependency.admission.retry_after=\"none\""][..],
        &["fleets.0.layers.0.respect_retry_after=false"],
    ] {
        let r = run(&gcra_burst("", ""), sets);
        assert_eq!(herd_at(&r, SECOND), 20 + 19 + 19, "{sets:?}");
        assert_eq!(count(&r, "succeeded"), 1, "{sets:?}");
    }
}

#[test]
fn a_limiters_429_is_not_retried_by_rejected_5xx_and_its_503_is() {
    let layer = r#"retry_on = ["rejected_5xx"]"#;
    let r = run(&gcra_burst("", layer), &[]);
    assert_eq!(r.metrics.totals.attempts, 20, "429: no retries");
    let r = run(&gcra_burst(", status = 503", layer), &[]);
    assert_eq!(r.metrics.totals.attempts, 20 + 19 + 18, "503: retried");
    // `rejected` retries a limiter's refusal as it does a full queue's.
    let r = run(&gcra_burst("", r#"retry_on = ["rejected"]"#), &[]);
    assert_eq!(r.metrics.totals.attempts, 20 + 19 + 18);
    let r = run(&gcra_burst("", r#"retry_on = ["error"]"#), &[]);
    assert_eq!(r.metrics.totals.attempts, 20);
}

#[test]
fn columns_appear_only_with_admission() {
    let with = run(&gcra_burst("", ""), &[]);
    assert!(with.summary.get("admission_rejected").is_some());
    let without = run(&scenario("", 10, ONE_ATTEMPT), &[]);
    assert!(without.summary.get("admission_rejected").is_none());
    assert!(without.summary.get("rate_limited").is_none());
}

fn bad(name: &str, admission: &str, expect: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(format!("{name}.toml"));
    std::fs::write(&path, scenario(admission, 10, ONE_ATTEMPT)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(err.contains(&format!("{name}.toml")), "{name}: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: expected {e:?} in: {err}");
    }
}

#[test]
fn bad_admission_tables_are_refused_naming_the_field_and_what_is_allowed() {
    bad(
        "unknown_kind",
        r#"admission = { kind = "sliding_log", limit = 3 }"#,
        &["admission", "token_bucket", "gcra", "fixed_window"],
    );
    bad(
        "no_tokens",
        r#"admission = { kind = "token_bucket", fill_interval = "1s" }"#,
        &["dependency.admission.max_tokens", "is required"],
    );
    bad(
        "fast_fill",
        r#"admission = { kind = "token_bucket", max_tokens = 5, fill_interval = "10ms" }"#,
        &[
            "dependency.admission.fill_interval",
            "at least 50ms",
            "10ms",
        ],
    );
    bad(
        "status",
        r#"admission = { kind = "fixed_window", limit = 5, window = "1s", status = 404 }"#,
        &[
            "dependency.admission.status",
            "must be 429 or 503 (found 404)",
        ],
    );
    bad(
        "no_rate",
        r#"admission = { kind = "gcra", period = "1s" }"#,
        &["dependency.admission.rate", "is required"],
    );
    bad(
        "zero_rate",
        r#"admission = { kind = "gcra", rate = 0 }"#,
        &["dependency.admission.rate", "at least 1"],
    );
    bad(
        "huge_burst",
        r#"admission = { kind = "gcra", rate = 1, max_burst = 100000000 }"#,
        &["dependency.admission.max_burst", "at most"],
    );
    bad(
        "retry_after",
        r#"admission = { kind = "gcra", rate = 1, retry_after = "sometimes" }"#,
        &["retry_after", "computed", "none"],
    );
    bad(
        "unknown_key",
        r#"admission = { kind = "fixed_window", limit = 5, window = "1s", burst = 3 }"#,
        &["burst"],
    );
    bad(
        "zero_window",
        r#"admission = { kind = "fixed_window", limit = 5, window = "0s" }"#,
        &["dependency.admission.window"],
    );
    bad("negative_cost", r#"reject_cost = "-1ms""#, &["reject_cost"]);
}

#[test]
fn an_occ_record_has_no_admission() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("occ.toml");
    let text = r#"
duration = "10s"
[dependency]
kind = "occ"
admission = { kind = "fixed_window", limit = 5, window = "1s" }
[[fleets]]
name = "w"
arrival = { kind = "poisson", rate = 10 }
writes = 1.0
[[fleets.layers]]
max_attempts = 2
"#;
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("dependency.admission") && err.contains("applies only to kind = \"queue\""),
        "{err}"
    );
}

#[test]
fn a_graph_tier_limits_its_own_callers_and_has_its_columns() {
    let text = r#"
duration = "20s"
[[services]]
name = "api"
servers = 100
service_time = "1ms"
[[services.calls]]
to = "db"
[[services.calls.layers]]
max_attempts = 1
[[services]]
name = "db"
servers = 100
service_time = "1ms"
admission = { kind = "fixed_window", limit = 50, window = "1s" }
[[fleets]]
name = "web"
target = "api"
arrival = { kind = "poisson", rate = 100, clients = 100 }
[[fleets.layers]]
max_attempts = 1
"#;
    let r = run(text, &[]);
    let c = r.metrics.admission.as_ref().unwrap();
    assert_eq!(c.admitted[0] + c.limited[0], 0, "api has no limiter");
    assert_eq!(c.admitted[1], 20 * 50);
    assert_eq!(count(&r, "admission_db_admitted"), 1000);
    assert_eq!(count(&r, "admission_db_rejected"), c.limited[1]);
    assert!(r.summary.get("admission_api_rejected").is_none());
    let _ = MILLISECOND;
}
