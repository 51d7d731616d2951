//! Backoff: the wait after failed attempt `k` (k = 1, 2, ...) before attempt `k + 1`.
//!
//! `e_k = min(cap, base · multiplier^(k−1))`, then by jitter:
//! - `none`: `e_k`;
//! - `full`: `uniform(0, e_k)`;
//! - `equal`: `e_k/2 + uniform(0, e_k/2)`;
//! - `decorrelated`: `d_k = min(cap, uniform(base, 3·d_(k−1)))`, `d_0 = base`
//!   (the previous wait is the caller's state).
//!
//! The kinds named after a library reproduce that library's arithmetic, in its units and
//! roundings (see each variant of [`Backoff`] and [`wait_u`], which takes the uniform
//! draw `u` so that tests can pass exact values). What a call carries from one retry to
//! the next (gRPC's current interval, Polly's `prev`, Finagle's last wait) is the
//! caller's `prev`, started at [`initial_state`].
//!
//! ```
//! use retrysim::model::backoff::{exponential_ceiling, wait};
//! use retrysim::model::config::{Backoff, Jitter};
//! let b = Backoff::Exponential { base: 10, cap: 50, multiplier: 2.0, jitter: Jitter::None };
//! let mut rng = retrysim::engine::stream(1, "doc");
//! let mut prev = 10;
//! let waits: Vec<u64> = (1..=4).map(|k| wait(&b, k, &mut prev, &mut rng)).collect();
//! assert_eq!(waits, vec![10, 20, 40, 50]);
//! assert_eq!(exponential_ceiling(10, 50, 2.0, 3), 40);
//! ```

use rand::Rng;
use rand::RngExt;

use crate::engine::time::{from_f64_ns, MILLISECOND, SECOND};
use crate::engine::Nanos;
use crate::model::config::{AwsVersion, Backoff, EnvoyFormula, GrpcFormula, Jitter, PollyType};

/// `min(cap, base · multiplier^(k−1))`, rounded to the nanosecond, saturating.
#[inline]
pub fn exponential_ceiling(base: Nanos, cap: Nanos, multiplier: f64, k: u32) -> Nanos {
    let exp = k.saturating_sub(1).min(4096) as i32;
    let e = base as f64 * multiplier.powi(exp);
    from_f64_ns(e).min(cap)
}

/// Uniform integer in `[lo, hi)`, or `lo` when the range is empty.
#[inline]
fn uniform<R: Rng + ?Sized>(rng: &mut R, lo: Nanos, hi: Nanos) -> Nanos {
    if hi > lo {
        rng.random_range(lo..hi)
    } else {
        lo
    }
}

/// The wait after failed attempt `k`; `prev` is the previous decorrelated wait
/// (start it at `base`).
#[inline]
pub fn wait<R: Rng + ?Sized>(b: &Backoff, k: u32, prev: &mut Nanos, rng: &mut R) -> Nanos {
    match *b {
        Backoff::None => 0,
        Backoff::Fixed(d) => d,
        Backoff::Exponential {
            base,
            cap,
            multiplier,
            jitter,
        } => match jitter {
            Jitter::None => exponential_ceiling(base, cap, multiplier, k),
            Jitter::Full => uniform(rng, 0, exponential_ceiling(base, cap, multiplier, k)),
            Jitter::Equal => {
                let e = exponential_ceiling(base, cap, multiplier, k);
                let half = e / 2;
                half + uniform(rng, 0, e - half)
            }
            Jitter::Decorrelated => {
                let hi = prev.saturating_mul(3);
                let d = uniform(rng, base, hi).min(cap);
                *prev = d;
                d
            }
        },
        _ => next_wait(b, k, prev, &Failure::default(), rng),
    }
}

