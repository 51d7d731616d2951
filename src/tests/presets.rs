//! The named presets against their sources: reference vectors computed by hand from
//! each library's arithmetic (the source is named above each), scripted budget and
//! breaker sequences, long runs of each budget against its formula, and the presets as
//! scenario keys.

use crate::tests::common;

use std::process::Command;

use crate::model::backoff::aws_legacy::AwsLegacy;
use crate::model::backoff::aws_standard::{self as aws_backoff, AwsStandard};
use crate::model::backoff::envoy::{self as envoy_backoff, Envoy};
use crate::model::backoff::finagle::Finagle;
use crate::model::backoff::grpc::{self, Grpc};
use crate::model::backoff::polly::{self, Polly};
use crate::model::backoff::resilience4j::Resilience4j;
use crate::model::backoff::tower::Tower;
use crate::model::backoff::{wait_u, Backoff, Failure};
use crate::model::breaker::resilience4j::Window as R4jWindow;
use crate::model::breaker::{
    polly as polly_breaker, resilience4j as r4j_breaker, Breaker, BreakerConfig, Placement, State,
    Trip,
};
use crate::model::budget::{
    aws_standard, envoy, envoy_max_retries, failure_ratio, finagle, resilience4j, sre,
    token_bucket, tower, Budget, BudgetConfig, RetryCause,
};
use crate::model::config::Attempts;
use crate::model::limiter::adaptive_throttling::Accepts;
use crate::model::limiter::{adaptive_throttling, AwsAdaptive, Gate, Limiter, LimiterConfig};
use crate::model::outcome::Class;
use common::{col, count, run, scenario};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// The waits after failed attempts 1, 2, ... for the uniform draws `us`.
fn waits(b: Backoff, us: &[f64], f: Failure) -> Vec<u64> {
    let mut prev = crate::model::backoff::initial_state(&b);
    us.iter()
        .enumerate()
        .map(|(i, &u)| wait_u(&b, i as u32 + 1, &mut prev, &f, u))
        .collect()
}

fn no_failure() -> Failure {
    Failure::default()
}

// ----- gRPC ---------------------------------------------------------------------------

/// grpc-java `RetriableStream.makeRetryDecision` before 1.71 (`formula = "pre_2024"`):
/// `backoffNanos = (long)(nextBackoffIntervalNanos * random.nextDouble())`, then
/// `nextBackoffIntervalNanos = min((long)(next * backoffMultiplier), maxBackoffNanos)`;
/// with pushback: `backoffNanos = pushback`, `next = initialBackoffNanos`.
#[test]
fn grpc_backoff_is_grpc_java_arithmetic_with_pushback_resetting_the_interval() {
    let b = Backoff::Grpc(Grpc {
        initial: 100 * MS,
        max: S,
        multiplier: 2.0,
        formula: grpc::Formula::Pre2024,
    });
    // Intervals 100, 200, 400, 800, 1000 ms; waits interval·u, truncated.
    assert_eq!(
        waits(b, &[0.5, 0.25, 0.9, 0.999, 0.1], no_failure()),
        vec![50 * MS, 50 * MS, 360 * MS, 799_200_000, 100 * MS]
    );
    // A pushback of 300 ms after the second failure: wait exactly 300 ms, and the
    // third retry starts again from the initial 100 ms interval.
    let mut prev = b_initial(&b);
    let push = Failure {
        throttled: false,
        retry_after: Some(300 * MS),
    };
    assert_eq!(wait_u(&b, 1, &mut prev, &no_failure(), 0.5), 50 * MS);
    assert_eq!(wait_u(&b, 2, &mut prev, &push, 0.5), 300 * MS);
    assert_eq!(wait_u(&b, 3, &mut prev, &no_failure(), 0.9), 90 * MS);
}

fn b_initial(b: &Backoff) -> u64 {
    crate::model::backoff::initial_state(b)
}

/// C-core `retry_throttle.cc`: milli-tokens; on a failure `new = clamp(tokens − 1000)`
/// and the retry is allowed iff `new > max/2` (after the decrement); a success adds
/// `milli_token_ratio`. gRFC A6's example: maxTokens 10, tokenRatio 0.1.
#[test]
fn grpc_throttling_decides_after_the_decrement_in_milli_tokens() {
    let mut b = Budget::new(BudgetConfig::TokenBucket(token_bucket::Config {
        max_milli: 10_000,
        ratio_milli: 100,
    }));
    let mut allowed = Vec::new();
    for _ in 0..5 {
        b.on_failed(0, Class::Error, true);
        allowed.push(b.ask(0, RetryCause::default()).is_some());
    }
    // 9000, 8000, 7000, 6000 > 5000; 5000 is not.
    assert_eq!(allowed, vec![true, true, true, true, false]);
    b.on_succeeded(0, 0); // 5100
    assert_eq!(b.tokens(), 5100);
    assert!(b.ask(0, RetryCause::default()).is_some());
}

// ----- Envoy ----------------------------------------------------------------------------

/// envoy `JitteredExponentialBackOffStrategy::nextBackOffMs`: `random() % interval`,
/// `interval` from `base_interval` doubling while below `max_interval / 2`, then max.
#[test]
fn envoy_backoff_follows_the_current_code() {
    let b = Backoff::Envoy(Envoy {
        base_ms: 25,
        max_ms: 250,
        formula: envoy_backoff::Formula::Current,
    });
    // Intervals 25, 50, 100, 200, 250, 250 ms.
    assert_eq!(
        waits(b, &[0.999_999; 6], no_failure()),
        [24, 49, 99, 199, 249, 249].map(|m| m * MS).to_vec()
    );
    assert_eq!(
        waits(b, &[0.5; 6], no_failure()),
        [12, 25, 50, 100, 125, 125].map(|m| m * MS).to_vec()
    );
}

/// The router filter docs ("in the range [0, (2^N − 1)·B)", first retry 0–24 ms, second
/// 0–74 ms, third 0–174 ms, capped at 250 ms) are the code before Envoy 1.14:
/// `min(random() % ((2^r − 1)·base), max)`, `r` growing while the range fits.
#[test]
fn envoy_backoff_documented_formula_is_the_pre_1_14_code() {
    let b = Backoff::Envoy(Envoy {
        base_ms: 25,
        max_ms: 250,
        formula: envoy_backoff::Formula::Documented,
    });
    // Ranges 25, 75, 175, 375, 375 ms.
    assert_eq!(
        waits(b, &[0.999_999; 3], no_failure()),
        [24, 74, 174].map(|m| m * MS).to_vec()
    );
    assert_eq!(
        waits(b, &[0.5, 0.5, 0.5, 0.5, 0.9], no_failure()),
        [12, 37, 87, 187, 250].map(|m| m * MS).to_vec()
    );
}

/// `RetryBudgetImpl::max()`: `max((uint64)(budget_percent/100 · (active + pending)),
/// min_retry_concurrency)`; `canCreate()`: outstanding retries `< max()`.
#[test]
fn envoy_budget_bounds_concurrent_retries() {
    let mut b = Budget::new(BudgetConfig::Envoy(envoy::Config {
        percent: 20.0,
        min_concurrency: 3,
        count_backoff: false,
    }));
    let ask = |b: &mut Budget| b.ask(0, RetryCause::default());
    // Nothing in flight: the floor of 3.
    assert_eq!(
        (0..4).map(|_| ask(&mut b)).collect::<Vec<_>>(),
        vec![Some(1), Some(1), Some(1), None]
    );
    // 20 attempts in flight: 20% of 20 = 4.
    for _ in 0..20 {
        b.on_sent(false);
    }
    assert_eq!(ask(&mut b), Some(1));
    assert_eq!(ask(&mut b), None);
    // One retry's attempt answered: a slot is free again.
    b.release(1, true);
    assert_eq!(ask(&mut b), Some(1));
}

/// Envoy issue #30205: with a budget of 100% and no floor, a request whose only attempt
/// just failed sees 0 active + pending requests, so its retry overflows; counting the
/// retries waiting to be sent and the proposed one (PR #30738) lets it through.
#[test]
fn envoy_budget_blind_spot_of_issue_30205() {
    for (count_backoff, expect) in [(false, None), (true, Some(1))] {
        let mut b = Budget::new(BudgetConfig::Envoy(envoy::Config {
            percent: 100.0,
            min_concurrency: 0,
            count_backoff,
        }));
        b.on_sent(false);
        b.on_done(); // the attempt failed
        assert_eq!(b.ask(0, RetryCause::default()), expect, "{count_backoff}");
    }
}

// ----- Finagle --------------------------------------------------------------------------

/// finagle `Backoff.decorrelatedJittered(5.millis, 200.millis)`: the first wait is
/// `start`; then `start + rng.nextLong(upper − start)`, `upper = 3·start` (or `max` once
/// `start >= max/3`).
#[test]
fn finagle_backoff_is_decorrelated_from_the_previous_wait() {
    let b = Backoff::Finagle(Finagle {
        start: 5 * MS,
        max: 200 * MS,
    });
    // 5; 5 + 10/2; 10 + 20/2; 20 + 40/2; 40 + 80/2; 80 ≥ 66.67: 80 + 120/2; 140 + 60/2.
    assert_eq!(
        waits(b, &[0.5; 7], no_failure()),
        [5, 10, 20, 40, 80, 140, 170].map(|m| m * MS).to_vec()
    );
}

fn finagle() -> Budget {
    Budget::new(BudgetConfig::Finagle(finagle::Config {
        ttl_ms: 10_000,
        min_per_sec: 10,
        percent_can_retry: 0.2,
    }))
}

/// finagle `RetryBudget(10.seconds, 10, 0.2)`: deposit 1000, withdraw 1000/0.2 = 5000,
/// reserve 10 · 10 · 5000; twitter/util `WindowedAdder(10_000, 10)`: a slice ends at the
/// first operation a second after the last expiry.
#[test]
fn finagle_budget_deposits_withdraws_and_expires_by_slices() {
    let mut b = finagle();
    let ask = |b: &mut Budget, t: u64| b.ask(t, RetryCause::default()).is_some();
    // The reserve alone: 500,000 / 5,000 = 100 retries.
    assert_eq!((0..101).filter(|_| ask(&mut b, 0)).count(), 100);
    // Five calls deposit 5 × 1000: one more retry.
    for _ in 0..5 {
        b.on_call(500 * MS);
    }
    assert!(ask(&mut b, 500 * MS));
    assert!(!ask(&mut b, 500 * MS));
    // Untouched until 10 s, everything has expired: the reserve is back.
    assert!(ask(&mut b, 10 * S));

    // Touched at 9.5 s, the expiry re-anchors the slices there: the withdrawals of t = 0
    // still count at 10 s and leave only at 10.5 s.
    let mut b = finagle();
    assert_eq!((0..100).filter(|_| ask(&mut b, 0)).count(), 100);
    assert!(!ask(&mut b, 9_500 * MS));
    assert!(!ask(&mut b, 10 * S));
    assert!(ask(&mut b, 10_500 * MS));
}

// ----- tower ------------------------------------------------------------------------------

