//! Server-side admission control (issue 41): the limiters' bounds measured over whole
//! runs, `reject_cost` against the servers it takes, the computed Retry-After as the
//! clients obey it, and bad input.

use std::process::Command;

use crate::engine::time::{MILLISECOND, SECOND};
use crate::metrics::ordinal::End;
use crate::model::outcome::Class;

use crate::tests::common::{col, count, run, run_rep};

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
fn herd_at(r: &crate::run::RunResult, t: u64) -> u64 {
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
    let out = Command::new(crate::tests::common::bin())
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
    let out = Command::new(crate::tests::common::bin())
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

/// A leaky bucket (nginx `limit_req`) of `rate`/s and `burst` on a dependency with
/// `extra` appended to its admission table.
fn leaky(rate: u32, burst: u32, extra: &str) -> String {
    format!(r#"admission = {{ kind = "leaky_bucket", rate = {rate}, burst = {burst}{extra} }}"#)
}

/// Prefix sums of `s`: `p[j] − p[i]` is the sum of `s[i..j]`.
fn prefix(s: &[u64]) -> Vec<u64> {
    let mut p = vec![0];
    for &x in s {
        p.push(p.last().unwrap() + x);
    }
    p
}

/// Offered 80/s against 50/s with a burst of 20. The excess (milli-requests) rises
/// 1000 per admission and drains `rate·ms/1000` (truncated: never more than
/// `rate·T`) and stays within `[0, burst·1000]`, so over any interval `T` the admitted
/// attempts are at most `burst + 1 + rate·(T + 1 ms)` (the first one's own 1000, the
/// millisecond truncation). Delayed by `excess / rate`, they reach the servers at
/// most one per `1/rate`: the delay shapes them to the rate.
#[test]
fn a_leaky_bucket_admits_at_most_burst_plus_rate_times_t_and_delays_the_rest_to_the_rate() {
    let text = scenario(&leaky(50, 20, ""), 80, ONE_ATTEMPT);
    let r = run(&text, &["bucket=\"100ms\""]);
    let c = r.metrics.admission.as_ref().expect("admission counts");
    let p = prefix(&c.admitted_series);
    let n = c.admitted_series.len();
    assert_eq!(n, 600);
    for k in 1..=100 {
        let t = k as f64 * 0.1;
        let bound = 20.0 + 1.0 + 50.0 * (t + 0.001);
        for i in 0..=n - k {
            let got = (p[i + k] - p[i]) as f64;
            assert!(got <= bound, "{t} s from bucket {i}: {got} > {bound}");
        }
    }
    // Overloaded throughout: a second of admissions is the rate, give or take the
    // burst's refill.
    assert!(c.total_limited() > 1000, "{}", c.total_limited());
    assert_eq!(
        r.metrics.totals.logical,
        c.total_admitted() + c.total_limited()
    );
    // Every admission but those at an empty bucket waits: the delay is excess/rate,
    // at most burst/rate = 400 ms.
    let delayed = count(&r, "admission_delayed");
    let mean = col(&r, "admission_delay_mean_ms");
    assert!(delayed > c.total_admitted() * 9 / 10, "{delayed}");
    assert!(mean > 200.0 && mean <= 400.0, "mean delay {mean} ms");
    // At the servers: at most rate·T + 1 in any interval of whole buckets (the
    // delays are whole ms, so 1 more per ms of truncation at either end).
    let arrived: Vec<u64> = r.metrics.buckets.iter().map(|b| b.admitted).collect();
    let q = prefix(&arrived);
    for k in 1..=100 {
        let bound = 50.0 * k as f64 * 0.1 + 2.0;
        for i in 0..=arrived.len() - k {
            let got = (q[i + k] - q[i]) as f64;
            assert!(
                got <= bound,
                "servers: {k} buckets from {i}: {got} > {bound}"
            );
        }
    }
    // What waited showed in the latency: the median is the delay, not the 1 ms.
    assert!(col(&r, "latency_p50_ms") > 100.0);
    assert_eq!(r.metrics.totals.served, c.total_admitted());
}

/// VA4 through the whole model: seven requests at once against rate=1r/s burst=5
/// (`layer` appended to the client's layer, `fleet` to its fleet).
fn va4(extra: &str, layer: &str, fleet: &str) -> String {
    format!(
        r#"
duration = "10s"
drain = "10s"
bucket = "1s"
[dependency]
servers = 10
service_time = "1ms"
{}
[[fleets]]
name = "web"
arrival = {{ kind = "burst", at = "1s", count = 7 }}
{fleet}
[[fleets.layers]]
name = "client"
max_attempts = 1
{layer}
"#,
        leaky(1, 5, extra)
    )
}

#[test]
fn seven_at_once_at_1r_s_burst_5_one_goes_on_five_wait_1_to_5_s_the_seventh_gets_503() {
    let r = run(&va4("", "", ""), &[]);
    let reached: Vec<u64> = r.metrics.buckets.iter().map(|b| b.admitted).collect();
    assert_eq!(
        &reached[..8],
        &[0, 1, 1, 1, 1, 1, 1, 0],
        "one a second from 1 s"
    );
    assert_eq!(count(&r, "succeeded"), 6);
    assert_eq!(count(&r, "rate_limited"), 1);
    assert_eq!(count(&r, "admission_delayed"), 5);
    assert_eq!(col(&r, "admission_delay_mean_ms"), 3000.0);
    // 503: retried by `rejected_5xx`, unlike the 429 of the other kinds' default.
    let r = run(
        &va4("", r#"retry_on = ["rejected_5xx"]"#, ""),
        &["fleets.0.layers.0.max_attempts=2"],
    );
    assert_eq!(r.metrics.totals.attempts, 8);
    // nodelay: six at once, the seventh rejected.
    let r = run(&va4(r#", delay = "nodelay""#, "", ""), &[]);
    let reached: Vec<u64> = r.metrics.buckets.iter().map(|b| b.admitted).collect();
    assert_eq!(&reached[..3], &[0, 6, 0]);
    assert_eq!(count(&r, "admission_delayed"), 0);
    assert!(r
        .summary
        .get("admission_delay_mean_ms")
        .unwrap()
        .as_f64()
        .is_none());
    assert_eq!(count(&r, "rate_limited"), 1);
}

/// A delayed attempt is still on its way to the servers: a timeout that cancels, or
/// a hedging call's decision, cancels it there, and a propagated deadline that passes
/// while it waits drops it as it comes out; either way it never takes a server. VA4's
/// attempts wait 1..5 s; cut 2.5 s after they were sent, the three waiting 3, 4 and
/// 5 s never reach the servers. A plain deadline cancels nothing, here as anywhere: the
/// orphans are served.
#[test]
fn an_attempt_cancelled_while_delayed_never_reaches_the_servers() {
    for (layer, fleet, reached_all) in [
        (
            "attempt_timeout = \"2500ms\"\ncancel_on_timeout = true",
            "",
            false,
        ),
        (
            "",
            "deadline = \"2500ms\"\npropagate_deadline = true",
            false,
        ),
        ("", "deadline = \"2500ms\"", true),
    ] {
        let r = run(&va4("", layer, fleet), &[]);
        let what = format!("{layer} {fleet}");
        let reached: Vec<u64> = r.metrics.buckets.iter().map(|b| b.admitted).collect();
        let want: &[u64] = if reached_all {
            &[0, 1, 1, 1, 1, 1, 1, 0]
        } else {
            &[0, 1, 1, 1, 0, 0, 0, 0]
        };
        assert_eq!(&reached[..8], want, "{what}");
        assert_eq!(r.metrics.totals.served, want.iter().sum::<u64>(), "{what}");
        assert_eq!(count(&r, "succeeded"), 3, "{what}");
        assert_eq!(count(&r, "admission_delayed"), 5, "{what}");
        assert_eq!(count(&r, "failed"), 4, "{what}");
    }
    // Hedging, a second copy 100 ms after the first, two requests at 1 s: the first
    // goes on at once; the second's first copy waits 1 s (excess 1000), its second,
    // sent at 1.1 s, 1.9 s (excess 1000 − 100 + 1000). The first copy wins at 2 s and
    // the second is cancelled with the call (cancel_losers) before it reaches them.
    let r = run(
        &va4(
            "",
            r#"hedging = { max_attempts = 2, delay = "100ms", cancel_losers = true }"#,
            "",
        ),
        &["fleets.0.arrival.count=2"],
    );
    assert_eq!(r.metrics.totals.attempts, 3);
    assert_eq!(count(&r, "admission_delayed"), 2);
    assert_eq!(col(&r, "admission_delay_mean_ms"), 1450.0);
    let reached: Vec<u64> = r.metrics.buckets.iter().map(|b| b.admitted).collect();
    assert_eq!(
        &reached[..5],
        &[0, 1, 1, 0, 0],
        "the second copy never gets there"
    );
    assert_eq!(r.metrics.totals.served, 2);
    assert_eq!(count(&r, "succeeded"), 2);
}

/// Probabilistic admission under steady Poisson overload, `λ = 400/s` against
/// `capacity c = 100/s`, window 1 s, measured over `T = 98 s` after the first two
/// windows (the first has no previous window and admits more). Each attempt is
/// admitted with probability `p_i ≈ c/λ`; given the estimates, the admitted count is a
/// sum of independent Bernoulli draws, whose variance is `Σ p_i(1 − p_i) ≈
/// cT(1 − c/λ)`: σ = √(9800 · 0.75) ≈ 86. The estimate's own noise nearly cancels
/// over successive windows (a window counted high lowers `p` in the next), and
/// `E[1/n] > 1/E[n]` biases it by about `1/(λ·window)` relative (0.25%, 25 of 9800).
/// So `|admitted − cT| ≤ 4σ + 2·cT/(λ·window)`: 394, 4%. And its per-window counts
/// spread binomially: their variance is within a factor of two of `c(1 − c/λ)`.
#[test]
fn probabilistic_admission_holds_the_admitted_rate_at_capacity_within_its_binomial_error() {
    let (c, lambda, w) = (100.0, 400.0, 1.0);
    let text = format!(
        r#"
duration = "100s"
drain = "1s"
bucket = "1s"
[dependency]
servers = 1000
service_time = "1ms"
admission = {{ kind = "probabilistic", capacity = {c}, window = "1s" }}
[[fleets]]
name = "web"
arrival = {{ kind = "poisson", rate = {lambda}, clients = 1000 }}
[[fleets.layers]]
max_attempts = 1
"#
    );
    let mut means = Vec::new();
    for rep in 0..4 {
        let r = run_rep(&text, &[], rep);
        let s = &r.metrics.admission.as_ref().unwrap().admitted_series[2..];
        let t = s.len() as f64;
        let got = s.iter().sum::<u64>() as f64;
        let sigma = (c * t * (1.0 - c / lambda)).sqrt();
        let bound = 4.0 * sigma + 2.0 * c * t / (lambda * w);
        assert!(
            (got - c * t).abs() <= bound,
            "rep {rep}: admitted {got} in {t} s, want {} ± {bound:.0}",
            c * t
        );
        let m = got / t;
        let var = s.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (t - 1.0);
        let binomial = c * w * (1.0 - c / lambda);
        assert!(
            var > binomial / 2.0 && var < binomial * 2.0,
            "rep {rep}: per-window variance {var:.1}, binomial {binomial:.1}"
        );
        means.push(m);
        assert_eq!(
            count(&r, "rate_limited"),
            r.metrics.admission.as_ref().unwrap().total_limited()
        );
    }
    // Four times the offered load admits the same rate.
    let r = run(&text.replace("rate = 400", "rate = 1600"), &[]);
    let s = &r.metrics.admission.as_ref().unwrap().admitted_series[2..];
    let got = s.iter().sum::<u64>() as f64 / s.len() as f64;
    assert!((got - c).abs() < 5.0, "at 1600/s: {got}/s");
    eprintln!("means {means:?}");
}

/// The bound of a token bucket over every interval, not only those starting on a
/// fill: 50 tokens, 10 per 100 ms, offered 300/s, counted per 10 ms. An interval of
/// `T` holds at most `ceil(T / fill)` fills, so it admits at most `max_tokens +
/// tokens_per_fill · ceil(T / fill)`: `max_tokens + rate·T` when `T` is whole fills.
#[test]
fn a_token_bucket_admits_at_most_max_tokens_plus_rate_times_t_in_every_sliding_interval() {
    let r = run(
        &scenario(
            r#"admission = { kind = "token_bucket", max_tokens = 50, tokens_per_fill = 10, fill_interval = "100ms" }"#,
            300,
            ONE_ATTEMPT,
        ),
        &["bucket=\"10ms\"", "duration=\"20s\""],
    );
    let s = &r.metrics.admission.as_ref().unwrap().admitted_series;
    assert_eq!(s.len(), 2000);
    let p = prefix(s);
    for k in 1..=300 {
        let fills = (k as u64).div_ceil(10);
        let bound = 50 + 10 * fills;
        let mut most = 0;
        for i in 0..=s.len() - k {
            let got = p[i + k] - p[i];
            assert!(
                got <= bound,
                "{} ms from {} ms: {got} > {bound}",
                10 * k,
                10 * i
            );
            most = most.max(got);
        }
        if k % 10 == 0 {
            // Whole fills: max_tokens + rate·T (rate 100/s).
            assert_eq!(bound, 50 + k as u64);
        }
        if k % 10 == 0 && k >= 100 {
            // Not loose: from 0, the full bucket and the fills after 0 come within
            // one fill of it.
            assert!(most >= bound - 10, "{} ms: at most {most}", 10 * k);
        }
    }
}

#[test]
fn bad_leaky_bucket_and_probabilistic_tables_are_refused_naming_the_field() {
    bad(
        "lb_no_rate",
        r#"admission = { kind = "leaky_bucket", burst = 5 }"#,
        &["dependency.admission.rate", "is required", "leaky_bucket"],
    );
    bad(
        "lb_zero_rate",
        r#"admission = { kind = "leaky_bucket", rate = 0 }"#,
        &["dependency.admission.rate", "at least 1"],
    );
    bad(
        "lb_negative_rate",
        r#"admission = { kind = "leaky_bucket", rate = -5 }"#,
        &["dependency.admission.rate", "-5", "whole number from 0"],
    );
    bad(
        "lb_slow_rate",
        r#"admission = { kind = "leaky_bucket", rate = 1, period = "10000s" }"#,
        &["dependency.admission.rate", "0.001", "1 per"],
    );
    bad(
        "lb_negative_burst",
        r#"admission = { kind = "leaky_bucket", rate = 1, burst = -1 }"#,
        &["dependency.admission.burst", "-1", "whole number from 0"],
    );
    bad(
        "lb_long_delay",
        r#"admission = { kind = "leaky_bucket", rate = 1, burst = 100000 }"#,
        &["dependency.admission.burst", "at most 1 day", "27.8h"],
    );
    bad(
        "lb_delay_word",
        r#"admission = { kind = "leaky_bucket", rate = 1, burst = 5, delay = "later" }"#,
        &[
            "dependency.admission.delay",
            "whole number of requests",
            "\"nodelay\"",
            "later",
        ],
    );
    bad(
        "lb_delay_float",
        r#"admission = { kind = "leaky_bucket", rate = 1, burst = 5, delay = 1.5 }"#,
        &["dependency.admission.delay", "\"nodelay\"", "1.5"],
    );
    bad(
        "lb_delay_negative",
        r#"admission = { kind = "leaky_bucket", rate = 1, burst = 5, delay = -2 }"#,
        &["dependency.admission.delay", "\"nodelay\"", "-2"],
    );
    bad(
        "lb_status",
        r#"admission = { kind = "leaky_bucket", rate = 1, status = 500 }"#,
        &["dependency.admission.status", "429 or 503", "500"],
    );
    bad(
        "pr_no_capacity",
        r#"admission = { kind = "probabilistic", window = "1s" }"#,
        &["dependency.admission.capacity", "is required"],
    );
    bad(
        "pr_zero_capacity",
        r#"admission = { kind = "probabilistic", capacity = 0 }"#,
        &["dependency.admission.capacity", "greater than 0", "0"],
    );
    bad(
        "pr_negative_capacity",
        r#"admission = { kind = "probabilistic", capacity = -3.5 }"#,
        &["dependency.admission.capacity", "greater than 0", "-3.5"],
    );
    bad(
        "pr_zero_window",
        r#"admission = { kind = "probabilistic", capacity = 10, window = "0s" }"#,
        &["dependency.admission.window"],
    );
    bad(
        "pr_unknown_key",
        r#"admission = { kind = "probabilistic", capacity = 10, burst = 3 }"#,
        &["burst", "capacity", "window"],
    );
}