/// The largest wait after failed attempt `k` (for `explain`'s schedule bound): a bound
/// no draw reaches or exceeds, Retry-After aside.
pub fn max_wait(b: &Backoff, k: u32) -> Nanos {
    let k = k.max(1);
    match *b {
        Backoff::None => 0,
        Backoff::Fixed(d) => d,
        Backoff::Exponential {
            base,
            cap,
            multiplier,
            jitter,
        } => match jitter {
            Jitter::Decorrelated => {
                let three_k = 3f64.powi(k.min(4096) as i32);
                from_f64_ns(base as f64 * three_k).min(cap)
            }
            _ => exponential_ceiling(base, cap, multiplier, k),
        },
        Backoff::Grpc {
            initial,
            max,
            multiplier,
            formula,
        } => {
            let i = grpc_interval(initial, max, multiplier, k);
            match formula {
                GrpcFormula::Pre2024 => i,
                GrpcFormula::Current => grpc_jitter_bound(i),
            }
        }
        Backoff::Envoy {
            base_ms,
            max_ms,
            formula,
        } => {
            let ms = match formula {
                EnvoyFormula::Current => envoy_interval(base_ms, max_ms, k),
                EnvoyFormula::Documented => envoy_documented_range(base_ms, max_ms, k).min(max_ms),
            };
            ms.saturating_mul(MILLISECOND)
        }
        Backoff::Polly {
            delay_ticks,
            backoff_type,
            jitter,
            max_delay_ticks,
        } => {
            let ticks = polly_max_ticks(delay_ticks, backoff_type, jitter, k);
            let ticks = max_delay_ticks.map_or(ticks, |m| ticks.min(m));
            ticks.saturating_mul(100)
        }
        Backoff::Resilience4j {
            initial_ms,
            multiplier,
            randomization,
            max_ms,
        } => {
            let i = r4j_interval(initial_ms, multiplier, k);
            // The draw stays below i·(1 + f) + 1: truncated, at most its ceiling.
            let ms = if randomization > 0.0 {
                ((i as f64 * (1.0 + randomization)).ceil() as u64).max(1)
            } else {
                i
            };
            max_ms.map_or(ms, |m| ms.min(m)).saturating_mul(MILLISECOND)
        }
        Backoff::AwsLegacy { base, growth } => {
            let b = base.map_or(1.0, |b| b as f64 / SECOND as f64);
            secs_to_ns_ceil(b * growth.powi((k - 1).min(2000) as i32))
        }
        Backoff::AwsStandard { max_backoff, .. } => {
            // The throttling scale (1 s) is the largest of version 2.1's scales.
            let e = 2f64.powi((k - 1).min(2000) as i32);
            secs_to_ns_ceil(e.min(max_backoff as f64 / SECOND as f64))
        }
        Backoff::Finagle { start, max } => {
            let three = 3f64.powi((k - 1).min(4096) as i32);
            from_f64_ns(start as f64 * three).min(max.max(start))
        }
        Backoff::Tower { min, max, jitter } => {
            let (base, maxd) = tower_base(min, max, k);
            let top = base as f64 * (1.0 + jitter);
            let top = if top >= maxd as f64 {
                maxd
            } else {
                top as u128
            };
            u64::try_from(top.min(maxd)).unwrap_or(u64::MAX)
        }
    }
}