/// tower `ExponentialBackoff::next_backoff`: `base = min(min·2^k, max)`, jitter
/// `Duration::new((secs as f64·u·j) as u64, (nanos as f64·u·j) as u32).min(max − base)`:
/// the whole seconds and the nanoseconds are scaled and truncated apart.
#[test]
fn tower_backoff_scales_seconds_and_nanoseconds_apart() {
    let b = Backoff::Tower(Tower {
        min: 50 * MS,
        max: None,
        jitter: 0.99,
    });
    // u·j = 0.495. Bases 50, 100, 200, 400, 800 ms, 1.6 s; at 1.6 s the whole second
    // scales to 0 and only 600 ms · 0.495 = 297 ms is added.
    assert_eq!(
        waits(b, &[0.5; 6], no_failure()),
        vec![
            74_750_000,
            149_500_000,
            299 * MS,
            598 * MS,
            1_196 * MS,
            1_897 * MS
        ]
    );
    let capped = Backoff::Tower(Tower {
        min: 50 * MS,
        max: Some(S),
        jitter: 0.99,
    });
    // 800 ms + min(396 ms, 200 ms); then base = max and no room for jitter.
    assert_eq!(waits(capped, &[0.5; 6], no_failure())[4..], [S, S]);
}

fn tower(percent: f32, truncate: bool) -> Budget {
    Budget::new(BudgetConfig::Tower(tower::Config {
        ttl: 10 * S,
        min_per_sec: 0,
        retry_percent: percent,
        truncate,
        deposit_on_success: false,
    }))
}

/// tower `TpsBudget::new`: for `retry_percent <= 1`, deposit 1 and withdraw
/// `(1.0 / retry_percent) as isize` (`f32`), so 0.3 allows 1 retry per 3 deposits and
/// 0.6 one per deposit (tower issue #857); without the truncation (PR #863) deposits are
/// 1000 and withdrawals `(1000.0 / retry_percent) as isize`.
#[test]
fn tower_budget_truncates_one_over_percent() {
    for (percent, deposits, truncated, exact) in [(0.3f32, 300, 100, 90), (0.6, 10, 10, 6)] {
        for (truncate, expect) in [(true, truncated), (false, exact)] {
            let mut b = tower(percent, truncate);
            for _ in 0..deposits {
                b.on_call(0);
            }
            let n = (0..1000)
                .filter(|_| b.ask(0, RetryCause::default()).is_some())
                .count();
            assert_eq!(n, expect, "percent {percent} truncate {truncate}");
        }
    }
    // The default TpsBudget (10 s, 10/s, 20%): deposit 1, withdraw 5, reserve 500.
    let mut b = Budget::new(BudgetConfig::Tower(tower::Config {
        ttl: 10 * S,
        min_per_sec: 10,
        retry_percent: 0.2,
        truncate: true,
        deposit_on_success: true,
    }));
    let n = (0..200)
        .filter(|_| b.ask(0, RetryCause::default()).is_some())
        .count();
    assert_eq!(n, 100);
    b.on_call(0); // deposits come from successes in tower's documented policy
    assert!(b.ask(0, RetryCause::default()).is_none());
    for _ in 0..5 {
        b.on_succeeded(0, 0);
    }
    assert!(b.ask(0, RetryCause::default()).is_some());
}

// ----- AWS ------------------------------------------------------------------------------

/// botocore `retryhandler.delay_exponential(base='rand', growth_factor=2, attempts)`:
/// `rand · 2^(attempts − 1)` seconds.
#[test]
fn aws_legacy_backoff() {
    let b = Backoff::AwsLegacy(AwsLegacy {
        base: None,
        growth: 2.0,
    });
    assert_eq!(
        waits(b, &[0.5; 4], no_failure()),
        vec![500 * MS, S, 2 * S, 4 * S]
    );
}

/// botocore `retries/standard.py` `ExponentialBackoff.delay_amount`, version 2.0:
/// `random() · min(2^(attempt − 1), 20)`; checked against botocore 1.43.11 with the
/// random function replaced: u = 0.5 gives 0.5, 1.0, 2.0 (attempts 1–3) and 10.0
/// (attempt 6); u = 0.3 gives 0.3, 0.6, 1.2 and 6.0.
#[test]
fn aws_standard_backoff_version_2_0() {
    let b = Backoff::AwsStandard(AwsStandard {
        version: aws_backoff::Version::V2_0,
        max_backoff: 20 * S,
        dynamodb: false,
    });
    let at = |u: f64, k: u32| {
        let mut prev = 0;
        wait_u(&b, k, &mut prev, &no_failure(), u)
    };
    assert_eq!(
        [1, 2, 3, 6].map(|k| at(0.5, k)),
        [500 * MS, S, 2 * S, 10 * S]
    );
    assert_eq!(
        [1, 2, 3, 6].map(|k| at(0.3, k)),
        [300 * MS, 600 * MS, 1_200 * MS, 6 * S]
    );
}

/// botocore version 2.1 (the 2026 update): `t = random() · min(scale · 2^(n−1), 20)`,
/// scale 1 after a throttling error, 0.05 otherwise; with `x-amz-retry-after` r (ms):
/// `max(t, min(r, t + 5))`.
#[test]
fn aws_standard_backoff_version_2_1() {
    let b = Backoff::AwsStandard(AwsStandard {
        version: aws_backoff::Version::V2_1,
        max_backoff: 20 * S,
        dynamodb: false,
    });
    let at = |k: u32, throttled: bool, ra: Option<u64>| {
        let mut prev = 0;
        let f = Failure {
            throttled,
            retry_after: ra,
        };
        wait_u(&b, k, &mut prev, &f, 0.5)
    };
    assert_eq!(
        [1, 2, 3].map(|k| at(k, false, None)),
        [25 * MS, 50 * MS, 100 * MS]
    );
    assert_eq!(at(1, true, None), 500 * MS);
    assert_eq!(at(1, false, Some(2 * S)), 2 * S);
    assert_eq!(at(1, false, Some(10 * S)), 5_025 * MS);
    assert_eq!(at(1, false, Some(10 * MS)), 25 * MS);
}

/// botocore `RetryQuotaChecker`: version 2.1 acquires 5 after a throttling error and 14
/// otherwise (`_RETRY_COST_V2`); version 2.0 acquires 10 after a timeout, 5 otherwise.
#[test]
fn aws_quota_costs_by_version() {
    let mut v21 = Budget::new(BudgetConfig::AwsStandard(aws_standard::Config {
        capacity: 500,
        retry_cost: 14,
        timeout_cost: 14,
        throttling_cost: Some(5),
        success_refund: 1,
    }));
    let throttled = RetryCause {
        timeout: false,
        throttled: true,
    };
    assert_eq!(v21.ask(0, RetryCause::default()), Some(14));
    assert_eq!(v21.ask(0, throttled), Some(5));
    assert_eq!(
        v21.ask(
            0,
            RetryCause {
                timeout: true,
                throttled: false
            }
        ),
        Some(14)
    );
    assert_eq!(v21.tokens(), 500 - 33);
    v21.on_succeeded(0, 5); // refund the last acquisition
    assert_eq!(v21.tokens(), 472);
}

/// botocore `ClientRateLimiter` (`adaptive.py`, `throttling.py`, `bucket.py`) on a
/// scripted clock; the values are botocore 1.43.11's own, run with the same script:
/// a throttling answer at 0.6 s, then answers at 1.0 s, 1.2 s, a throttling one at
/// 1.7 s and one at 2.6 s.
#[test]
fn aws_adaptive_cubic_limiter_matches_botocore() {
    let mut a = AwsAdaptive::new(0);
    let ns = |t: f64| (t * 1e9).round() as u64;
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs().max(1.0);
    let mut step = |t: f64, thr: bool, measured: f64, fill: f64, tokens: f64| {
        a.on_response(ns(t), thr);
        let (enabled, f, cur, m) = a.snapshot();
        assert!(enabled);
        assert!(close(m, measured), "measured at {t}: {m} vs {measured}");
        assert!(close(f, fill), "fill rate at {t}: {f} vs {fill}");
        assert!(close(cur, tokens), "tokens at {t}: {cur} vs {tokens}");
    };
    step(0.6, true, 1.6, 1.1199999999999999, 0.6);
    step(1.0, false, 1.92, 1.483606307352411, 1.048);
    step(1.2, false, 1.92, 1.5603866270663207, 1.3447212614704822);
    step(1.7, true, 3.584, 1.0922706389464245, 1.0922706389464245);
    step(2.6, false, 1.5168, 1.5589309719452942, 1.0922706389464245);

    // After the first throttle a sender finds 0.6 tokens at a rate of 1.12/s: it waits
    // (1 − 0.6) / 1.12 = 0.357142857… s, then takes the token.
    let mut a = AwsAdaptive::new(0);
    a.on_response(600 * MS, true);
    assert_eq!(a.before_send(600 * MS), Gate::Wait(357_142_858));
    assert_eq!(a.before_send(600 * MS + 357_142_858), Gate::Pass);
}

// ----- Resilience4j ---------------------------------------------------------------------

/// `IntervalFunction.ofExponentialRandomBackoff(500, 1.5, 0.5)`: `i_n = (long)(i_(n−1) ·
/// 1.5)` ms (500, 750, 1125, 1687, 2530), then `(long)(i(1 − f) + u · (2fi + 1))`, at
/// least 1, then `min(·, maxInterval)`; `RetryConfig`'s default is a fixed 500 ms.
#[test]
fn resilience4j_interval_functions() {
    let fixed = Backoff::Resilience4j(Resilience4j {
        initial_ms: 500,
        multiplier: 1.0,
        randomization: 0.0,
        max_ms: None,
    });
    assert_eq!(waits(fixed, &[0.0; 3], no_failure()), vec![500 * MS; 3]);
    let b = |max_ms| {
        Backoff::Resilience4j(Resilience4j {
            initial_ms: 500,
            multiplier: 1.5,
            randomization: 0.5,
            max_ms,
        })
    };
    assert_eq!(
        waits(b(None), &[0.5; 5], no_failure()),
        [500, 750, 1125, 1687, 2530].map(|m| m * MS).to_vec()
    );
    // u = 0: half of each (562.5 → 562, 843.5 → 843); u = 0.999: about 1.5 of each
    // (the + 1 of `max − min + 1`).
    assert_eq!(
        waits(b(None), &[0.0; 4], no_failure()),
        [250, 375, 562, 843].map(|m| m * MS).to_vec()
    );
    assert_eq!(
        waits(b(None), &[0.999; 4], no_failure()),
        [750, 1125, 1687, 2529].map(|m| m * MS).to_vec()
    );
    assert_eq!(
        waits(b(Some(1000)), &[0.5; 4], no_failure()),
        [500, 750, 1000, 1000].map(|m| m * MS).to_vec()
    );
}

fn r4j(window: R4jWindow, min_calls: u32, slow_rate: f32, probes: u32) -> Breaker {
    Breaker::new(BreakerConfig {
        trip: Trip::Resilience4j(r4j_breaker::Config {
            window,
            min_calls,
            failure_rate: 50.0,
            slow_call_rate: slow_rate,
            slow_call_duration: 100 * MS,
        }),
        open_for: S,
        half_open_probes: probes,
        placement: Placement::Inside,
    })
}

