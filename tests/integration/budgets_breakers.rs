//! Retry budgets and circuit breakers in the running model: exact counts on scripted
//! cases, long-run bounds, placement, half-open probes and per-instance state.

use crate::common;

use common::{col, count, run};

fn dead(layer: &str, arrival: &str) -> String {
    format!(
        r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
error_rate = 1.0
[[fleets]]
name = "f"
arrival = {arrival}
[[fleets.layers]]
{layer}
"#
    )
}

const SEQ: &str = r#"{ kind = "constant", rate = 10 }"#;

#[test]
fn a_full_token_bucket_at_total_failure_allows_exactly_its_retries_then_none() {
    // max_tokens 10: a retry is allowed while tokens > 5 after the failure is counted:
    // after failures 1..4 (9, 8, 7, 6 tokens) and not after the 5th.
    let layer = "max_attempts = 100\ninstances = 1\nbudget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }";
    let r = run(&dead(layer, SEQ), &[]);
    let logical = count(&r, "logical");
    assert_eq!(logical, 100);
    assert_eq!(count(&r, "attempts"), logical + 4);
    assert_eq!(count(&r, "budget_exhausted"), logical);
    for (max, retries) in [(4, 1), (11, 5), (100, 49)] {
        let layer = format!("max_attempts = 1000\ninstances = 1\nbudget = {{ kind = \"token_bucket\", max_tokens = {max}, token_ratio = 0.5 }}");
        let r = run(&dead(&layer, SEQ), &[]);
        assert_eq!(count(&r, "attempts"), 100 + retries, "max_tokens {max}");
    }
}

#[test]
fn the_aws_quota_at_total_failure_allows_capacity_over_cost_retries() {
    let layer = "max_attempts = 1000\ninstances = 1\nbudget = { kind = \"aws_standard\" }";
    let r = run(&dead(layer, SEQ), &[]);
    assert_eq!(count(&r, "attempts"), 100 + 500 / 5);
    // After a timeout a retry costs 10: half as many.
    let layer = "max_attempts = 1000\ninstances = 1\nattempt_timeout = \"10ms\"\nbudget = { kind = \"aws_standard\" }";
    let text = dead(layer, SEQ).replace("value = \"1ms\"", "value = \"50ms\"");
    let r = run(&text, &[]);
    assert_eq!(count(&r, "attempts"), 100 + 500 / 10);
}

#[test]
fn a_ratio_budget_at_total_failure_caps_retries_at_its_percentage_of_calls() {
    // 20% of calls in a 10 s window plus 1/s × 10 s: with 100 calls per second the cap
    // is 20% + 10 retries per window.
    let layer = "max_attempts = 3\ninstances = 1\nbudget = { kind = \"ratio\", percent = 20, min_per_sec = 1, window = \"10s\" }";
    let text = dead(layer, r#"{ kind = "constant", rate = 100 }"#)
        .replace("duration = \"10s\"", "duration = \"100s\"");
    let r = run(&text, &[]);
    let logical = col(&r, "logical");
    let retries = col(&r, "attempts") - logical;
    let bound = 0.2 * logical + 10.0 * (100.0 / 10.0);
    assert!(retries <= bound, "retries {retries} > bound {bound}");
    assert!(
        retries >= 0.2 * logical,
        "retries {retries}: the budget should allow its share"
    );
}

/// Long run with independent failures p: a token bucket keeps failures (hence
/// retries) near `token_ratio × successes + max_tokens/2` once it is drained; at low p
/// it never drains and retries are those of the plain policy.
#[test]
fn the_token_bucket_bounds_the_long_run_retry_ratio() {
    for p in [0.5, 0.8, 0.95] {
        let text = flaky(
            p,
            r#"{ kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }"#,
        );
        let r = run(&text, &[]);
        let logical = col(&r, "logical");
        let retries = col(&r, "attempts") - logical;
        let successes = col(&r, "succeeded");
        let bound = 0.1 * successes + 5.0;
        assert!(retries <= bound, "p={p}: retries {retries} > {bound}");
        // Without the budget the same policy would retry far more.
        let plain = (1.0 - f64::powi(p, 3)) / (1.0 - p) - 1.0;
        assert!(retries < 0.5 * plain * logical, "p={p}");
    }
    let text = r#"
duration = "100s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
error_rate = 0.05
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 200 }
[[fleets.layers]]
max_attempts = 3
instances = 1
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
"#;
    let r = run(text, &[]);
    let expect = (1.0 - 0.05f64.powi(3)) / 0.95;
    assert!((col(&r, "amplification") / expect - 1.0).abs() < 0.01);
    // Only rare clusters of 5+ failures within ~50 calls drain it to half.
    assert!(col(&r, "budget_exhausted") < 0.005 * col(&r, "logical"));
}