/// The wait the largest waits settle at as `k` grows (`u64::MAX` when they grow
/// without bound), for `explain`'s sum over long schedules.
pub fn settled_wait(b: &Backoff) -> Nanos {
    match *b {
        Backoff::None => 0,
        Backoff::Fixed(d) => d,
        Backoff::Exponential { cap, .. } => cap,
        Backoff::Grpc { max, formula, .. } => match formula {
            GrpcFormula::Pre2024 => max,
            GrpcFormula::Current => grpc_jitter_bound(max),
        },
        Backoff::Envoy { max_ms, .. } => max_ms.saturating_mul(MILLISECOND),
        Backoff::Polly {
            delay_ticks,
            backoff_type,
            jitter,
            max_delay_ticks,
        } => {
            let grows = delay_ticks > 0 && backoff_type != PollyType::Constant;
            match (grows, max_delay_ticks) {
                (false, m) => {
                    let t = polly_max_ticks(delay_ticks, backoff_type, jitter, 1);
                    m.map_or(t, |m| t.min(m)).saturating_mul(100)
                }
                (true, Some(m)) => m.saturating_mul(100),
                (true, None) => u64::MAX,
            }
        }
        Backoff::Resilience4j {
            multiplier,
            max_ms,
            initial_ms,
            randomization,
        } => match max_ms {
            Some(m) if multiplier > 1.0 => m.saturating_mul(MILLISECOND),
            _ if multiplier <= 1.0 => max_wait(
                &Backoff::Resilience4j {
                    initial_ms,
                    multiplier,
                    randomization,
                    max_ms,
                },
                1,
            ),
            _ => u64::MAX,
        },
        Backoff::AwsLegacy { growth, base } => {
            if growth <= 1.0 {
                max_wait(&Backoff::AwsLegacy { base, growth }, 1)
            } else {
                u64::MAX
            }
        }
        Backoff::AwsStandard { max_backoff, .. } => {
            secs_to_ns_ceil(max_backoff as f64 / SECOND as f64)
        }
        Backoff::Finagle { start, max } => max.max(start),
        Backoff::Tower { max, .. } => max.unwrap_or(u64::MAX),
    }
}

/// Whether the waits of a backoff are random: false for a fixed or unjittered schedule.
pub fn is_jittered(b: &Backoff) -> bool {
    match *b {
        Backoff::None | Backoff::Fixed(_) => false,
        Backoff::Exponential { jitter, .. } => jitter != Jitter::None,
        Backoff::Polly { jitter, .. } => jitter,
        Backoff::Resilience4j { randomization, .. } => randomization > 0.0,
        Backoff::AwsLegacy { base, .. } => base.is_none(),
        Backoff::Tower { jitter, .. } => jitter > 0.0,
        Backoff::Grpc { .. }
        | Backoff::Envoy { .. }
        | Backoff::AwsStandard { .. }
        | Backoff::Finagle { .. } => true,
    }
}

// ----- the library kinds ---------------------------------------------------------

/// What a failed attempt tells the backoff beyond its number.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Failure {
    /// A throttling error (in the model: a rejection with status 429).
    pub throttled: bool,
    /// The Retry-After (gRPC: server pushback) the layer honours, when the failure
    /// carried one and the layer respects it.
    pub retry_after: Option<Nanos>,
}

/// The state a call starts its backoff with: `base` for decorrelated jitter, gRPC's
/// `initialBackoff`, 0 otherwise (Polly's `prev = 0.0` has the bits 0).
#[inline]
pub fn initial_state(b: &Backoff) -> Nanos {
    match *b {
        Backoff::Exponential { base, .. } => base,
        Backoff::Grpc { initial, .. } => initial,
        _ => 0,
    }
}

/// Whether the wait after failed attempt `k` needs a uniform draw.
fn draws(b: &Backoff, k: u32, prev: Nanos, f: &Failure) -> bool {
    match *b {
        Backoff::None | Backoff::Fixed(_) => false,
        Backoff::Exponential { jitter, .. } => jitter != Jitter::None,
        Backoff::Grpc { .. } => f.retry_after.is_none(),
        Backoff::Envoy { .. } | Backoff::AwsStandard { .. } => true,
        Backoff::Polly {
            delay_ticks,
            jitter,
            ..
        } => jitter && delay_ticks > 0,
        Backoff::Resilience4j { randomization, .. } => randomization > 0.0,
        Backoff::AwsLegacy { base, .. } => base.is_none(),
        Backoff::Finagle { max, .. } => k >= 2 && finagle_range(prev, max) > 0,
        Backoff::Tower { jitter, .. } => jitter != 0.0,
    }
}