/// `CircuitBreakerStateMachine`: count window, `minimumNumberOfCalls`, failure rate
/// `>=` threshold; open until strictly after the wait; `permittedNumberOfCalls` admitted
/// in all while half-open, evaluated in a count window of that size.
#[test]
fn resilience4j_breaker_count_window_and_half_open_permits() {
    let mut b = r4j(R4jWindow::Count(4), 4, 100.0, 2);
    for ok in [false, true, true] {
        assert!(b.allow(0));
        assert!(!b.record(0, ok)); // fewer than 4 calls
    }
    assert!(b.record(10, false)); // 2 of 4 = 50%
    assert_eq!(b.state(), State::Open { until: 10 + S + 1 });
    assert!(!b.allow(10 + S)); // not after the wait yet
    assert!(b.allow(10 + S + 1)); // half-open: 2 permits in all
    assert!(b.allow(10 + S + 1));
    assert!(!b.allow(10 + S + 2));
    assert!(!b.record(2 * S, true)); // 1 of 2 recorded: below the minimum
    assert!(b.record(2 * S, false)); // 50%: open again
    assert!(b.allow(4 * S));
    assert!(b.allow(4 * S));
    b.record(4 * S, true);
    assert!(!b.record(4 * S, true)); // 0%: closed, with fresh metrics
    assert_eq!(b.state(), State::Closed);
    assert!(!b.record(4 * S, false));
    assert_eq!(b.times_opened(), 2);
}

/// `CircuitBreakerMetrics.onSuccess`: a call longer than `slowCallDurationThreshold`
/// (strictly) is slow; the slow-call rate trips the breaker though every call succeeded.
#[test]
fn resilience4j_breaker_slow_call_rate() {
    let mut b = r4j(R4jWindow::Count(4), 2, 50.0, 1);
    assert!(!b.record_timed(0, true, 100 * MS)); // 1 call: below the minimum of 2
    assert!(!b.record_timed(0, true, 100 * MS)); // exactly the threshold is not slow: 0%
    let mut b = r4j(R4jWindow::Count(4), 2, 50.0, 1);
    assert!(!b.record_timed(0, true, 100 * MS));
    assert!(b.record_timed(0, true, 150 * MS)); // 1 of 2 slow = 50%
}

/// `SlidingTimeWindowMetrics`: the calls of the last `n` epoch seconds.
#[test]
fn resilience4j_breaker_time_window() {
    let mut b = r4j(R4jWindow::Time(2), 3, 100.0, 1);
    b.record(100 * MS, false);
    b.record(500 * MS, false);
    // At 2.5 s the window holds seconds 1 and 2: the two failures of second 0 are gone.
    assert!(!b.record(2_500 * MS, true));
    assert!(!b.record(2_600 * MS, false));
    assert!(b.record(2_700 * MS, false)); // 2 of 3
}

/// `BudgetRetryImpl` (PR #2373, synchronous context): `allowRetry()` is asked before
/// anything is recorded; allowed while the window holds at most `minSampleSize`
/// records or its failure rate is at most `maxRetryRatio`. A success is recorded twice,
/// an allowed error when its backoff sleep ends, a refused one never.
#[test]
fn resilience4j_retry_budget_asks_before_recording() {
    let mut b = Budget::new(BudgetConfig::Resilience4j(resilience4j::Config {
        window_s: 10,
        max_retry_ratio: 10.0,
        min_sample_size: 4,
    }));
    let counts = |b: &mut Budget, t: u64| match b {
        Budget::Resilience4j(r) => r.counts(t),
        _ => unreachable!(),
    };
    b.on_succeeded(0, 0);
    b.on_succeeded(0, 0);
    assert_eq!(counts(&mut b, 0), (4, 0)); // onResult and onComplete each record
    b.on_failed(0, Class::Error, true); // 4 records ≤ 4: warm-up
    assert!(!b.refused_failure());
    assert!(b.ask(0, RetryCause::default()).is_some());
    b.on_retry_scheduled(S / 2);
    assert_eq!(counts(&mut b, S / 2 - 1), (4, 0)); // still sleeping
    assert_eq!(counts(&mut b, S / 2), (5, 1)); // recorded after the sleep
    b.on_failed(S / 2, Class::Error, true); // 1 of 5 failed = 20% > 10%
    assert!(b.refused_failure());
    assert!(b.ask(S / 2, RetryCause::default()).is_none());
    assert_eq!(counts(&mut b, S / 2), (5, 1)); // the refused failure is not recorded
                                               // Ten seconds on, the window is empty again.
    b.on_failed(10 * S, Class::Error, true);
    assert!(!b.refused_failure());
}

// ----- Polly ------------------------------------------------------------------------------

fn polly(ty: polly::BackoffType, jitter: bool, max: Option<u64>) -> Backoff {
    Backoff::Polly(Polly {
        delay_ticks: S / 100,
        backoff_type: ty,
        jitter,
        max_delay_ticks: max,
    })
}

/// Polly v8 `RetryHelper.GetRetryDelay` (0-based attempt k): constant `d`, linear
/// `(k+1)·d`, exponential `2^k·d`; `ApplyJitter`: `d + (d·0.5·u − d·0.5/2)` ms.
#[test]
fn polly_constant_linear_exponential_and_jitter() {
    let secs = |v: &[u64]| v.iter().map(|s| s * S).collect::<Vec<_>>();
    assert_eq!(
        waits(
            polly(polly::BackoffType::Constant, false, None),
            &[0.0; 3],
            no_failure()
        ),
        secs(&[1, 1, 1])
    );
    assert_eq!(
        waits(
            polly(polly::BackoffType::Linear, false, None),
            &[0.0; 4],
            no_failure()
        ),
        secs(&[1, 2, 3, 4])
    );
    assert_eq!(
        waits(
            polly(polly::BackoffType::Exponential, false, None),
            &[0.0; 4],
            no_failure()
        ),
        secs(&[1, 2, 4, 8])
    );
    assert_eq!(
        waits(
            polly(polly::BackoffType::Exponential, false, Some(3 * S / 100)),
            &[0.0; 4],
            no_failure()
        ),
        secs(&[1, 2, 3, 3])
    );
    // ±25%: u = 0 → 750 ms, 0.5 → 1 s, 0.999 → 1249.5 ms; linear k = 1 → 2 s · (0.75…1.25).
    assert_eq!(
        waits(
            polly(polly::BackoffType::Constant, true, None),
            &[0.0, 0.5, 0.999],
            no_failure()
        ),
        vec![750 * MS, S, 1_249_500_000]
    );
    assert_eq!(
        waits(
            polly(polly::BackoffType::Linear, true, None),
            &[0.5, 0.0],
            no_failure()
        ),
        vec![S, 1_500 * MS]
    );
}

/// Polly `DecorrelatedJitterBackoffV2`: `t = k + u`,
/// `next = 2^t · tanh(√(4t))`, wait `(long)((next − prev) · (1/1.4) · ticks(d))`.
/// For d = 1 s and u = 0.5, 0.25, 0.75, 0: 8974049, 7630887, 31319993 and 9106063 ticks.
#[test]
fn polly_decorrelated_jitter_v2() {
    let us = [0.5, 0.25, 0.75, 0.0];
    let got = waits(
        polly(polly::BackoffType::Exponential, true, None),
        &us,
        no_failure(),
    );
    assert_eq!(
        got,
        vec![897_404_900, 763_088_700, 3_131_999_300, 910_606_300]
    );
    // The same from the formula as written in Polly.
    let mut prev = 0.0f64;
    for (k, &u) in us.iter().enumerate() {
        let t = k as f64 + u;
        let next = 2f64.powf(t) * (4.0 * t).sqrt().tanh();
        let ticks = ((next - prev) * (1.0 / 1.4) * 1e7) as i64 as u64;
        prev = next;
        assert_eq!(got[k], ticks * 100);
    }
}

/// Polly `AdvancedCircuitBehavior` on `RollingHealthMetrics` (10 windows of
/// sampling/10, each started by a call): a failure while closed breaks the circuit when
/// throughput ≥ `MinimumThroughput` and failure rate ≥ `FailureRatio`; half-open lets
/// one call through.
#[test]
fn polly_breaker_failure_ratio_over_the_sampling_duration() {
    let mut b = Breaker::new(BreakerConfig {
        trip: Trip::Polly(polly_breaker::Config {
            sampling: S,
            min_throughput: 4,
            failure_ratio: 0.5,
        }),
        open_for: S,
        half_open_probes: 1,
        placement: Placement::Inside,
    });
    for ok in [true, true, false] {
        assert!(!b.record(0, ok)); // throughput 3 < 4
    }
    assert!(b.record(50 * MS, false)); // 2 of 4 failed
    assert_eq!(b.state(), State::Open { until: 1_050 * MS });
    assert!(!b.allow(S));
    assert!(b.allow(1_050 * MS));
    assert!(!b.allow(1_050 * MS)); // one call while half-open
    assert!(!b.record(1_060 * MS, true)); // closed, metrics reset
    for _ in 0..3 {
        assert!(!b.record(1_100 * MS, false));
    }
    assert!(b.record(1_100 * MS, false));
    // Successes alone never break it; windows older than the sampling duration leave.
    let mut b = Breaker::new(BreakerConfig {
        trip: Trip::Polly(polly_breaker::Config {
            sampling: S,
            min_throughput: 4,
            failure_ratio: 0.5,
        }),
        open_for: S,
        half_open_probes: 1,
        placement: Placement::Inside,
    });
    b.record(0, true);
    for t in [S, S, S] {
        assert!(!b.record(t, false)); // the success of t = 0 has left: throughput 1..3
    }
}

// ----- SRE --------------------------------------------------------------------------------

/// SRE book, "Handling Overload": retry only while retries / requests is below 10%.
#[test]
fn sre_retry_budget_ratio() {
    let mut b = Budget::new(BudgetConfig::Sre(sre::Config {
        fraction: 0.1,
        window: 120 * S,
    }));
    for _ in 0..9 {
        b.on_call(0);
    }
    assert!(b.ask(0, RetryCause::default()).is_some()); // 0 of 9
    assert!(b.ask(0, RetryCause::default()).is_none()); // 1 of 10 is not below 10%
    b.on_call(0);
    assert!(b.ask(0, RetryCause::default()).is_some()); // 1 of 11
                                                        // Two minutes later the window is empty.
    assert!(b.ask(121 * S, RetryCause::default()).is_some());
}

/// SRE book: `p = max(0, (requests − K·accepts) / (requests + 1))`, requests counting
/// the attempts rejected locally too.
#[test]
fn sre_adaptive_throttling_probability() {
    let mut l = Limiter::new(LimiterConfig::AdaptiveThrottling(
        adaptive_throttling::Config {
            k: 2.0,
            window: 120 * S,
            padding: 1.0,
            accepts: Accepts::Success,
        },
    ));
    // 10 requests, 4 accepted: (10 − 8) / 11 = 0.1818…: u = 0.18 rejects, 0.19 passes.
    for _ in 0..10 {
        assert_eq!(l.gate_u(0, 0.999), Gate::Pass);
    }
    for _ in 0..4 {
        l.on_answer(0, true, false, false);
    }
    assert_eq!(l.gate_u(0, 0.18), Gate::Reject);
    // Now 11 requests, 4 accepts: (11 − 8) / 12 = 0.25.
    assert_eq!(l.gate_u(0, 0.25), Gate::Pass);
    assert_eq!(l.gate_u(0, 0.2), Gate::Reject); // 12 requests: 4/13 = 0.307…
                                                // With 6 accepts of 13 requests: (13 − 12) / 14 > 0; with 7 it is 0.
    l.on_answer(0, true, false, false);
    l.on_answer(0, true, false, false);
    assert_eq!(l.gate_u(0, 0.07), Gate::Reject);
    l.on_answer(0, true, false, false);
    l.on_answer(0, true, false, false);
    assert_eq!(l.gate_u(0, 0.0), Gate::Pass); // (14 − 16) / 15 < 0
}

