//! Behaviour of retry policies: backoff schedules after a synchronised failure, orphaned
//! work after timeouts, duplicates of ambiguous writes, deadlines and Retry-After.

use crate::common;

use common::{col, count, run};

fn herd(jitter: &str) -> String {
    format!(
        r#"
duration = "20s"
herd_bucket = "10ms"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
[[fleets]]
name = "herd"
arrival = {{ kind = "burst", at = "1s", count = 1000 }}
[[fleets.layers]]
max_attempts = 5
backoff = {{ kind = "exponential", base = "100ms", cap = "10s", jitter = "{jitter}" }}
[[outages]]
start = "0s"
end = "3s"
mode = {{ kind = "fail", after = "1ms" }}
"#
    )
}

#[test]
fn unjittered_backoff_after_a_burst_retries_in_spikes_one_backoff_apart() {
    let r = run(&herd("none"), &[]);
    let (start, width, counts) = r.metrics.herd.clone().expect("herd window");
    // Attempt k+1 starts 1 ms (failure) + e_k after attempt k: 1.000, 1.101, 1.302,
    // 1.703, 2.504 s. Every one of the 1000 clients lands in the same 10 ms bucket.
    let mut t = 1_000_000_000u64;
    let mut expected = vec![t];
    for k in 0..4 {
        t += 1_000_000 + 100_000_000 * (1 << k);
        expected.push(t);
    }
    for at in &expected {
        let i = ((at - start) / width) as usize;
        assert_eq!(counts[i], 1000, "spike at {at} ns");
    }
    assert_eq!(counts.iter().sum::<u64>(), 5000);
    assert_eq!(count(&r, "herd_peak"), 1000);
}

#[test]
fn full_jitter_spreads_the_retries_over_the_backoff_window() {
    let r = run(&herd("full"), &[]);
    let (_, _, counts) = r.metrics.herd.clone().expect("herd window");
    assert_eq!(counts.iter().sum::<u64>(), 5000);
    // The first retries spread over [1.001 s, 1.101 s): about 100 per 10 ms bucket.
    // The initial burst is still one spike of 1000; past it, no bucket holds more than
    // 250 (expected ≤ 100, binomial sd ≈ 9.5).
    let (start, width, _) = r.metrics.herd.clone().unwrap();
    let burst = ((1_000_000_000 - start) / width) as usize;
    let after_burst: u64 = counts.iter().skip(burst + 1).copied().max().unwrap();
    assert!(after_burst < 250, "peak after the burst {after_burst}");
    for jitter in ["equal", "decorrelated"] {
        let r = run(&herd(jitter), &[]);
        let (_, _, c) = r.metrics.herd.clone().unwrap();
        let peak: u64 = c.iter().skip(burst + 1).copied().max().unwrap();
        assert!(peak < 600, "{jitter}: peak {peak}");
    }
}

fn orphans(cancel: bool) -> String {
    format!(
        r#"
duration = "1s"
[dependency]
servers = 1
service_time = {{ kind = "deterministic", value = "100ms" }}
[[fleets]]
name = "f"
arrival = {{ kind = "burst", at = "0s", count = 3 }}
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "150ms"
cancel_on_timeout = {cancel}
"#
    )
}

#[test]
fn a_timed_out_attempt_keeps_the_dependency_busy_unless_cancelled() {
    // Three attempts at t = 0 on one 100 ms server; callers give up at 150 ms.
    // Without cancel: all three are served (300 ms), the 2nd and 3rd for nobody.
    let r = run(&orphans(false), &[]);
    assert_eq!(count(&r, "served"), 3);
    assert_eq!(count(&r, "timeouts"), 2);
    assert!((col(&r, "wasted_fraction") - 2.0 / 3.0).abs() < 1e-9);
    // With cancel: the 3rd is removed from the queue; the 2nd, in service at 150 ms,
    // runs to its end, wasted.
    let r = run(&orphans(true), &[]);
    assert_eq!(count(&r, "served"), 2);
    assert_eq!(count(&r, "timeouts"), 2);
    assert!((col(&r, "wasted_fraction") - 0.5).abs() < 1e-9);
}

#[test]
fn cancel_on_timeout_reduces_wasted_work_under_load() {
    let text = r#"
duration = "120s"
[dependency]
servers = 1
service_time = { kind = "exponential", mean = "20ms" }
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 48 }
[[fleets.layers]]
max_attempts = 2
attempt_timeout = "60ms"
"#;
    // Two attempts at 48/s on a 50/s server: without cancel every orphan is still
    // served, the queue outgrows the timeout and almost nothing succeeds; cancelling
    // removes the orphans from the queue.
    let keep = run(text, &[]);
    let cancel = run(text, &["fleets.0.layers.0.cancel_on_timeout=true"]);
    assert!(
        col(&keep, "wasted_fraction") > 0.9,
        "{}",
        col(&keep, "wasted_fraction")
    );
    assert!(col(&keep, "success_fraction") < 0.05);
    assert!(col(&cancel, "wasted_fraction") < 0.8);
    assert!(col(&cancel, "success_fraction") > 0.4);
    assert!(col(&cancel, "served") < col(&keep, "served"));
}