/// The wait after failed attempt `k`, drawing from `rng` as the layer's kind needs; the
/// one entry point of the model. The `none`, `fixed` and `exponential` kinds wait as
/// [`wait`] does and then at least `f.retry_after`; the library kinds draw one
/// `u = rng.random::<f64>()` when they need one and compute [`wait_u`].
#[inline]
pub fn next_wait<R: Rng + ?Sized>(
    b: &Backoff,
    k: u32,
    prev: &mut Nanos,
    f: &Failure,
    rng: &mut R,
) -> Nanos {
    match b {
        Backoff::None | Backoff::Fixed(_) | Backoff::Exponential { .. } => {
            let w = wait(b, k, prev, rng);
            match f.retry_after {
                Some(ra) => w.max(ra),
                None => w,
            }
        }
        _ => {
            let u = if draws(b, k, *prev, f) {
                rng.random::<f64>()
            } else {
                0.0
            };
            wait_u(b, k, prev, f, u)
        }
    }
}

/// The wait after failed attempt `k` (1-based) with the uniform draw `u` in `[0, 1)`
/// given, updating the call's state `prev`. The library kinds:
///
/// - `grpc` (grpc-java `RetriableStream.makeRetryDecision` and `intervalWithJitter`):
///   with a pushback `p`, wait `p` and reset the interval to `initial`; otherwise wait
///   `(long)(interval·(0.4·u + 0.8))` ns (the current formula; `(long)(interval·u)`
///   with `formula = "pre_2024"`) and set `interval = min((long)(interval·multiplier),
///   max)`: the jitter comes after the cap, so a wait can exceed `max` by up to 20%.
/// - `envoy` (`JitteredExponentialBackOffStrategy`): `(u·interval)` ms truncated, with
///   `interval` starting at `base` and doubling while below `max/2`, then `max`; the
///   documented formula: `min(u·(2^r − 1)·base, max)` ms, `r` growing from 1 while
///   `(2^r − 1)·base <= max`.
/// - `polly` (`RetryHelper.GetRetryDelay`, .NET tick arithmetic, 0-based attempt
///   `a = k − 1`): constant `d`, linear `(a+1)·d`, exponential `2^a·d`; with jitter
///   `d + 0.5·d·u − 0.25·d` for constant and linear, DecorrelatedJitterBackoffV2 for
///   exponential; then `min(·, max_delay)`.
/// - `resilience4j` (`IntervalFunction`): `i_1 = initial`, `i_n = (long)(i_(n−1)·m)` ms;
///   randomized `max(1, (long)(i(1−f) + u·(2fi + 1)))` (`randomize`'s
///   `min + random·(max − min + 1)`); then `min(·, max_interval)`.
/// - `aws_legacy` (botocore `delay_exponential`): `base·growth^(k−1)` s, `base = u`.
/// - `aws_standard` (botocore `ExponentialBackoff.delay_amount`): version 2.0
///   `u·min(2^(k−1), 20)` s; version 2.1 `t = u·min(scale·2^(k−1), 20)` s with scale
///   1 (throttling), 0.025 (DynamoDB) or 0.05, and with a Retry-After `r`:
///   `max(t, min(r, t + 5))`.
/// - `finagle` (`Backoff.decorrelatedJittered`): `start`, then
///   `prev + (long)(u·(min(3·prev, max) − prev))` (`max` once `prev >= max/3`).
/// - `tower` (`ExponentialBackoff::next_backoff`): `base = min(min·2^(k−1), max)`, plus
///   `min(Duration::new(secs·u·j, nanos·u·j), max − base)`.
///
/// Seconds from Python (botocore) become nanoseconds rounded up, as CPython's
/// `time.sleep` rounds its timeout. The library kinds honour a Retry-After as
/// `max(wait, retry_after)` unless their library defines its own rule (gRPC, AWS 2.1).
/// For `none`, `fixed` and `exponential`, `u` stands for the draw the model makes
/// (`full`: `floor(u·e_k)`; the model draws the integer directly, with the same law).
pub fn wait_u(b: &Backoff, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
    let k = k.max(1);
    let generic = |w: Nanos| f.retry_after.map_or(w, |ra| w.max(ra));
    match *b {
        Backoff::None => generic(0),
        Backoff::Fixed(d) => generic(d),
        Backoff::Exponential {
            base,
            cap,
            multiplier,
            jitter,
        } => {
            let e = exponential_ceiling(base, cap, multiplier, k);
            let w = match jitter {
                Jitter::None => e,
                Jitter::Full => scale(u, e),
                Jitter::Equal => e / 2 + scale(u, e - e / 2),
                Jitter::Decorrelated => {
                    let hi = prev.saturating_mul(3);
                    let d = if hi > base {
                        base + scale(u, hi - base)
                    } else {
                        base
                    };
                    let d = d.min(cap);
                    *prev = d;
                    d
                }
            };
            generic(w)
        }
        Backoff::Grpc {
            initial,
            max,
            multiplier,
            formula,
        } => {
            if let Some(p) = f.retry_after {
                *prev = initial;
                return p;
            }
            let interval = *prev;
            let factor = match formula {
                GrpcFormula::Current => 0.4 * u + 0.8,
                GrpcFormula::Pre2024 => u,
            };
            let w = (interval as f64 * factor) as u64;
            *prev = ((interval as f64 * multiplier) as u64).min(max);
            w
        }
        Backoff::Envoy {
            base_ms,
            max_ms,
            formula,
        } => {
            let ms = match formula {
                EnvoyFormula::Current => {
                    let interval = envoy_interval(base_ms, max_ms, k);
                    scale(u, interval)
                }
                EnvoyFormula::Documented => {
                    let range = envoy_documented_range(base_ms, max_ms, k);
                    scale(u, range).min(max_ms)
                }
            };
            generic(ms.saturating_mul(MILLISECOND))
        }
        Backoff::Polly {
            delay_ticks,
            backoff_type,
            jitter,
            max_delay_ticks,
        } => {
            let ticks = polly_ticks(
                delay_ticks,
                backoff_type,
                jitter,
                max_delay_ticks,
                k - 1,
                prev,
                u,
            );
            generic(ticks.saturating_mul(100))
        }
        Backoff::Resilience4j {
            initial_ms,
            multiplier,
            randomization,
            max_ms,
        } => {
            let i = r4j_interval(initial_ms, multiplier, k);
            let mut w = if randomization > 0.0 {
                // IntervalFunction.randomize: min + random·(max − min + 1), then
                // (long), at least 1 ms.
                let i = i as f64;
                let delta = randomization * i;
                let lo = i - delta;
                let hi = i + delta;
                ((lo + u * (hi - lo + 1.0)) as i64).max(1) as u64
            } else {
                i
            };
            if let Some(m) = max_ms {
                w = w.min(m);
            }
            generic(w.saturating_mul(MILLISECOND))
        }
        Backoff::AwsLegacy { base, growth } => {
            let b = base.map_or(u, |b| b as f64 / SECOND as f64);
            generic(secs_to_ns_ceil(b * growth.powi((k - 1).min(2000) as i32)))
        }
        Backoff::AwsStandard {
            version,
            max_backoff,
            dynamodb,
        } => {
            let max_s = max_backoff as f64 / SECOND as f64;
            let e = 2f64.powi((k - 1).min(2000) as i32);
            match version {
                AwsVersion::V2_0 => generic(secs_to_ns_ceil(u * e.min(max_s))),
                AwsVersion::V2_1 => {
                    let scale = if f.throttled {
                        1.0
                    } else if dynamodb {
                        0.025
                    } else {
                        0.05
                    };
                    let t = u * (scale * e).min(max_s);
                    let t = match f.retry_after {
                        // x-amz-retry-after carries whole milliseconds.
                        Some(ra) => {
                            let r = (ra / MILLISECOND) as f64 / 1000.0;
                            t.max(r.min(5.0 + t))
                        }
                        None => t,
                    };
                    secs_to_ns_ceil(t)
                }
            }
        }
        Backoff::Finagle { start, max } => {
            let w = if k == 1 {
                start
            } else {
                let cur = *prev;
                let range = finagle_range(cur, max);
                if range == 0 {
                    cur
                } else {
                    cur + scale(u, range)
                }
            };
            *prev = w;
            generic(w)
        }
        Backoff::Tower { min, max, jitter } => {
            let (base, maxd) = tower_base(min, max, k);
            let j = if jitter == 0.0 {
                0
            } else {
                let rj = u * jitter;
                let secs = ((base / 1_000_000_000) as u64 as f64 * rj) as u64;
                let nanos = ((base % 1_000_000_000) as u32 as f64 * rj) as u32;
                let d = u128::from(secs) * 1_000_000_000 + u128::from(nanos);
                d.min(maxd - base)
            };
            generic(u64::try_from(base + j).unwrap_or(u64::MAX))
        }
    }
}