// ----- long runs of each budget against its formula ----------------------------------------

fn dead(layer: &str, arrival: &str, duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
drain = "10s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
error_rate = 1.0
[[fleets]]
name = "f"
arrival = {arrival}
[[fleets.layers]]
instances = 1
{layer}
"#
    )
}

const CONST_100: &str = r#"{ kind = "constant", rate = 100 }"#;

/// Finagle: retries per ttl ≤ 20% of the deposits in the window + the reserve
/// (10/s · 10 s). With every attempt failing and retries limited only by the budget,
/// 100 calls/s for 100 s (10,000 calls) retry at 0.2 · 100 + 10 = 30/s, a little more
/// as deposits expire after 9 to 10 slices, plus the 100 reserve retries of t = 0:
/// within [0.97, 1.12] of 0.2 · calls + 10/s · duration.
#[test]
fn finagle_budget_long_run() {
    let layer = r#"max_attempts = 1000
budget = { preset = "finagle" }"#;
    let r = run(&dead(layer, CONST_100, "100s"), &[]);
    let calls = col(&r, "logical");
    let retries = col(&r, "attempts") - calls;
    let bound = 0.2 * calls + 10.0 * 100.0;
    let ratio = retries / bound;
    assert!(
        (0.97..=1.12).contains(&ratio),
        "retries {retries}, bound {bound}"
    );
}

/// tower with deposits per call and no reserve: retries = calls / withdraw, so 30%
/// gives 1/3 of the calls truncated and 0.3 exact (10,000 calls; ±1.5% for the
/// windows' edges).
#[test]
fn tower_budget_long_run_shows_the_truncation() {
    for (truncate, expect) in [(true, 1.0 / 3.0), (false, 0.3)] {
        let layer = format!(
            "max_attempts = 1000\nbudget = {{ kind = \"tower\", percent = 30, min_per_sec = 0, deposit = \"call\", truncate = {truncate} }}"
        );
        let r = run(&dead(&layer, CONST_100, "100s"), &[]);
        let calls = col(&r, "logical");
        let ratio = (col(&r, "attempts") - calls) / calls;
        assert!(
            (ratio / expect - 1.0).abs() < 0.015,
            "truncate {truncate}: {ratio}"
        );
    }
}

/// Envoy: outstanding retries < max(20% · in flight, 3). Every attempt fails after
/// 100 ms, no backoff, 2 attempts, 100 calls/s: about 10 attempts are in flight, so the
/// floor of 3 binds, each retry holds its slot for its 100 ms attempt: at most 30
/// retries/s, and a freed slot waits up to 10 ms for the next failure (50 s: within
/// [26, 30] per second).
#[test]
fn envoy_budget_long_run_bounds_concurrency() {
    let text = dead(
        "max_attempts = 2\nbudget = { preset = \"envoy\" }",
        CONST_100,
        "50s",
    )
    .replace("error_rate = 1.0", "")
    .replace("[[fleets]]", "[[outages]]\nstart = \"0s\"\nend = \"100s\"\nmode = { kind = \"fail\", after = \"100ms\" }\n[[fleets]]");
    let r = run(&text, &[]);
    let per_s = (col(&r, "attempts") - col(&r, "logical")) / 50.0;
    assert!((26.0..=30.0).contains(&per_s), "{per_s} retries/s");
}

/// Envoy issue #30205 in the model: 100% budget, no floor, one call a second whose
/// attempt fails fast: nothing else is in flight when its retry is asked for, so Envoy
/// as shipped refuses every retry; counting the proposed retry allows every one.
#[test]
fn envoy_blind_spot_in_the_model() {
    for (count_backoff, attempts_per_call) in [(false, 1.0), (true, 2.0)] {
        let layer = format!("max_attempts = 2\nbudget = {{ kind = \"envoy\", percent = 100, min_concurrency = 0, count_backoff = {count_backoff} }}");
        let r = run(
            &dead(&layer, r#"{ kind = "constant", rate = 1 }"#, "20s"),
            &[],
        );
        assert_eq!(col(&r, "amplification"), attempts_per_call);
    }
}

/// AWS 2.1 quota at total failure: 500 / 14 = 35 retries after transient errors,
/// 500 / 5 = 100 after throttling errors (429 rejections).
#[test]
fn aws_2026_quota_at_total_failure() {
    for (status, retries) in [(503, 35), (429, 100)] {
        let text = format!(
            r#"
duration = "10s"
[dependency]
servers = 1
queue_limit = 0
reject_status = {status}
service_time = {{ kind = "deterministic", value = "1ms" }}
[[fleets]]
name = "f"
arrival = {{ kind = "constant", rate = 10 }}
[[fleets.layers]]
instances = 1
preset = "aws_standard_2026"
max_attempts = 1000
backoff = {{ kind = "none" }}
[[outages]]
start = "0s"
end = "100s"
mode = {{ kind = "capacity", servers = 0 }}
"#
        );
        let r = run(&text, &[]);
        assert_eq!(count(&r, "attempts"), 100 + retries, "status {status}");
    }
}

/// AWS adaptive against a dependency that always throttles: once enabled the send rate
/// falls to its floor of 0.5/s; senders block for tokens (and give up at the 1 s
/// deadline). One client at 10 calls/s for 200 s sends about 100 attempts, plus the few
/// before the first throttle: within [90, 115].
#[test]
fn aws_adaptive_long_run_falls_to_the_floor_rate() {
    let text = r#"
duration = "200s"
[dependency]
servers = 1
queue_limit = 0
reject_status = 429
service_time = { kind = "deterministic", value = "1ms" }
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 10 }
deadline = "1s"
[[fleets.layers]]
instances = 1
max_attempts = 1
limiter = { kind = "aws_adaptive" }
[[outages]]
start = "0s"
end = "300s"
mode = { kind = "capacity", servers = 0 }
"#;
    let r = run(text, &[]);
    let sent = col(&r, "attempts");
    assert!((90.0..=115.0).contains(&sent), "{sent} attempts");
}

/// Resilience4j retry budget (PR #2373): the window records each success twice and
/// each allowed retry's error once. At p = 0.05 its failure rate stays below 10%: every
/// retry happens, as without a budget ((1 − p³)/(1 − p) attempts per call, within 1%).
/// At p = 0.3 refusals are not recorded, so the budget settles where the recorded
/// errors are 10% of the records: retries R per call with R / (2·S + R) = 0.1, S the
/// successes per call, i.e. `1 + 2/9 · success_fraction` attempts per call (within 1%),
/// well below the 1.39 of no budget, well above the 1.00 of a budget that would lock
/// retries out.
#[test]
fn resilience4j_budget_long_run() {
    for (p, lo, hi) in [
        (
            0.05,
            (1.0 - 0.05f64.powi(3)) / 0.95 * 0.99,
            (1.0 - 0.05f64.powi(3)) / 0.95 * 1.01,
        ),
        (0.3, 0.0, 0.0),
    ] {
        let text = format!(
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
instances = 1
max_attempts = 3
budget = {{ preset = "resilience4j" }}
"#
        );
        let r = run(&text, &[]);
        let a = col(&r, "amplification");
        let (lo, hi) = if p == 0.3 {
            let settled = 1.0 + 2.0 / 9.0 * col(&r, "success_fraction");
            (settled * 0.99, settled * 1.01)
        } else {
            (lo, hi)
        };
        assert!((lo..=hi).contains(&a), "p = {p}: {a}");
    }
}

/// SRE retry budget: retries < 10% of requests (first attempts and retries), so at
/// total failure about one retry per 9 calls: 1.111 attempts per call (10,000 calls,
/// within 1.5%).
#[test]
fn sre_budget_long_run() {
    let layer = "max_attempts = 3\nbudget = { preset = \"sre\" }";
    let r = run(&dead(layer, CONST_100, "100s"), &[]);
    let a = col(&r, "amplification");
    assert!((a / (1.0 + 1.0 / 9.0) - 1.0).abs() < 0.015, "{a}");
}

/// SRE adaptive throttling counting successes only (`accepts = "success"`) at total
/// failure by errors: accepts stay 0, so request i of a client
/// passes with probability 1 / (R_i + 1), R_i its requests in the last 2 minutes. 100
/// clients at 10 requests/s for 600 s: each expects H_1200 + 4800/1200 ≈ 11.67 sent
/// attempts, 1,166.6 in all (sd ≈ 34): within 10%.
#[test]
fn sre_throttling_long_run() {
    let layer = "max_attempts = 1\nlimiter = { preset = \"sre\", accepts = \"success\" }";
    let text = dead(
        layer,
        r#"{ kind = "constant", rate = 1000, clients = 100 }"#,
        "600s",
    )
    .replace("instances = 1\n", "");
    let r = run(&text, &[]);
    let harmonic: f64 = (1..=1200).map(|n| 1.0 / n as f64).sum();
    let expect = 100.0 * (harmonic + 4800.0 / 1200.0);
    let sent = col(&r, "attempts");
    assert!((sent / expect - 1.0).abs() < 0.1, "{sent} vs {expect}");
    assert_eq!(
        count(&r, "budget_exhausted") + count(&r, "attempts"),
        count(&r, "logical")
    );
}

// ----- presets as scenario keys ------------------------------------------------------------

const BASE: &str = r#"
duration = "10s"
[dependency]
servers = 10
service_time = { kind = "exponential", mean = "10ms" }
[[fleets]]
name = "f"
arrival = { kind = "poisson", rate = 100 }
"#;

#[test]
fn a_grpc_layer_resolves_with_its_overrides_and_caps_max_attempts_at_five() {
    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\npreset = \"grpc\"\nmax_attempts = 3\n"),
        &[],
    );
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(layer.preset.as_deref(), Some("grpc"));
    assert_eq!(layer.max_attempts, 3);
    assert_eq!(layer.capped_from, None);
    assert_eq!(
        layer.backoff,
        Backoff::Grpc(Grpc {
            initial: 100 * MS,
            max: S,
            multiplier: 2.0,
            formula: grpc::Formula::Current,
        })
    );
    assert_eq!(
        layer.budget,
        Some(BudgetConfig::TokenBucket(token_bucket::Config {
            max_milli: 10_000,
            ratio_milli: 100
        }))
    );
    // The manifest records the resolved table.
    assert_eq!(
        l.resolved["fleets"][0]["layers"][0]["budget"]["token_ratio"].as_float(),
        Some(0.1)
    );
    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\npreset = \"grpc\"\nmax_attempts = 8\n"),
        &[],
    );
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(
        (layer.max_attempts, layer.capped_from),
        (Attempts::Limited(5), Some(Attempts::Limited(8)))
    );
    let e = crate::explain::explain(&l.scenario).render();
    assert!(
        e.contains("preset grpc → max_attempts 5 (capped from 8)"),
        "{e}"
    );
}