fn breaker(placement: &str, retry_on: &str) -> String {
    let layer = format!(
        "max_attempts = 3\ninstances = 1\nretry_on = {retry_on}\nbreaker = {{ kind = \"consecutive\", failures = 5, open_for = \"100s\", placement = \"{placement}\" }}"
    );
    dead(&layer, SEQ)
}

#[test]
fn an_inside_breaker_opens_after_fewer_logical_calls_than_an_outside_one() {
    let default_retry_on = r#"["rejected", "error", "timeout"]"#;
    // Inside: every attempt counts; the 5th failed attempt (2nd call) trips it.
    let inside = run(&breaker("inside", default_retry_on), &[]);
    assert_eq!(count(&inside, "attempts"), 5);
    // Outside: one outcome per call, after its 3 attempts: 5 calls trip it.
    let outside = run(&breaker("outside", default_retry_on), &[]);
    assert_eq!(count(&outside, "attempts"), 15);
    assert_eq!(count(&inside, "breaker_trips"), 1);
    assert_eq!(count(&outside, "breaker_trips"), 1);
    // Inside: call 2's third attempt and one attempt of each of the 98 later calls are
    // refused; outside: the 95 calls after the 5th.
    assert_eq!(count(&inside, "breaker_open"), 99);
    assert_eq!(count(&outside, "breaker_open"), 95);
}

#[test]
fn an_open_breaker_rejection_is_retried_only_when_retry_on_says_so() {
    let r = run(
        &breaker(
            "inside",
            r#"["rejected", "error", "timeout", "breaker_open"]"#,
        ),
        &[],
    );
    // Every refused attempt is now retried up to max_attempts: 1 + 98 × 3.
    assert_eq!(count(&r, "breaker_open"), 1 + 98 * 3);
    assert_eq!(count(&r, "attempts"), 5);
}

#[test]
fn a_half_open_breaker_closes_after_its_probes_succeed_and_reopens_when_one_fails() {
    let text = r#"
duration = "5s"
bucket = "50ms"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 20 }
[[fleets.layers]]
max_attempts = 1
instances = 1
breaker = { kind = "consecutive", failures = 2, open_for = "1s", half_open_probes = 2 }
[[outages]]
start = "1s"
end = "3s"
mode = { kind = "fail", after = "1ms" }
"#;
    let r = run(text, &[]);
    // Requests every 50 ms. 1.00 and 1.05 fail: open until 2.051. 2.10 is a probe and
    // fails: open until 3.101. 3.15 and 3.20 probe and succeed: closed.
    assert_eq!(count(&r, "breaker_trips"), 2);
    assert_eq!(count(&r, "errors"), 3);
    assert_eq!(count(&r, "breaker_open"), 20 + 20);
    let open: Vec<f64> = r
        .metrics
        .buckets
        .iter()
        .map(|b| b.breaker_area as f64 / 50e6)
        .collect();
    assert_eq!(open[19], 0.0); // 0.95 s
    assert!((open[21] - 0.98).abs() < 1e-9); // 1.05 s: open from 1.051
    assert_eq!(open[30], 1.0); // 1.5 s
    assert!((open[41] - 0.02).abs() < 1e-9); // 2.05 s: open until 2.051, then half-open
    assert_eq!(open[50], 1.0); // 2.5 s
    assert_eq!(open[70], 0.0); // 3.5 s: closed
    assert_eq!(count(&r, "succeeded"), 100 - 3 - 40);
}