/// `floor(u·n)`, below `n` for `n > 0` (a uniform integer in `[0, n)` from `u`).
#[inline]
fn scale(u: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    ((u * n as f64) as u64).min(n - 1)
}

/// Seconds (from Python) to nanoseconds, rounded up as `time.sleep` rounds a timeout.
fn secs_to_ns_ceil(s: f64) -> Nanos {
    let ns = s * SECOND as f64;
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns.ceil() as u64
    }
}

/// gRPC's interval before retry `k`: `initial`, then `min((long)(i·m), max)` each retry.
fn grpc_interval(initial: Nanos, max: Nanos, multiplier: f64, k: u32) -> Nanos {
    let mut i = initial;
    for _ in 1..k {
        let next = ((i as f64 * multiplier) as u64).min(max);
        if next == i {
            break;
        }
        i = next;
    }
    i
}

/// A bound no current-formula gRPC wait of `interval` exceeds: `interval · 1.2`,
/// rounded up.
fn grpc_jitter_bound(interval: Nanos) -> Nanos {
    from_f64_ns((interval as f64 * 1.2).ceil())
}

/// Envoy's `next_interval_` at retry `k` (milliseconds).
fn envoy_interval(base: u64, max: u64, k: u32) -> u64 {
    let mut interval = base;
    for _ in 1..k {
        if interval < max / 2 {
            interval *= 2;
        } else {
            interval = max;
            break;
        }
    }
    interval
}