#[test]
fn every_preset_loads_runs_and_is_named_by_explain() {
    for p in crate::scenario::preset::LAYER_PRESETS {
        let text = format!(
            "{BASE}deadline = \"5s\"\n[[fleets.layers]]\npreset = \"{}\"\n",
            p.name
        );
        let l = scenario(&text, &[]);
        let e = crate::explain::explain(&l.scenario).render();
        assert!(e.contains(&format!("preset {} →", p.name)), "{e}");
        let r = run(&text, &[]);
        assert!(col(&r, "success_fraction") > 0.99, "{}", p.name);
    }
    // Part presets alone.
    let text = format!(
        "{BASE}[[fleets.layers]]\nmax_attempts = 3\nbackoff = {{ preset = \"envoy\" }}\nbudget = {{ preset = \"finagle\", percent = 30 }}\nbreaker = {{ preset = \"resilience4j\", window_size = 20 }}\n"
    );
    let l = scenario(&text, &[]);
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(layer.part_presets.backoff.as_deref(), Some("envoy"));
    assert_eq!(
        layer.budget,
        Some(BudgetConfig::Finagle(finagle::Config {
            ttl_ms: 10_000,
            min_per_sec: 10,
            percent_can_retry: 0.3
        }))
    );
    assert!(matches!(
        layer.breaker.map(|b| b.trip),
        Some(Trip::Resilience4j(r4j_breaker::Config {
            window: R4jWindow::Count(20),
            ..
        }))
    ));
    let e = crate::explain::explain(&l.scenario).render();
    assert!(
        e.contains("budget preset finagle → Finagle budget 30%"),
        "{e}"
    );
}

fn retrysim_bin(args: &[&str]) -> std::process::Output {
    Command::new(crate::tests::common::bin())
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn an_unknown_preset_is_bad_input_naming_the_field_and_the_known_presets() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bad.toml");
    std::fs::write(&p, format!("{BASE}[[fleets.layers]]\npreset = \"grcp\"\n")).unwrap();
    let out = retrysim_bin(&["validate", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("fleets[0].layers[0].preset"), "{err}");
    assert!(err.contains("unknown preset \"grcp\""), "{err}");
    for name in ["\"grpc\"", "\"envoy\"", "\"aws_standard_2026\"", "\"sre\""] {
        assert!(err.contains(name), "{err}");
    }
    std::fs::write(
        &p,
        format!("{BASE}[[fleets.layers]]\nmax_attempts = 2\nbreaker = {{ preset = \"tower\" }}\n"),
    )
    .unwrap();
    let out = retrysim_bin(&["validate", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("fleets[0].layers[0].breaker.preset"), "{err}");
    assert!(err.contains("\"resilience4j\", \"polly\""), "{err}");
}

#[test]
fn the_presets_scenario_validates_and_sweeps_every_preset() {
    let out = retrysim_bin(&["validate", "scenarios/presets.toml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let l = crate::scenario::load(
        crate::scenario::Source::read(std::path::Path::new("scenarios/presets.toml")).unwrap(),
        &[],
    )
    .unwrap();
    let plan = crate::sweep::plan::plan(l).unwrap();
    assert_eq!(
        plan.total_runs(),
        crate::scenario::preset::LAYER_PRESETS.len() as u64
    );
}

#[test]
fn bad_values_of_the_library_kinds_name_their_field() {
    for (layer, field, rule) in [
        (
            "backoff = { kind = \"envoy\", base = \"0ms\" }",
            "backoff.base",
            "positive",
        ),
        (
            "backoff = { kind = \"envoy\", base = \"50ms\", max = \"10ms\" }",
            "backoff.max",
            "at least base",
        ),
        (
            // A closed choice is a serde enum: serde names the value and the choices,
            // and the loader finds the key that holds it inside the tagged table.
            "backoff = { kind = \"polly\", backoff_type = \"quadratic\" }",
            "backoff.backoff_type",
            "unknown variant `quadratic`, expected one of `constant`, `linear`, `exponential`",
        ),
        (
            "backoff = { kind = \"resilience4j\", randomization_factor = 1.5 }",
            "backoff.randomization_factor",
            "between 0 and 1",
        ),
        (
            "backoff = { kind = \"aws_standard\", version = \"3\" }",
            "backoff.version",
            "unknown variant `3`, expected `2.0` or `2.1`",
        ),
        (
            "backoff = { kind = \"grpc\", initial = \"0s\", max = \"1s\", multiplier = 2 }",
            "backoff.initial",
            "positive",
        ),
        (
            "budget = { kind = \"finagle\", ttl = \"61s\" }",
            "budget.ttl",
            "between 1s and 60s",
        ),
        (
            // A serde enum: the message names the field and the allowed values.
            "budget = { kind = \"tower\", deposit = \"retry\" }",
            "budget.deposit",
            "unknown variant `retry`, expected `success` or `call`",
        ),
        (
            "budget = { kind = \"envoy\", percent = 120 }",
            "budget.percent",
            "between 0 and 100",
        ),
        (
            "budget = { kind = \"resilience4j\", window = \"1500ms\" }",
            "budget.window",
            "whole number of seconds",
        ),
        (
            "budget = { kind = \"sre\", percent = 0 }",
            "budget.percent",
            "greater than 0",
        ),
        (
            "breaker = { kind = \"polly\", min_throughput = 1 }",
            "breaker.min_throughput",
            "at least 2",
        ),
        (
            "breaker = { kind = \"polly\", sampling_duration = \"100ms\" }",
            "breaker.sampling_duration",
            "500ms",
        ),
        (
            "breaker = { kind = \"resilience4j\", window_type = \"sliding\" }",
            "breaker.window_type",
            "unknown variant `sliding`, expected `count` or `time`",
        ),
        (
            "breaker = { kind = \"resilience4j\", failure_rate = 0 }",
            "breaker.failure_rate",
            "greater than 0",
        ),
        (
            "limiter = { kind = \"adaptive_throttling\", accepts = \"all\" }",
            "limiter.accepts",
            "unknown variant `all`, expected `not_rejected` or `success`",
        ),
        (
            "backoff = { kind = \"fixed\", delay = 5 }",
            "backoff.delay",
            "duration 5 has no unit",
        ),
        (
            "breaker = { kind = \"polly\", min_throughput = \"many\" }",
            "breaker.min_throughput",
            "invalid type: string \"many\"",
        ),
        ("max_attempts_cap = 0", "max_attempts_cap", "at least 1"),
        ("total_timeout = \"0s\"", "total_timeout", "positive"),
    ] {
        let text = format!("{BASE}[[fleets.layers]]\nmax_attempts = 3\n{layer}\n");
        let src = crate::scenario::Source {
            path: "bad.toml".into(),
            stem: "bad".into(),
            text,
        };
        let e = crate::scenario::load(src, &[]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("fleets[0].layers[0].{field}: ")),
            "{layer}: {e}"
        );
        assert!(e.contains(rule), "{layer}: {e}");
    }
}

// ----- upstream vectors (tests/fixtures/upstream, copied from shared/upstream) --------------

/// The text of an upstream vector file.
fn upstream(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/upstream/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The items after `key` on the line of `file` that starts with it.
fn vector(file: &str, key: &str) -> Vec<String> {
    let text = upstream(file);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("{file}: no line {key}"));
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn grpc(initial: u64, max: u64, formula: grpc::Formula) -> Backoff {
    Backoff::Grpc(Grpc {
        initial,
        max,
        multiplier: 2.0,
        formula,
    })
}

/// grpc-java ≥ 1.71 `intervalWithJitter` (jitter on by default): `(long)(interval ·
/// (0.4·u + 0.8))` ns, interval 100 s ×2 up to 700 s: the jitter after the cap, so the
/// waits reach 1.2 × 700 s.
#[test]
fn upstream_grpc_java_backoff_vectors_replay() {
    for (key, u) in [
        ("java_backoff_u=0.5", 0.5),
        ("java_backoff_u=0.0", 0.0),
        ("java_backoff_u=0.999999", 0.999_999),
    ] {
        let expect: Vec<u64> = vector("grpc_java_vectors.txt", key)
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        let b = grpc(100 * S, 700 * S, grpc::Formula::Current);
        assert_eq!(
            waits(b, &vec![u; expect.len()], no_failure()),
            expect,
            "{key}"
        );
    }
    // The bound explain uses covers the jitter past the cap.
    let b = grpc(100 * S, 700 * S, grpc::Formula::Current);
    assert!(crate::model::backoff::max_wait(&b, 6) >= 839_999_720_000);
    assert!(crate::model::backoff::settled_wait(&b) >= 840 * S);
}

/// C-core `BackOff::NextAttemptDelay` with jitter 0.2: the same law, in ms.
#[test]
fn upstream_grpc_core_backoff_vectors_replay() {
    for (key, u) in [("core_backoff_u0.5", 0.5), ("core_backoff_u0", 0.0)] {
        let expect: Vec<u64> = vector("grpc_core_envoy_vectors.txt", key)
            .iter()
            .map(|v| (v.parse::<f64>().unwrap() * MS as f64).round() as u64)
            .collect();
        let b = grpc(100 * MS, S, grpc::Formula::Current);
        assert_eq!(
            waits(b, &vec![u; expect.len()], no_failure()),
            expect,
            "{key}"
        );
    }
    // The pre-2024 formula stays reachable: U[0, interval).
    let b = grpc(100 * MS, S, grpc::Formula::Pre2024);
    assert_eq!(
        waits(b, &[0.5; 6], no_failure()),
        [50, 100, 200, 400, 500, 500].map(|m| m * MS).to_vec()
    );
}

/// `formula` is a key of the grpc backoff; the default is the current formula.
#[test]
fn upstream_grpc_formula_key_defaults_to_current_and_pre_2024_is_reachable() {
    let at = |extra: &str| {
        let text = format!(
            "{BASE}[[fleets.layers]]\nmax_attempts = 3\nbackoff = {{ kind = \"grpc\", initial = \"100ms\", max = \"1s\", multiplier = 2{extra} }}\n"
        );
        scenario(&text, &[]).scenario.fleets[0].layers[0].backoff
    };
    assert_eq!(at(""), grpc(100 * MS, S, grpc::Formula::Current));
    assert_eq!(
        at(", formula = \"pre_2024\""),
        grpc(100 * MS, S, grpc::Formula::Pre2024)
    );
    let src = crate::scenario::Source {
        path: "bad.toml".into(),
        stem: "bad".into(),
        text: format!(
            "{BASE}[[fleets.layers]]\nmax_attempts = 3\nbackoff = {{ kind = \"grpc\", initial = \"100ms\", max = \"1s\", multiplier = 2, formula = \"old\" }}\n"
        ),
    };
    let e = crate::scenario::load(src, &[]).unwrap_err().to_string();
    assert!(e.contains("fleets[0].layers[0].backoff"), "{e}");
    assert!(
        e.contains("unknown variant `old`, expected `current` or `pre_2024`"),
        "{e}"
    );
}

/// grpc-java `RetriableStream.Throttle` (1000-scaled ints), maxTokens 4, tokenRatio 0.8:
/// each failure `allowed:tokens`, each success `s:tokens:above_threshold`.
#[test]
fn upstream_grpc_java_throttle_vectors_replay() {
    let mut b = Budget::new(BudgetConfig::TokenBucket(token_bucket::Config {
        max_milli: 4000,
        ratio_milli: 800,
    }));
    let items = vector("grpc_java_vectors.txt", "java_throttle");
    // The first item is the fresh throttle's answer: a full bucket is above threshold.
    assert_eq!(items[0], "true");
    for item in &items[1..] {
        let parts: Vec<&str> = item.split(':').collect();
        if parts[0] == "s" {
            b.on_succeeded(0, 0);
            let above = b.tokens() > 2000;
            assert_eq!(
                (b.tokens().to_string(), above.to_string()),
                (parts[1].to_string(), parts[2].to_string()),
                "{item}"
            );
        } else {
            b.on_failed(0, Class::Error, true);
            let allowed = b.ask(0, RetryCause::default()).is_some();
            assert_eq!(
                (allowed.to_string(), b.tokens().to_string()),
                (parts[0].to_string(), parts[1].to_string()),
                "{item}"
            );
        }
    }
}

/// C-core `RetryThrottler`: `core_basic` (4000 / 1600) and A6's example under total
/// failure.
#[test]
fn upstream_grpc_core_throttle_vectors_replay() {
    let mut b = Budget::new(BudgetConfig::TokenBucket(token_bucket::Config {
        max_milli: 4000,
        ratio_milli: 1600,
    }));
    for item in vector("grpc_core_envoy_vectors.txt", "core_basic") {
        let (op, tokens) = item.split_once(':').unwrap();
        match op {
            "S" => b.on_succeeded(0, 0),
            _ => {
                b.on_failed(0, Class::Error, true);
                let allowed = b.ask(0, RetryCause::default()).is_some();
                assert_eq!(allowed, op == "F1", "{item}");
            }
        }
        assert_eq!(b.tokens().to_string(), tokens, "{item}");
    }
    let mut b = Budget::new(BudgetConfig::TokenBucket(token_bucket::Config {
        max_milli: 10_000,
        ratio_milli: 100,
    }));
    for (i, want) in vector("grpc_core_envoy_vectors.txt", "core_a6_allfail")
        .iter()
        .enumerate()
    {
        b.on_failed(0, Class::Error, true);
        let allowed = b.ask(0, RetryCause::default()).is_some();
        assert_eq!(allowed, want == "1", "failure {}", i + 1);
    }
}

/// `tokenRatio` keeps 3 decimals, truncated (grpc-java `java_ratio_milli`), read from
/// the scenario file; `maxTokens` is an integer in (0, 1000].
#[test]
fn upstream_grpc_token_ratio_truncates_and_max_tokens_is_an_integer_up_to_1000() {
    let budget_of = |b: &str| {
        let text = format!("{BASE}[[fleets.layers]]\nmax_attempts = 3\nbudget = {b}\n");
        let src = crate::scenario::Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text,
        };
        crate::scenario::load(src, &[])
            .map(|l| l.scenario.fleets[0].layers[0].budget)
            .map_err(|e| e.to_string())
    };
    for item in vector("grpc_java_vectors.txt", "java_ratio_milli") {
        let (ratio, milli) = item.split_once('=').unwrap();
        let got = budget_of(&format!(
            "{{ kind = \"token_bucket\", max_tokens = 1000, token_ratio = {ratio} }}"
        ))
        .unwrap();
        assert_eq!(
            got,
            Some(BudgetConfig::TokenBucket(token_bucket::Config {
                max_milli: 1_000_000,
                ratio_milli: milli.parse().unwrap()
            })),
            "{item}"
        );
    }
    for bad in ["0", "1001", "10.5", "-3"] {
        let e = budget_of(&format!(
            "{{ kind = \"token_bucket\", max_tokens = {bad}, token_ratio = 0.1 }}"
        ))
        .unwrap_err();
        assert!(
            e.contains("fleets[0].layers[0].budget.max_tokens"),
            "{bad}: {e}"
        );
        assert!(e.contains("integer from 1 to 1000"), "{bad}: {e}");
    }
}

/// The grpc preset is A6's example policy, all of it: 4 attempts (the cap of 5 stays).
#[test]
fn upstream_grpc_preset_is_the_a6_example_policy_with_4_attempts() {
    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\npreset = \"grpc\"\n"),
        &[],
    );
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(
        (layer.max_attempts, layer.capped_from),
        (Attempts::Limited(4), None)
    );
    assert_eq!(layer.backoff, grpc(100 * MS, S, grpc::Formula::Current));
    assert_eq!(
        layer.budget,
        Some(BudgetConfig::TokenBucket(token_bucket::Config {
            max_milli: 10_000,
            ratio_milli: 100
        }))
    );
}