#[test]
fn a_budget_per_client_behaves_unlike_one_shared_budget() {
    // 1000 clients, one request each on average, against a dead dependency. A full
    // bucket per client (10 tokens) lasts for a request's 2 retries and the next's
    // first: like plain retries. One shared bucket allows 3 retries in all: failures
    // 1 and 2 leave 9 and 8 tokens (retry), the 3rd (7, last attempt) asks for none,
    // the 4th leaves 6 (retry), the 5th 5 (denied), and it never refills.
    let layer = "max_attempts = 3\nbudget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }";
    let text = dead(layer, r#"{ kind = "poisson", rate = 100, clients = 1000 }"#);
    let per_client = run(&text, &[]);
    let shared = run(&text, &["fleets.0.layers.0.instances=1"]);
    let logical = col(&per_client, "logical");
    assert!(
        col(&per_client, "amplification") > 2.9,
        "{}",
        col(&per_client, "amplification")
    );
    assert_eq!(col(&shared, "attempts"), logical + 3.0);
    assert_eq!(col(&per_client, "logical"), col(&shared, "logical"));
}

#[test]
fn budget_level_and_breaker_fraction_appear_in_the_time_series() {
    let layer = "max_attempts = 3\ninstances = 1\nbudget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }";
    let r = run(&dead(layer, SEQ), &[]);
    let levels: Vec<Option<f64>> = r.metrics.buckets.iter().map(|b| b.budget_level).collect();
    assert!(levels.iter().all(|l| l.is_some()));
    assert!(levels[0].unwrap() < 1.0);
    assert!(levels[9].unwrap() <= 0.5);
}

fn flaky(p: f64, budget: &str) -> String {
    format!(
        r#"
duration = "100s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
error_rate = {p}
[[fleets]]
name = "f"
arrival = {{ kind = "poisson", rate = 200 }}
[[fleets.layers]]
max_attempts = 3
instances = 1
budget = {budget}
"#
    )
}

/// AWS quota over a long run with independent failures p: a retry takes 5 tokens, a
/// success refunds the last retry's 5 or gives 1 without retry, and the bucket holds
/// 0..500. So 5·R ≤ 500 + 5·S_after_retry + S_first_try ≤ 500 + 5·S: R ≤ 100 + S.
#[test]
fn the_aws_quota_bounds_the_long_run_retries_by_its_token_arithmetic() {
    for p in [0.5, 0.8, 0.95] {
        let r = run(&flaky(p, "{ kind = \"aws_standard\" }"), &[]);
        let logical = col(&r, "logical");
        let retries = col(&r, "attempts") - logical;
        let s = col(&r, "succeeded");
        assert!(retries <= 100.0 + s, "p={p}: retries {retries} > 100 + {s}");
        let plain = ((1.0 - f64::powi(p, 3)) / (1.0 - p) - 1.0) * logical;
        if p >= 0.8 {
            assert!(
                retries < 0.8 * plain,
                "p={p}: the quota should bind ({retries} vs {plain})"
            );
            assert!(col(&r, "budget_exhausted") > 0.0);
        }
    }
}

/// Ratio budget: in every window retries ≤ percent·calls + min_per_sec·window, so over
/// the run (windows tile it) R ≤ 0.2·N + 5/s·100 s (the cap), plus one window's
/// allowance for the window straddling the end. Without a budget a call makes p + p²
/// retries on average (3 attempts); the budget allows 0.2 + 5·10/2000 = 0.225 per call
/// at 200 calls/s. Where the demand is above that (p ≥ 0.3) the cap binds in every
/// window and the budget spends it: R is within 5% below the cap. Where it is below
/// (p = 0.1: 0.11 per call), nothing is refused and R is the free rate.
#[test]
fn the_ratio_budget_bounds_the_long_run_retries_at_several_failure_rates() {
    let allowance = 0.2 + 5.0 * 10.0 / 2000.0;
    let (mut bound_by_cap, mut free) = (0, 0);
    for p in [0.1, 0.3, 0.6, 0.9] {
        let r = run(
            &flaky(
                p,
                "{ kind = \"ratio\", percent = 20, min_per_sec = 5, window = \"10s\" }",
            ),
            &[],
        );
        let logical = col(&r, "logical");
        let retries = col(&r, "attempts") - logical;
        let cap = 0.2 * logical + 5.0 * 100.0;
        let bound = cap + (0.2 * 2000.0 + 50.0);
        assert!(retries <= bound, "p={p}: retries {retries} > {bound}");
        let exhausted = col(&r, "budget_exhausted");
        let demand = p + p * p;
        if demand > allowance {
            bound_by_cap += 1;
            assert!(exhausted > 0.0, "p={p}: the cap binds but refused nothing");
            assert!(
                retries >= 0.95 * cap,
                "p={p}: the cap binds, so the budget spends it: retries {retries} < 95% of {cap}"
            );
        } else {
            free += 1;
            assert_eq!(exhausted, 0.0, "p={p}: under the cap nothing is refused");
            let plain = demand * logical;
            assert!(
                (retries / plain - 1.0).abs() < 0.05,
                "p={p}: under the cap it retries freely: {retries} vs {plain}"
            );
        }
    }
    assert_eq!((bound_by_cap, free), (3, 1), "both branches ran");
}

#[test]
fn a_breaker_per_client_behaves_unlike_one_shared_breaker() {
    // 100 clients each sending 1 request/s to a dead dependency; breakers trip after
    // 3 consecutive failures and stay open 100 s. One shared breaker opens after 3
    // failures for everybody; one per client lets each client fail 3 times first.
    let layer =
        "max_attempts = 1\nbreaker = { kind = \"consecutive\", failures = 3, open_for = \"100s\" }";
    let text = dead(layer, r#"{ kind = "constant", rate = 100, clients = 100 }"#);
    let per_client = run(&text, &[]);
    let shared = run(&text, &["fleets.0.layers.0.instances=1"]);
    assert_eq!(count(&shared, "attempts"), 3);
    assert_eq!(count(&per_client, "attempts"), 300);
    assert_eq!(count(&per_client, "breaker_trips"), 100);
    assert_eq!(count(&shared, "breaker_trips"), 1);
}

#[test]
fn a_failure_that_meets_the_deadline_below_still_reaches_the_breaker_above() {
    // Every attempt fails after 100 ms, past the 50 ms deadline. The bottom layer would
    // retry, but the deadline has passed: its call ends with deadline_exceeded, which the
    // top layer's breaker must record (3 failures open it for the rest of the run).
    // Ending the bottom call silently left the top breaker blind: it never opened.
    let text = r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "100ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 10 }
deadline = "50ms"
[[fleets.layers]]
name = "top"
max_attempts = 1
breaker = { kind = "consecutive", failures = 3, open_for = "100s", half_open_probes = 1 }
[[fleets.layers]]
name = "bottom"
max_attempts = 2
"#;
    for sets in [&[][..], &["fleets.0.layers.1.max_attempts=1"][..]] {
        let r = run(text, sets);
        assert_eq!(count(&r, "logical"), 100, "{sets:?}");
        // The breaker opens once the third request's failure arrives, at 0.3 s: the
        // requests at 0, 0.1, 0.2 and 0.3 s get through, the 96 after are refused.
        assert_eq!(count(&r, "attempts"), 4, "{sets:?}");
        assert_eq!(count(&r, "breaker_open"), 96, "{sets:?}");
        assert_eq!(count(&r, "deadline_exceeded"), 4, "{sets:?}");
    }
}

#[test]
fn a_cancelled_attempt_gives_back_the_half_open_probe_of_the_breaker_below() {
    // The bottom breaker opens in a fail outage; in the slow outage after it, its
    // half-open probes time out above and are cancelled. A cancelled probe must count as
    // a failed probe, not hold the only probe slot forever: once the dependency is
    // healthy again (from 3 s) the breaker closes and the calls succeed, as they do when
    // the timed-out probe is left to finish instead of cancelled.
    let text = r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "10ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
name = "top"
max_attempts = 1
attempt_timeout = "50ms"
cancel_on_timeout = true
[[fleets.layers]]
name = "bottom"
max_attempts = 1
breaker = { kind = "consecutive", failures = 1, open_for = "1s", half_open_probes = 1 }
[[outages]]
start = "0.5s"
end = "1s"
mode = { kind = "fail", after = "1ms" }
[[outages]]
start = "1s"
end = "3s"
mode = { kind = "slow", factor = 20 }
"#;
    for cancel in ["true", "false"] {
        let set = format!("fleets.0.layers.0.cancel_on_timeout={cancel}");
        let r = run(text, &[set.as_str()]);
        // 700 calls from 3 s on; with a stuck breaker only those before 0.5 s succeed.
        assert!(
            count(&r, "succeeded") >= 650,
            "cancel_on_timeout = {cancel}: {} succeeded",
            count(&r, "succeeded")
        );
    }
}