/// The range `(2^r − 1)·base` of the pre-1.14 Envoy backoff at retry `k` (milliseconds).
fn envoy_documented_range(base: u64, max: u64, k: u32) -> u64 {
    let range = |r: u32| {
        1u64.checked_shl(r)
            .map(|p| p - 1)
            .and_then(|m| m.checked_mul(base))
            .unwrap_or(u64::MAX)
    };
    let mut r = 1u32;
    for _ in 1..k {
        if range(r) <= max && r < 63 {
            r += 1;
        } else {
            break;
        }
    }
    range(r)
}

/// Resilience4j's interval for attempt `k`: `initial`, then `(long)(i·multiplier)`.
fn r4j_interval(initial: u64, multiplier: f64, k: u32) -> u64 {
    let mut i = initial;
    for _ in 1..k {
        let next = (i as f64 * multiplier) as i64 as u64;
        if next == i {
            break;
        }
        i = next;
    }
    i
}

/// Finagle's range `upper − prev` of the next decorrelated wait.
fn finagle_range(prev: Nanos, max: Nanos) -> u64 {
    let upper = if prev >= max / 3 { max } else { prev * 3 };
    upper.abs_diff(prev)
}

/// tower's `base()` at retry `k` and its `max`, in nanoseconds (`u128`: a `Duration`).
fn tower_base(min: Nanos, max: Option<Nanos>, k: u32) -> (u128, u128) {
    // Duration::from_millis(u64::MAX), tower's default maximum.
    let maxd = max.map_or(u128::from(u64::MAX) * 1_000_000, u128::from);
    // The largest Duration: u64::MAX seconds and 999,999,999 ns.
    let dur_max = u128::from(u64::MAX) * 1_000_000_000 + 999_999_999;
    let factor = u128::from(2u32.saturating_pow(k - 1));
    let prod = u128::from(min) * factor;
    let base = if prod > dur_max { maxd } else { prod.min(maxd) };
    (base, maxd)
}

