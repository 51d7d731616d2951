//! Hedged requests (issue 20): gRPC's hedging policy on a layer. Exact counts where
//! the schedule makes them exact; the tail-latency claim against the same arrivals
//! and service times without hedging.

use crate::tests::common;

use crate::metrics::ordinal::{End, Ordinals};
use crate::model::outcome::Class;
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

/// Attempts of `layer` and `ordinal`, every outcome.
fn at(o: &Ordinals, layer: usize, ordinal: u32) -> u64 {
    End::ALL.iter().map(|&e| o.count(layer, ordinal, e)).sum()
}

#[test]
fn every_hedged_copy_is_counted_at_its_ordinal_and_the_losers_as_cancelled() {
    // 30 ms of service, copies 10 ms apart, 30% errors (fatal): every call sends all
    // three copies before the first answers, the first decides it, and the other two
    // are losers, cancelled or left running. Each is an attempt of its ordinal.
    for cancel in ["", ", cancel_losers = false"] {
        let hedging = format!(r#"hedging = {{ max_attempts = 3, delay = "10ms"{cancel} }}"#);
        let text = hedged(50, "10s", &hedging, "\"30ms\"", "error_rate = 0.3");
        let r = run(&text.replace("FLEET", ""), &[]);
        let o = &r.metrics.ordinals;
        let logical = count(&r, "logical");
        assert_eq!(count(&r, "attempts"), 3 * logical, "{cancel}");
        assert_eq!(o.max_ordinal(0), 3, "{cancel}");
        let first =
            o.count(0, 1, End::Class(Class::Success)) + o.count(0, 1, End::Class(Class::Error));
        assert_eq!(first, logical, "{cancel}");
        for k in [2, 3] {
            assert_eq!(
                o.count(0, k, End::Cancelled),
                logical,
                "ordinal {k}{cancel}"
            );
            assert_eq!(at(o, 0, k), logical, "ordinal {k}{cancel}");
        }
        let rows: u64 = o.rows().map(|r| r.3).sum();
        assert_eq!(rows, count(&r, "attempts"), "{cancel}");
        assert_eq!(count(&r, "hedge_losers"), 2 * logical, "{cancel}");
    }
}

#[test]
fn a_hedged_call_cancelled_from_above_or_left_in_flight_counts_each_copy_out() {
    // An outer layer gives up after 25 ms and cancels the hedging call below it,
    // which has three copies out (sent at 0, 10 and 20 ms; 30 ms of service).
    let outer = r#"
attempt_timeout = "25ms"
cancel_on_timeout = true
[[fleets.layers]]
max_attempts = 1
hedging = { max_attempts = 3, delay = "10ms" }
"#;
    let text = hedged(50, "10s", outer, "\"30ms\"", "");
    let r = run(&text.replace("FLEET", ""), &[]);
    let o = &r.metrics.ordinals;
    let logical = count(&r, "logical");
    assert_eq!(o.count(0, 1, End::Class(Class::Timeout)), logical);
    for k in 1..=3 {
        assert_eq!(o.count(1, k, End::Cancelled), logical, "ordinal {k}");
        assert_eq!(at(o, 1, k), logical, "ordinal {k}");
    }
    // 100 s of service and no drain: every copy is still out when the run ends.
    let hedging = r#"hedging = { max_attempts = 3, delay = "10ms" }"#;
    let text = hedged(50, "1s", hedging, "\"100s\"", "").replace("FLEET", "");
    let r = run(&format!("drain = \"0s\"\n{text}"), &[]);
    let o = &r.metrics.ordinals;
    let logical = count(&r, "logical");
    for k in 1..=3 {
        assert_eq!(o.count(0, k, End::InFlight), logical, "ordinal {k}");
        assert_eq!(at(o, 0, k), logical, "ordinal {k}");
    }
}
