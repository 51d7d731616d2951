//! Backoff: the wait after failed attempt `k` (k = 1, 2, ...) before attempt `k + 1`.
//!
//! `e_k = min(cap, base · multiplier^(k−1))`, then by jitter:
//! - `none`: `e_k`;
//! - `full`: `uniform(0, e_k)`;
//! - `equal`: `e_k/2 + uniform(0, e_k/2)`;
//! - `decorrelated`: `d_k = min(cap, uniform(base, 3·d_(k−1)))`, `d_0 = base`
//!   (the previous wait is the caller's state).
//!
//! ```
//! use retrysim::model::backoff::{exponential_ceiling, wait};
//! use retrysim::scenario::config::{Backoff, Jitter};
//! let b = Backoff::Exponential { base: 10, cap: 50, multiplier: 2.0, jitter: Jitter::None };
//! let mut rng = retrysim::engine::stream(1, "doc");
//! let mut prev = 10;
//! let waits: Vec<u64> = (1..=4).map(|k| wait(&b, k, &mut prev, &mut rng)).collect();
//! assert_eq!(waits, vec![10, 20, 40, 50]);
//! assert_eq!(exponential_ceiling(10, 50, 2.0, 3), 40);
//! ```

use rand::Rng;
use rand::RngExt;

use crate::engine::time::from_f64_ns;
use crate::engine::Nanos;
use crate::scenario::config::{Backoff, Jitter};

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
    }
}

/// The largest wait after failed attempt `k` (for `explain`'s schedule bound).
pub fn max_wait(b: &Backoff, k: u32) -> Nanos {
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