/// .NET `IntervalFromDoubleTicks`: `Err` on overflow, `TimeSpan.MaxValue` at 2^63,
/// otherwise truncation toward zero.
fn dotnet_ticks(ticks: f64) -> Result<u64, ()> {
    const MAX: f64 = 9_223_372_036_854_775_807.0; // long.MaxValue as a double: 2^63
    if ticks.is_nan() || !(-MAX..=MAX).contains(&ticks) {
        Err(())
    } else if ticks == MAX {
        Ok(i64::MAX as u64)
    } else {
        Ok((ticks as i64).max(0) as u64)
    }
}

/// Polly's `ApplyJitter`: `d + (d·0.5·u − d·0.5/2)` in milliseconds, back to ticks.
fn polly_jitter(ticks: u64, u: f64) -> Result<u64, ()> {
    let ms = ticks as f64 / 10_000.0;
    let offset = (ms * 0.5) / 2.0;
    let random_delay = (ms * 0.5 * u) - offset;
    dotnet_ticks((ms + random_delay) * 10_000.0)
}

/// Polly's `GetRetryDelay` in ticks for 0-based attempt `a`.
fn polly_ticks(
    delay: u64,
    ty: PollyType,
    jitter: bool,
    max: Option<u64>,
    a: u32,
    prev: &mut Nanos,
    u: f64,
) -> u64 {
    if delay == 0 {
        return 0;
    }
    let a_f = f64::from(a);
    let core: Result<u64, ()> = if jitter {
        match ty {
            PollyType::Constant => polly_jitter(delay, u),
            PollyType::Linear => {
                let ms = (a_f + 1.0) * (delay as f64 / 10_000.0);
                dotnet_ticks(ms * 10_000.0).and_then(|t| polly_jitter(t, u))
            }
            PollyType::Exponential => {
                const P_FACTOR: f64 = 4.0;
                const RP_SCALING: f64 = 1.0 / 1.4;
                let max_ticks = i64::MAX as f64 - 1_000.0;
                let mut p = f64::from_bits(*prev);
                let t = a_f + u;
                let next = 2f64.powf(t) * (P_FACTOR * t).sqrt().tanh();
                let ticks = if next.is_infinite() {
                    p = next;
                    max_ticks as i64 as u64
                } else {
                    let v = next - p;
                    p = next;
                    ((v * RP_SCALING * delay as f64).min(max_ticks) as i64).max(0) as u64
                };
                *prev = p.to_bits();
                Ok(ticks)
            }
        }
    } else {
        // TimeSpan * double: Math.Round (to even) of ticks·factor.
        let factor = match ty {
            PollyType::Constant => 1.0,
            PollyType::Linear => a_f + 1.0,
            PollyType::Exponential => 2f64.powf(a_f),
        };
        dotnet_ticks((delay as f64 * factor).round_ties_even())
    };
    match (core, max) {
        (Ok(t), Some(m)) => t.min(m),
        (Ok(t), None) => t,
        (Err(()), Some(m)) => m,
        (Err(()), None) => i64::MAX as u64,
    }
}