/// Envoy `JitteredExponentialBackOffStrategy` with `random()` returning `R`: the wait is
/// `R % interval`, so each vector pins the interval sequence (the model draws
/// uniformly in `[0, interval)`, the same law); `envoy_25_250_intervals` is the largest
/// wait of each retry. The pre-1.14 formula: `min(R % ((2^n − 1)·base), max)`.
#[test]
fn upstream_envoy_backoff_vectors_replay() {
    use crate::model::backoff::max_wait;
    let file = "grpc_core_envoy_vectors.txt";
    for (key, base, max, r) in [
        ("envoy_5_100_r9999", 5, 100, 9999u64),
        ("envoy_25_30_r27", 25, 30, 27),
    ] {
        let b = Backoff::Envoy(Envoy {
            base_ms: base,
            max_ms: max,
            formula: envoy_backoff::Formula::Current,
        });
        let got: Vec<String> = (1..=vector(file, key).len() as u32)
            .map(|k| (r % (max_wait(&b, k) / MS)).to_string())
            .collect();
        assert_eq!(got, vector(file, key), "{key}");
    }
    let current = Backoff::Envoy(Envoy {
        base_ms: 25,
        max_ms: 250,
        formula: envoy_backoff::Formula::Current,
    });
    let want: Vec<u64> = vector(file, "envoy_25_250_intervals")
        .iter()
        .map(|v| v.parse::<u64>().unwrap() * MS)
        .collect();
    assert_eq!(
        waits(current, &vec![0.999_999; want.len()], no_failure()),
        want
    );
    let old = Backoff::Envoy(Envoy {
        base_ms: 25,
        max_ms: 250,
        formula: envoy_backoff::Formula::Documented,
    });
    let want: Vec<u64> = vector(file, "envoy_old_25_250_rmax")
        .iter()
        .map(|v| v.parse::<u64>().unwrap() * MS)
        .collect();
    assert_eq!(waits(old, &vec![0.999_999; want.len()], no_failure()), want);
    // R = 12345: ranges 25, 75, 175, 375, ...: 20, 45, 95, then 345 capped at 250.
    let want: Vec<u64> = vector(file, "envoy_old_25_250_r12345")
        .iter()
        .map(|v| v.parse::<u64>().unwrap() * MS)
        .collect();
    let us: Vec<f64> = [25u64, 75, 175, 375, 375, 375]
        .iter()
        .map(|&range| ((12_345 % range) as f64 + 0.5) / range as f64)
        .collect();
    assert_eq!(waits(old, &us, no_failure()), want);
}

/// Envoy as it ships: the circuit breaker's `max_retries = 3` (concurrent retries,
/// `retries().count() < max()`), whatever the requests in flight; the preset uses it,
/// and the optional `RetryBudget` (20% / 3) is `budget = { preset = "envoy_retry_budget" }`.
#[test]
fn upstream_envoy_preset_limits_concurrent_retries_with_max_retries_3() {
    let mut b = Budget::new(BudgetConfig::EnvoyMaxRetries(envoy_max_retries::Config {
        max_retries: 3,
    }));
    let ask = |b: &mut Budget| b.ask(0, RetryCause::default());
    for _ in 0..100 {
        b.on_sent(false); // 100 requests in flight change nothing
    }
    assert_eq!(
        (0..4).map(|_| ask(&mut b)).collect::<Vec<_>>(),
        vec![Some(1), Some(1), Some(1), None]
    );
    b.release(1, true);
    assert_eq!(ask(&mut b), Some(1));
    assert_eq!(ask(&mut b), None);

    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\npreset = \"envoy\"\n"),
        &[],
    );
    let layer = &l.scenario.fleets[0].layers[0];
    assert_eq!(
        layer.budget,
        Some(BudgetConfig::EnvoyMaxRetries(envoy_max_retries::Config {
            max_retries: 3
        }))
    );
    let e = crate::explain::explain(&l.scenario).render();
    assert!(e.contains("circuit breaker max_retries"), "{e}");
    let l = scenario(
        &format!(
            "{BASE}[[fleets.layers]]\npreset = \"envoy\"\nbudget = {{ preset = \"envoy_retry_budget\" }}\n"
        ),
        &[],
    );
    assert_eq!(
        l.scenario.fleets[0].layers[0].budget,
        Some(BudgetConfig::Envoy(envoy::Config {
            percent: 20.0,
            min_concurrency: 3,
            count_backoff: false
        }))
    );
}

/// Envoy's `retry_on = "5xx"` retries a 503 but not a 429 (`rejected_5xx`). Ten requests
/// at once on one busy server without a queue: nine rejections. With 429 none is
/// retried; with 503 three are (the circuit breaker's 3 concurrent retries, held while
/// they wait in backoff) and six are refused.
#[test]
fn upstream_envoy_5xx_does_not_retry_429() {
    for (status, attempts, refused) in [(429, 10, 0), (503, 13, 6)] {
        let text = format!(
            r#"
duration = "1s"
drain = "5s"
[dependency]
servers = 1
queue_limit = 0
reject_status = {status}
service_time = {{ kind = "deterministic", value = "1s" }}
[[fleets]]
name = "f"
arrival = {{ kind = "burst", at = "0s", count = 10 }}
[[fleets.layers]]
preset = "envoy"
instances = 1
"#
        );
        let r = run(&text, &[]);
        assert_eq!(count(&r, "attempts"), attempts, "{status}");
        assert_eq!(count(&r, "budget_exhausted"), refused, "{status}");
    }
    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\npreset = \"envoy\"\n"),
        &[],
    );
    let on = l.scenario.fleets[0].layers[0].retry_on;
    assert!(on.retries(Class::Rejected, 503) && !on.retries(Class::Rejected, 429));
    assert!(on.retries(Class::Error, 429) && on.retries(Class::Timeout, 429));
    let e = crate::explain::explain(&l.scenario).render();
    assert!(e.contains("rejected_5xx (503, not 429)"), "{e}");
}

/// The harness's `fails(call, attempt, p)`: a SplitMix64 hash, in Java `long` arithmetic.
fn r4j_harness_fails(call: u64, attempt: u64, p: f64) -> bool {
    let mut z = call
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(attempt.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64 / 9_007_199_254_740_992.0) < p
}

