//! Hedged requests (issue 20): gRPC's hedging policy on a layer. Exact counts where
//! the schedule makes them exact; the tail-latency claim against the same arrivals
//! and service times without hedging.

use crate::common;

use common::{col, count, run};

/// A fleet of `rate` requests/s for `duration` into one hedging layer (`hedging`, or
/// none when empty), at unlimited servers with `service` and `extra` dependency keys.
fn hedged(rate: u32, duration: &str, hedging: &str, service: &str, extra: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[dependency]
servers = "unlimited"
service_time = {service}
{extra}
[[fleets]]
name = "app"
arrival = {{ kind = "poisson", rate = {rate} }}
FLEET
[[fleets.layers]]
max_attempts = 1
{hedging}
"#
    )
}

#[test]
fn hedging_a_long_tail_cuts_the_p99_and_sends_at_most_max_attempts_copies() {
    // Lognormal service time, median 10 ms and p99 200 ms, no capacity limit: a copy
    // sent after 20 ms usually finishes before a slow first one.
    let service = r#"{ kind = "lognormal", median = "10ms", p99 = "200ms" }"#;
    let plain = hedged(200, "60s", "", service, "").replace("FLEET", "");
    let hedging = r#"hedging = { max_attempts = 3, delay = "20ms" }"#;
    let with = hedged(200, "60s", hedging, service, "").replace("FLEET", "");
    let (p, h) = (run(&plain, &[]), run(&with, &[]));
    let (p99_plain, p99_hedged) = (col(&p, "latency_p99_ms"), col(&h, "latency_p99_ms"));
    // About 12,000 requests each: the p99 of each is well measured (±5%); hedging
    // must cut it at least in half.
    assert!(p99_hedged < 0.5 * p99_plain, "{p99_hedged} vs {p99_plain}");
    assert_eq!(count(&p, "logical"), count(&h, "logical"));
    assert_eq!(count(&h, "succeeded"), count(&h, "logical"));
    // At most max_attempts copies per request, and more than one on average.
    let (attempts, logical) = (count(&h, "attempts"), count(&h, "logical"));
    assert!(attempts <= 3 * logical);
    assert!(col(&h, "amplification") > 1.2);
    assert_eq!(attempts, logical + count(&h, "hedges"));
    assert!(count(&h, "hedge_wins") > 0);
    assert!(count(&h, "hedge_wins") <= count(&h, "hedges"));
}

#[test]
fn a_hedged_write_without_a_key_is_applied_once_per_copy_that_reaches_service() {
    // 20 ms of service, hedges 5 ms apart: all three copies are in service when the
    // first succeeds, and cancelling the losers does not stop work in service. Every
    // write is applied three times without a key, once with one.
    let hedging = r#"hedging = { max_attempts = 3, delay = "5ms" }"#;
    let text = hedged(50, "10s", hedging, "\"20ms\"", "");
    let r = run(&text.replace("FLEET", "writes = 1.0"), &[]);
    let logical = count(&r, "logical");
    assert_eq!(count(&r, "duplicates"), logical);
    assert_eq!(count(&r, "duplicate_applies"), 2 * logical);
    assert_eq!(count(&r, "hedge_losers"), 2 * logical);
    let keyed = run(
        &text.replace("FLEET", "writes = 1.0\nidempotency_keys = true"),
        &[],
    );
    assert_eq!(count(&keyed, "duplicate_applies"), 0);
}

#[test]
fn a_non_fatal_failure_sends_the_next_copy_at_once_and_a_fatal_one_ends_the_call() {
    // Every attempt fails after 1 ms; the delay (1 s) never elapses first.
    let base = |non_fatal: &str| {
        hedged(
            20,
            "10s",
            &format!(r#"hedging = {{ max_attempts = 3, delay = "1s"{non_fatal} }}"#),
            "\"1ms\"",
            "error_rate = 1.0",
        )
        .replace("FLEET", "")
    };
    let fatal = run(&base(""), &[]);
    assert_eq!(count(&fatal, "attempts"), count(&fatal, "logical"));
    assert_eq!(count(&fatal, "hedges"), 0);
    let retried = run(&base(r#", non_fatal = ["error"]"#), &[]);
    let logical = count(&retried, "logical");
    assert_eq!(count(&retried, "attempts"), 3 * logical);
    assert_eq!(count(&retried, "failed"), logical);
    // Back to back: 3 ms per request.
    assert!((col(&retried, "latency_p999_ms") - 3.0).abs() < 0.01);
}

#[test]
fn hedges_pass_through_the_layers_budget() {
    // Every attempt fails and errors are non-fatal, so without a budget each request
    // sends all 3 copies. A gRPC token bucket of 10 (a hedge only while tokens > 5,
    // each failure takes one, nothing succeeds to refill it) stops hedging after a
    // few failures: from then on one copy per request.
    let text = |budget: &str| {
        hedged(
            20,
            "10s",
            &format!(
                "hedging = {{ max_attempts = 3, delay = \"1s\", non_fatal = [\"error\"] }}\n{budget}"
            ),
            "\"1ms\"",
            "error_rate = 1.0",
        )
        .replace("FLEET", "")
    };
    let free = run(&text(""), &[]);
    assert_eq!(count(&free, "attempts"), 3 * count(&free, "logical"));
    let gated = run(
        &text("budget = { kind = \"token_bucket\", max_tokens = 10, token_ratio = 0.1 }"),
        &[],
    );
    let logical = count(&gated, "logical");
    assert!(
        count(&gated, "attempts") <= logical + 10,
        "{}",
        count(&gated, "attempts")
    );
    assert!(count(&gated, "budget_exhausted") >= logical - 10);
}