fn writes(keys: bool, retry_ambiguous: bool) -> String {
    format!(
        r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "80ms" }}
[[fleets]]
name = "w"
arrival = {{ kind = "burst", at = "0s", count = 10 }}
writes = 1.0
idempotency_keys = {keys}
[[fleets.layers]]
max_attempts = 3
attempt_timeout = "50ms"
retry_ambiguous_writes = {retry_ambiguous}
"#
    )
}

#[test]
fn a_write_retried_after_a_timeout_without_a_key_is_applied_more_than_once() {
    // Each attempt is applied at +80 ms but times out at +50 ms: three applications.
    let r = run(&writes(false, true), &[]);
    assert_eq!(count(&r, "attempts"), 30);
    assert_eq!(count(&r, "duplicates"), 10);
    assert_eq!(count(&r, "duplicate_applies"), 20);
    // With a key the retries replay the stored result: no duplicate.
    let r = run(&writes(true, false), &[]);
    assert_eq!(count(&r, "attempts"), 30);
    assert_eq!(count(&r, "duplicates"), 0);
    // Without a key and without retry_ambiguous_writes the timeout is not retried.
    let r = run(&writes(false, false), &[]);
    assert_eq!(count(&r, "attempts"), 10);
    assert_eq!(count(&r, "duplicates"), 0);
}

#[test]
fn a_backoff_that_would_pass_the_deadline_fails_now_with_deadline_exceeded() {
    let text = r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "10ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "burst", at = "0s", count = 1 }
deadline = "500ms"
[[fleets.layers]]
max_attempts = 10
backoff = { kind = "fixed", delay = "200ms" }
"#;
    let r = run(text, &[]);
    // Attempts at 0, 210, 420 ms; after the third fails at 430 ms a 200 ms sleep would
    // end at 630 ms > 500 ms: fail at 430 ms instead of sleeping.
    assert_eq!(count(&r, "attempts"), 3);
    assert_eq!(count(&r, "deadline_exceeded"), 1);
    assert_eq!(col(&r, "latency_mean_ms"), 430.0);
}

#[test]
fn the_deadline_bounds_a_request_with_no_attempt_timeout() {
    let text = r#"
duration = "1s"
[dependency]
servers = 1
service_time = { kind = "deterministic", value = "300ms" }
[[fleets]]
name = "f"
arrival = { kind = "burst", at = "0s", count = 2 }
deadline = "400ms"
"#;
    let r = run(text, &[]);
    // The second request waits 300 ms then needs 300 ms more: it fails at 400 ms.
    assert_eq!(count(&r, "succeeded"), 1);
    assert_eq!(count(&r, "deadline_exceeded"), 1);
    assert_eq!(col(&r, "latency_p999_ms").round(), 400.0);
}

fn throttled(respect: bool) -> String {
    format!(
        r#"
duration = "1s"
[dependency]
servers = 1
queue_limit = 0
reject_status = 429
retry_after = "300ms"
service_time = {{ kind = "deterministic", value = "100ms" }}
[[fleets]]
name = "f"
arrival = {{ kind = "burst", at = "0s", count = 2 }}
[[fleets.layers]]
max_attempts = 2
backoff = {{ kind = "fixed", delay = "150ms" }}
respect_retry_after = {respect}
"#
    )
}

#[test]
fn retry_after_is_honoured_as_the_larger_of_it_and_the_backoff() {
    // The second request is rejected at 0 with Retry-After 300 ms: it retries at 300 ms
    // and finishes at 400 ms; ignoring the header it retries at 150 ms.
    let r = run(&throttled(true), &[]);
    assert_eq!(count(&r, "rejected"), 1);
    assert_eq!(col(&r, "latency_p999_ms").round(), 400.0);
    let r = run(&throttled(false), &[]);
    assert_eq!(col(&r, "latency_p999_ms").round(), 250.0);
}

#[test]
fn retry_after_that_does_not_fit_the_deadline_gives_up_at_once() {
    let r = run(&throttled(true), &["fleets.0.deadline=\"200ms\""]);
    assert_eq!(count(&r, "deadline_exceeded"), 1);
    assert_eq!(count(&r, "attempts"), 2);
}