/// The largest Polly delay for retry `k` (ticks, before `MaxDelay`).
fn polly_max_ticks(delay: u64, ty: PollyType, jitter: bool, k: u32) -> u64 {
    let a = f64::from(k - 1);
    let d = delay as f64;
    let t = match (ty, jitter) {
        (PollyType::Constant, false) => d,
        (PollyType::Constant, true) => 1.25 * d,
        (PollyType::Linear, false) => (a + 1.0) * d,
        (PollyType::Linear, true) => 1.25 * (a + 1.0) * d,
        (PollyType::Exponential, false) => 2f64.powf(a) * d,
        (PollyType::Exponential, true) => {
            // next(t) = 2^t·tanh(√(4t)) grows with t; t ∈ [a, a+1), the previous one in
            // [a−1, a): the difference stays below next(a+1) − next(a−1).
            let next = |t: f64| {
                if t <= 0.0 {
                    0.0
                } else {
                    2f64.powf(t) * (4.0 * t).sqrt().tanh()
                }
            };
            (next(a + 1.0) - next(a - 1.0)) / 1.4 * d
        }
    };
    if t >= u64::MAX as f64 {
        u64::MAX
    } else {
        t.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    fn exp(jitter: Jitter) -> Backoff {
        Backoff::Exponential {
            base: 1_000_000,
            cap: 64_000_000,
            multiplier: 2.0,
            jitter,
        }
    }

    #[test]
    fn unjittered_exponential_doubles_to_the_cap() {
        let b = exp(Jitter::None);
        let mut r = stream(1, "x");
        let mut prev = 0;
        let w: Vec<_> = (1..=9).map(|k| wait(&b, k, &mut prev, &mut r)).collect();
        assert_eq!(
            w,
            [1, 2, 4, 8, 16, 32, 64, 64, 64]
                .map(|m: u64| m * 1_000_000)
                .to_vec()
        );
        assert_eq!(exponential_ceiling(3, u64::MAX, 1.5, 3), 7); // 6.75 rounds to 7
        assert_eq!(exponential_ceiling(1, u64::MAX, 2.0, 100_000), u64::MAX);
    }

    /// Each jitter mode: every draw in its range, and the sample mean within 1% of the
    /// formula's mean (100k draws; the standard error is below 0.2%).
    #[test]
    fn jitter_modes_have_their_ranges_and_means() {
        let n = 100_000;
        let k = 4; // e_4 = 8 ms
        let e = 8_000_000f64;
        for (jitter, lo, hi, mean) in [
            (Jitter::Full, 0.0, e, e / 2.0),
            (Jitter::Equal, e / 2.0, e, 0.75 * e),
        ] {
            let b = exp(jitter);
            let mut r = stream(5, "j");
            let mut sum = 0.0;
            for _ in 0..n {
                let mut prev = 0;
                let w = wait(&b, k, &mut prev, &mut r) as f64;
                assert!(w >= lo && w < hi, "{jitter:?}: {w}");
                sum += w;
            }
            let m = sum / n as f64;
            assert!(
                (m / mean - 1.0).abs() < 0.01,
                "{jitter:?}: mean {m} vs {mean}"
            );
        }
    }

    #[test]
    fn decorrelated_jitter_stays_between_base_and_three_times_previous_and_the_cap() {
        let b = exp(Jitter::Decorrelated);
        let mut r = stream(8, "d");
        let mut sum_first = 0.0;
        let n = 100_000;
        for _ in 0..n {
            let mut prev = 1_000_000;
            let first = wait(&b, 1, &mut prev, &mut r);
            assert!((1_000_000..3_000_000).contains(&first));
            sum_first += first as f64;
            let mut last = first;
            for k in 2..12 {
                let w = wait(&b, k, &mut prev, &mut r);
                assert!((1_000_000..=64_000_000).contains(&w));
                assert!(w <= (3 * last).max(1_000_000));
                last = w;
            }
        }
        // First wait: uniform(base, 3 base) has mean 2 base.
        let m = sum_first / n as f64;
        assert!((m / 2_000_000.0 - 1.0).abs() < 0.01, "mean {m}");
    }
}