/// Resilience4j's retry budget as proposed in pull request #2373 (`BudgetRetryImpl`,
/// unreleased), replayed call for call against the trace its harness wrote
/// (`resilience4j_pr2373_BudgetHarness.java`: one thread, `Retry.decorateSupplier`, 3
/// attempts 500 ms apart on a mutable clock, budget defaults 10 s / 10% / 100). Each
/// call is driven through the budget as the model's layer drives it: `on_call`,
/// `on_failed` then `refused_failure` (asked before anything is recorded), `ask` and
/// `on_retry_scheduled` for a retry (the error is recorded when the sleep ends), and
/// `on_succeeded` (recorded twice).
#[test]
fn upstream_resilience4j_pr2373_budget_trace_replays_call_for_call() {
    let trace = upstream("resilience4j_pr2373_budget_trace.txt");
    let mut lines = 0;
    for line in trace.lines() {
        let (head, attempts) = line.split_once(" attempts ").unwrap();
        let kv: std::collections::BTreeMap<&str, &str> = head
            .split_whitespace()
            .map(|x| x.split_once('=').unwrap())
            .collect();
        let p: f64 = kv["p"].parse().unwrap();
        let gap: u64 = kv["gap_ms"].parse().unwrap();
        let calls: u64 = kv["calls"].parse().unwrap();
        let expect: Vec<u32> = attempts
            .split_whitespace()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(expect.len() as u64, calls);
        let mut b = Budget::new(BudgetConfig::Resilience4j(resilience4j::Config {
            window_s: 10,
            max_retry_ratio: 10.0,
            min_sample_size: 100,
        }));
        let mut clock = 0u64;
        let mut got = Vec::with_capacity(expect.len());
        for call in 0..calls {
            clock = clock.max(call * gap * MS);
            b.on_call(clock);
            let mut attempt = 0u32;
            loop {
                attempt += 1;
                b.on_sent(attempt > 1);
                b.on_done();
                if !r4j_harness_fails(call, u64::from(attempt), p) {
                    b.on_succeeded(clock, 0);
                    break;
                }
                b.on_failed(clock, Class::Error, true);
                if b.refused_failure() || attempt >= 3 {
                    break;
                }
                assert_eq!(b.ask(clock, RetryCause::default()), Some(0));
                clock += 500 * MS;
                b.on_retry_scheduled(clock);
            }
            got.push(attempt);
        }
        let first_bad = got.iter().zip(&expect).position(|(g, e)| g != e);
        assert_eq!(
            first_bad, None,
            "{head}: first mismatch at call {first_bad:?}"
        );
        lines += 1;
    }
    assert_eq!(lines, 9);
}

/// The same budget with several calls in flight at once, replayed call for call
/// against the trace of `resilience4j_pr2373_BudgetConcurrentHarness.java`: threads
/// share one budget and call through `Retry.decorateSupplier` in virtual time, one
/// running at a time; each thread makes its calls `gap_ms` apart from `start_ms` ×
/// its index, an attempt takes `attempt_ms`, a retry sleeps 500 ms. At one instant
/// backoff wakes go first (where the library records their failures), then attempt
/// ends, then call starts, each in the order scheduled: the schedule here is the
/// same, so the budget sees the same interleaving (its records are due at the wake,
/// as the model records them).
#[test]
fn upstream_resilience4j_pr2373_concurrent_budget_trace_replays_call_for_call() {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    const WAKE: u8 = 0;
    const DONE: u8 = 1;
    const CALL: u8 = 2;
    let trace = upstream("resilience4j_pr2373_budget_concurrent_trace.txt");
    let (mut lines, mut refusing) = (0, 0);
    for line in trace.lines() {
        let (head, attempts) = line.split_once(" attempts ").unwrap();
        let kv: std::collections::BTreeMap<&str, u64> = head
            .split_whitespace()
            .filter(|x| !x.starts_with("p="))
            .map(|x| x.split_once('=').unwrap())
            .map(|(k, v)| (k, v.parse().unwrap()))
            .collect();
        let p: f64 = head.split_whitespace().next().unwrap()[2..]
            .parse()
            .unwrap();
        let threads = kv["threads"];
        let (gap, start, dur) = (
            kv["gap_ms"] * MS,
            kv["start_ms"] * MS,
            kv["attempt_ms"] * MS,
        );
        let per_thread = kv["calls"] / threads;
        let expect: Vec<u32> = attempts
            .split_whitespace()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(expect.len() as u64, kv["calls"]);
        let mut b = Budget::new(BudgetConfig::Resilience4j(resilience4j::Config {
            window_s: 10,
            max_retry_ratio: 10.0,
            min_sample_size: 100,
        }));
        // Per thread: its call index and the attempt of that call.
        let mut state = vec![(0u64, 0u32); threads as usize];
        let mut got = vec![0u32; expect.len()];
        let mut queue = BinaryHeap::new();
        let mut seq = 0u64;
        let mut at = |q: &mut BinaryHeap<_>, t: u64, now: u64, kind: u8, who: u64| {
            q.push(Reverse((t.max(now), kind, seq, who)));
            seq += 1;
        };
        for j in 0..threads {
            at(&mut queue, j * start, 0, CALL, j);
        }
        while let Some(Reverse((now, kind, _, j))) = queue.pop() {
            let (i, attempt) = &mut state[j as usize];
            let call = *i * threads + j;
            match kind {
                CALL => {
                    b.on_call(now);
                    *attempt = 1;
                    b.on_sent(false);
                    at(&mut queue, now + dur, now, DONE, j);
                    continue;
                }
                WAKE => {
                    *attempt += 1;
                    b.on_sent(true);
                    at(&mut queue, now + dur, now, DONE, j);
                    continue;
                }
                _ => {}
            }
            b.on_done();
            if r4j_harness_fails(call, u64::from(*attempt), p) {
                b.on_failed(now, Class::Error, true);
                if !b.refused_failure() && *attempt < 3 {
                    assert_eq!(b.ask(now, RetryCause::default()), Some(0));
                    b.on_retry_scheduled(now + 500 * MS);
                    at(&mut queue, now + 500 * MS, now, WAKE, j);
                    continue;
                }
            } else {
                b.on_succeeded(now, 0);
            }
            got[call as usize] = *attempt;
            *i += 1;
            if *i < per_thread {
                at(&mut queue, j * start + *i * gap, now, CALL, j);
            }
        }
        let first_bad = got.iter().zip(&expect).position(|(g, e)| g != e);
        assert_eq!(
            first_bad, None,
            "{head}: first mismatch at call {first_bad:?}"
        );
        let refused = (0..expect.len())
            .filter(|&c| expect[c] < 3 && r4j_harness_fails(c as u64, u64::from(expect[c]), p))
            .count();
        refusing += usize::from(refused > 0);
        lines += 1;
    }
    assert_eq!(lines, 9);
    assert_eq!(refusing, 6, "the scripts the budget refuses in");
}

/// In a run: sustained total failure, one client at 20 requests/s, the default budget
/// (warm-up 100, 10%) and 3 attempts 500 ms apart. Refused failures are not recorded,
/// so the window empties and retries come back about once a window: every 10 s window
/// of a long outage sees retries again, which a budget recording every failure would
/// lock out for good.
#[test]
fn upstream_resilience4j_budget_retries_resume_in_bursts_under_sustained_failure() {
    let layer = "max_attempts = 3\nbackoff = { kind = \"resilience4j\", initial = \"500ms\" }\nbudget = { preset = \"resilience4j\" }";
    let r = run(
        &dead(layer, r#"{ kind = "constant", rate = 20 }"#, "120s"),
        &[],
    );
    let logical = count(&r, "logical");
    let attempts = count(&r, "attempts");
    let retries = attempts - logical;
    // Locked out after the warm-up, retries would stop near 100 records (~50 retries);
    // coming back each window they keep going: ~1 burst per 10 s over 120 s.
    assert!(retries > 300, "{retries} retries of {logical} calls");
    assert!(
        attempts < logical * 2,
        "{attempts} attempts of {logical} calls"
    );
    let e = {
        let text = dead(layer, r#"{ kind = "constant", rate = 20 }"#, "120s");
        crate::explain::explain(&scenario(&text, &[]).scenario).render()
    };
    assert!(e.contains("pull request #2373"), "{e}");
}

/// What `explain` says of the Resilience4j budget is what the run does. In
/// `scenarios/presets.toml` with the outage lasting to the end and a layer of 3
/// attempts 500 ms apart with the budget: one instance at 400 calls/s retries in bursts
/// of about 400 (a backoff's calls, 200, each retried twice: none is recorded before
/// its backoff ends), about 1.09 attempts per call; 50 instances at 8 calls/s each
/// retry about 108 times a window, more than one retry per call (about 2.2). So the
/// budget caps no call: explain says so instead of "1 attempt per request".
#[test]
fn the_resilience4j_budget_text_matches_the_bursts_the_presets_scenario_measures() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/presets.toml"),
    )
    .unwrap();
    let layer = |instances: u32| {
        format!(
            "fleets.0.layers.0={{name=\"client\", max_attempts=3, instances={instances}, backoff={{preset=\"resilience4j\"}}, budget={{preset=\"resilience4j\"}}}}"
        )
    };
    let mut per_call = Vec::new();
    for instances in [1, 50] {
        let sets = [layer(instances), "outages.0.end=150s".to_string()];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let r = run(&text, &sets);
        // The outage from 40 s on (after the first, warm-up burst) to the end.
        let rows = &r.metrics.buckets[40..150];
        let offered: u64 = rows.iter().map(|b| b.offered).sum();
        let inbound: u64 = rows.iter().map(|b| b.inbound).sum();
        per_call.push(inbound as f64 / offered as f64);
        let e = crate::explain::explain(&scenario(&text, &sets).scenario).render();
        assert!(
            e.contains(
                "once the budgets are spent in a sustained total failure: 3 attempts per request"
            ),
            "{e}"
        );
        assert!(
            e.contains("each instance retries in a burst of about 100 retries plus those of every call failing in the backoff after the window drained"),
            "{e}"
        );
        assert!(e.contains("no cap per call"), "{e}");
    }
    assert!((1.05..1.15).contains(&per_call[0]), "{per_call:?}");
    assert!((2.0..2.5).contains(&per_call[1]), "{per_call:?}");
}