#[test]
fn lifo_serves_the_newest_waiting_attempt_first() {
    let text = r#"
duration = "1s"
[dependency]
servers = 1
discipline = "lifo"
service_time = { kind = "deterministic", value = "100ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 100 }
load_profile = [{ at = "0s", multiplier = 1 }, { at = "30ms", multiplier = 0 }]
"#;
    // Three arrivals at 0, 10, 20 ms. FIFO would finish them at 100, 200, 300 ms; LIFO
    // serves the one from 20 ms second: latencies 100, 180 (20 → 200) and 290 (10 → 300).
    let r = run(text, &[]);
    assert_eq!(count(&r, "logical"), 3);
    assert_eq!(col(&r, "latency_mean_ms"), (100.0 + 180.0 + 290.0) / 3.0);
}

#[test]
fn drop_expired_sheds_queued_attempts_whose_caller_gave_up() {
    let text = r#"
duration = "1s"
[dependency]
servers = 1
drop_expired = true
service_time = { kind = "deterministic", value = "100ms" }
[[fleets]]
name = "f"
arrival = { kind = "burst", at = "0s", count = 5 }
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "150ms"
"#;
    // Served: #1 (0-100), #2 (100-200, times out at 150 during service: wasted). #3..#5
    // are dequeued at 200 ms with their callers gone: shed.
    let r = run(text, &[]);
    assert_eq!(count(&r, "served"), 2);
    assert_eq!(count(&r, "shed"), 3);
}

#[test]
fn hop_latency_adds_two_legs_per_attempt() {
    let text = r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "10ms" }
[[fleets]]
name = "f"
arrival = { kind = "burst", at = "0s", count = 1 }
[[fleets.layers]]
max_attempts = 1
hop_latency = "5ms"
[[fleets.layers]]
max_attempts = 1
hop_latency = { kind = "deterministic", value = "7ms" }
"#;
    let r = run(text, &[]);
    assert_eq!(col(&r, "latency_mean_ms"), 10.0 + 2.0 * 5.0 + 2.0 * 7.0);
}

#[test]
fn a_blackhole_outage_leaves_callers_to_time_out() {
    let text = r#"
duration = "4s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 10 }
[[fleets.layers]]
max_attempts = 1
attempt_timeout = "100ms"
[[outages]]
start = "1s"
end = "2s"
mode = { kind = "blackhole" }
"#;
    let r = run(text, &[]);
    assert_eq!(count(&r, "logical"), 40);
    assert_eq!(count(&r, "timeouts"), 10);
    assert_eq!(count(&r, "succeeded"), 30);
}

#[test]
fn slow_and_capacity_outages_stretch_service_and_shrink_servers() {
    let base = r#"
duration = "10s"
[dependency]
servers = 4
service_time = { kind = "deterministic", value = "10ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 50 }
[[outages]]
start = "0s"
end = "100s"
"#;
    let slow = run(
        &format!("{base}mode = {{ kind = \"slow\", factor = 3 }}\n"),
        &[],
    );
    assert_eq!(col(&slow, "latency_mean_ms"), 30.0);
    // 1 server of 10 ms at 50/s: ρ = 0.5, deterministic spacing 20 ms: no wait.
    let cap = run(
        &format!("{base}mode = {{ kind = \"capacity\", servers = 1 }}\n"),
        &[],
    );
    assert_eq!(col(&cap, "latency_mean_ms"), 10.0);
    let cap0 = run(
        &format!("{base}mode = {{ kind = \"capacity\", servers = 0 }}\n"),
        &[],
    );
    assert_eq!(count(&cap0, "served"), 0);
    assert_eq!(count(&cap0, "in_flight"), 500);
}

#[test]
fn per_concurrent_adds_service_time_for_each_attempt_already_in_service() {
    let text = r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "10ms" }
per_concurrent = "5ms"
[[fleets]]
name = "f"
arrival = { kind = "burst", at = "0s", count = 3 }
"#;
    let r = run(text, &[]);
    assert_eq!(col(&r, "latency_mean_ms"), (10.0 + 15.0 + 20.0) / 3.0);
}

#[test]
fn the_drain_lasts_until_orphaned_work_is_done() {
    // A write times out at 0.5 s (its attempt is slowed to 2 s) and its retry succeeds;
    // the orphaned first attempt still completes at 2 s and applies the write a second
    // time. The drain must not stop when the last logical request finishes (the other
    // fleet's, at 1.1 s): the summary counts the orphan's service and the duplicate.
    let text = r#"
duration = "1s"
bucket = "1s"
drain = "10s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "200ms" }
[[fleets]]
name = "a"
arrival = { kind = "burst", at = "0s", count = 1 }
writes = 1.0
[[fleets.layers]]
name = "l"
max_attempts = 2
attempt_timeout = "500ms"
retry_ambiguous_writes = true
[[fleets]]
name = "b"
arrival = { kind = "burst", at = "900ms", count = 1 }
[[outages]]
start = "0s"
end = "100ms"
mode = { kind = "slow", factor = 10 }
"#;
    let r = run(text, &[]);
    assert_eq!(count(&r, "succeeded"), 2);
    assert_eq!(count(&r, "served"), 3);
    assert_eq!(count(&r, "duplicates"), 1);
}

#[test]
fn a_slow_outage_stretches_the_coordination_cost_too() {
    // Two requests at once, 1 s of service plus 1 s per attempt already in service,
    // under a 2× slow outage: (1 + 0)·2 = 2 s and (1 + 1)·2 = 4 s, mean 3 s.
    let text = r#"
duration = "1s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1s" }
per_concurrent = "1s"
[[fleets]]
name = "a"
arrival = { kind = "burst", at = "0s", count = 2 }
[[outages]]
start = "0s"
end = "100s"
mode = { kind = "slow", factor = 2 }
"#;
    let r = run(text, &[]);
    assert_eq!(count(&r, "succeeded"), 2);
    assert!(
        (col(&r, "latency_mean_ms") - 3000.0).abs() < 1e-6,
        "{}",
        col(&r, "latency_mean_ms")
    );
}