/// Resilience4j `IntervalFunction` (core, HEAD): `ofExponentialBackoff(100, 2, 100000)`,
/// `(500, 1.5)`, and `ofExponentialRandomBackoff(500, 1.5, 0.5)` with the draw fixed
/// (`exact_u`) and over 2·10⁶ draws (`rand_exp`: ranges, and means within 0.5% over
/// 200,000 of the model's draws); `randomized_1ms_0.5`: a 1 ms interval gives 1 or 2 ms,
/// never 0 (the floor at 1 ms).
#[test]
fn upstream_resilience4j_interval_vectors_replay() {
    use crate::model::backoff::{max_wait, next_wait};
    let file = "resilience4j_interval_vectors.txt";
    let ms =
        |v: &[String]| -> Vec<u64> { v.iter().map(|x| x.parse::<u64>().unwrap() * MS).collect() };
    let r4j = |initial_ms, multiplier, randomization, max_ms| {
        Backoff::Resilience4j(Resilience4j {
            initial_ms,
            multiplier,
            randomization,
            max_ms,
        })
    };
    let want = ms(&vector(file, "capped_exp_100_2_100000"));
    let got = waits(
        r4j(100, 2.0, 0.0, Some(100_000)),
        &vec![0.0; want.len()],
        no_failure(),
    );
    assert_eq!(got, want);
    let want = ms(&vector(file, "exp_500_1.5"));
    assert_eq!(
        waits(
            r4j(500, 1.5, 0.0, None),
            &vec![0.0; want.len()],
            no_failure()
        ),
        want
    );
    let b = r4j(500, 1.5, 0.5, None);
    let text = upstream(file);
    let mut exact = 0;
    for line in text.lines().filter(|l| l.starts_with("exact_u ")) {
        let items: Vec<String> = line
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect();
        let u: f64 = items[0].parse().unwrap();
        let want = ms(&items[1..]);
        assert_eq!(waits(b, &vec![u; want.len()], no_failure()), want, "{line}");
        exact += 1;
    }
    assert_eq!(exact, 4);
    let mut rng = crate::engine::stream(7, "r4j-vectors");
    for line in text
        .lines()
        .filter(|l| l.starts_with("rand_exp_500_1.5_0.5 "))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        let k: u32 = w[1].trim_start_matches("k=").parse().unwrap();
        let (min, max, mean): (u64, u64, f64) = (
            w[3].parse().unwrap(),
            w[5].parse().unwrap(),
            w[7].parse().unwrap(),
        );
        let mut prev = 0;
        assert_eq!(
            wait_u(&b, k, &mut prev, &no_failure(), 0.0),
            min * MS,
            "{line}"
        );
        assert_eq!(
            wait_u(&b, k, &mut prev, &no_failure(), 1.0 - 1e-12),
            max * MS,
            "{line}"
        );
        assert_eq!(max_wait(&b, k), max * MS, "{line}");
        let n = 200_000;
        let sum: f64 = (0..n)
            .map(|_| next_wait(&b, k, &mut prev, &no_failure(), &mut rng) as f64 / MS as f64)
            .sum();
        let m = sum / f64::from(n);
        assert!((m / mean - 1.0).abs() < 0.005, "{line}: mean {m}");
    }
    let w = vector(file, "randomized_1ms_0.5");
    let one = r4j(1, 1.0, 0.5, None);
    let mut prev = 0;
    assert_eq!(
        wait_u(&one, 1, &mut prev, &no_failure(), 0.0),
        w[1].parse::<u64>().unwrap() * MS
    );
    assert_eq!(max_wait(&one, 1), w[3].parse::<u64>().unwrap() * MS);
    assert!((0..10_000).all(|_| next_wait(&one, 1, &mut prev, &no_failure(), &mut rng) >= MS));
}

/// SRE adaptive throttling counts as accepted every answer that is not a throttling
/// rejection (the default, grpc-go's `adaptive.go`): against a dependency that always
/// errors it never throttles, while `accepts = "success"` throttles almost everything;
/// against one that always rejects, both throttle alike.
#[test]
fn upstream_sre_throttling_accepts_every_answer_but_a_rejection() {
    let l = scenario(
        &format!("{BASE}[[fleets.layers]]\nmax_attempts = 1\nlimiter = {{ preset = \"sre\" }}\n"),
        &[],
    );
    assert!(matches!(
        l.scenario.fleets[0].layers[0].limiter,
        Some(LimiterConfig::AdaptiveThrottling(
            adaptive_throttling::Config {
                accepts: Accepts::NotRejected,
                ..
            }
        ))
    ));
    let layer = |accepts: &str| {
        format!("max_attempts = 1\nlimiter = {{ kind = \"adaptive_throttling\"{accepts} }}")
    };
    let errors = |accepts: &str| {
        let r = run(&dead(&layer(accepts), CONST_100, "60s"), &[]);
        (count(&r, "attempts"), count(&r, "budget_exhausted"))
    };
    assert_eq!(errors(""), (6000, 0));
    let (sent, throttled) = errors(", accepts = \"success\"");
    assert!(
        sent < 200 && throttled > 5800,
        "{sent} sent, {throttled} throttled"
    );
    for accepts in ["", ", accepts = \"success\""] {
        let text = format!(
            r#"
duration = "60s"
[dependency]
servers = 1
queue_limit = 0
service_time = {{ kind = "deterministic", value = "1ms" }}
[[fleets]]
name = "f"
arrival = {CONST_100}
[[fleets.layers]]
instances = 1
{}
[[outages]]
start = "0s"
end = "100s"
mode = {{ kind = "capacity", servers = 0 }}
"#,
            layer(accepts)
        );
        let r = run(&text, &[]);
        assert!(
            count(&r, "attempts") < 200,
            "{accepts}: {}",
            count(&r, "attempts")
        );
    }
}

/// Polly counts a cancelled call as a success for its breaker (the default
/// `ShouldHandle` does not handle `OperationCanceledException`), so a cancelled
/// half-open probe closes the circuit. Errors for 5 s trip the breaker; then the
/// dependency stops answering and the layer above cancels every call after 200 ms
/// (`attempt_timeout` with `cancel_on_timeout`): the Polly breaker's probe closes it
/// and it stays closed, where a breaker counting cancellations as failures keeps
/// re-tripping.
#[test]
fn upstream_polly_breaker_counts_a_cancelled_call_as_a_success() {
    let trips = |breaker: &str| {
        let text = format!(
            r#"
duration = "60s"
drain = "5s"
[dependency]
servers = "unlimited"
service_time = {{ kind = "deterministic", value = "1ms" }}
[[fleets]]
name = "f"
arrival = {CONST_100}
[[fleets.layers]]
instances = 1
max_attempts = 1
attempt_timeout = "200ms"
cancel_on_timeout = true
[[fleets.layers]]
max_attempts = 1
breaker = {breaker}
[[outages]]
start = "0s"
end = "5s"
mode = {{ kind = "fail", after = "1ms" }}
[[outages]]
start = "5s"
end = "100s"
mode = {{ kind = "blackhole" }}
"#
        );
        let r = run(&text, &[]);
        (count(&r, "breaker_trips"), count(&r, "breaker_open"))
    };
    let polly = "{ kind = \"polly\", failure_ratio = 0.1, min_throughput = 2, sampling_duration = \"30s\", break_duration = \"1s\" }";
    let (t, open) = trips(polly);
    assert!((1..=6).contains(&t), "polly: {t} trips");
    assert!(open < 600, "polly: {open} refused");
    let consecutive = "{ kind = \"consecutive\", failures = 2, open_for = \"1s\" }";
    let (t, _) = trips(consecutive);
    assert!(t >= 40, "consecutive: {t} trips");
}

// ----- Brooker's retry circuit breaker (failure_ratio) -----------------------------------

/// PRESETS.md §3.9 (`mbrooker/simulator_example` `retry_strategy.py`): one request whose
/// every attempt fails, 4 attempts allowed: the failure is counted first (1 / 1 > 0.1),
/// so it makes 1 attempt.
#[test]
fn failure_ratio_a_fresh_client_never_retries_its_first_failure() {
    let layer = "max_attempts = 4\nbudget = { kind = \"failure_ratio\", max_ratio = 0.1, window = \"unlimited\" }";
    let r = run(
        &dead(layer, r#"{ kind = "burst", at = "0s", count = 1 }"#, "1s"),
        &[],
    );
    assert_eq!(count(&r, "logical"), 1);
    assert_eq!(count(&r, "attempts"), 1);
    assert_eq!(count(&r, "budget_exhausted"), 1);
    // The defaults are Brooker's: 0.1, cumulative.
    let l = scenario(
        &format!(
            "{BASE}[[fleets.layers]]\nmax_attempts = 4\nbudget = {{ kind = \"failure_ratio\" }}\n"
        ),
        &[],
    );
    assert_eq!(
        l.scenario.fleets[0].layers[0].budget,
        Some(BudgetConfig::FailureRatio(failure_ratio::Config {
            max_ratio: 0.1,
            window: None
        }))
    );
    let e = crate::explain::explain(&l.scenario).render();
    assert!(e.contains("failures / first tries > 0.1"), "{e}");
    assert!(e.contains("cumulative since the start"), "{e}");
}

/// 100 clients at 10 requests/s each, independent failures p = 0.5, 3 retries allowed:
/// failures outpace 10% of the first tries from the start, so retries all but never
/// happen: about 1.00 attempts per request (no budget: (1 − p⁴)/(1 − p) = 1.875).
#[test]
fn failure_ratio_holds_the_load_near_one_at_half_failure() {
    let text = r#"
duration = "60s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "1ms" }
error_rate = 0.5
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 1000, clients = 100 }
[[fleets.layers]]
max_attempts = 4
budget = { kind = "failure_ratio", max_ratio = 0.1, window = "unlimited" }
"#;
    let r = run(text, &[]);
    let a = col(&r, "amplification");
    assert!((1.0..1.01).contains(&a), "{a}");
    assert_eq!(count(&r, "logical"), 60_000);
}

/// A finite window is a sliding ratio over that time, in 10 slices: failures that left
/// the window no longer refuse retries; cumulative, they still do.
#[test]
fn failure_ratio_window_slides_in_slices() {
    let script = |window| {
        let mut b = Budget::new(BudgetConfig::FailureRatio(failure_ratio::Config {
            max_ratio: 0.1,
            window,
        }));
        let mut out = Vec::new();
        for _ in 0..20 {
            b.on_call(0);
        }
        for _ in 0..5 {
            b.on_failed(0, Class::Error, true);
        }
        out.push(b.ask(0, RetryCause::default()).is_some()); // 5 / 20 > 0.1
                                                             // 10.5 s later the slices of second 0 have left a 10 s window.
        let t = 10 * S + S / 2;
        for _ in 0..20 {
            b.on_call(t);
        }
        b.on_failed(t, Class::Error, true);
        out.push(b.ask(t, RetryCause::default()).is_some()); // window: 1 / 20
                                                             // A refused local outcome is not a failure of the layer below.
        b.on_failed(t, Class::BreakerOpen, true);
        out.push(b.ask(t, RetryCause::default()).is_some());
        out
    };
    assert_eq!(script(Some(10 * S)), vec![false, true, true]);
    // Cumulative: 6 / 40 > 0.1.
    assert_eq!(script(None), vec![false, false, false]);
}

#[test]
fn failure_ratio_bad_values_name_their_field() {
    for (budget, field, rule) in [
        (
            "{ kind = \"failure_ratio\", max_ratio = -1 }",
            "budget.max_ratio",
            "between 0 and",
        ),
        (
            "{ kind = \"failure_ratio\", window = \"0s\" }",
            "budget.window",
            "positive",
        ),
        (
            "{ kind = \"failure_ratio\", window = \"forever\" }",
            "budget.window",
            "unlimited",
        ),
    ] {
        let src = crate::scenario::Source {
            path: "bad.toml".into(),
            stem: "bad".into(),
            text: format!("{BASE}[[fleets.layers]]\nmax_attempts = 3\nbudget = {budget}\n"),
        };
        let e = crate::scenario::load(src, &[]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("fleets[0].layers[0].{field}")) || e.contains("budget"),
            "{budget}: {e}"
        );
        assert!(e.contains(rule), "{budget}: {e}");
    }
}
