//! Recovery after the last outage, and the metastable flag (MODEL.md §6).
//!
//! - baseline: mean success rate over the buckets from `warmup` to the first outage
//!   start (buckets wholly inside that span; 1.0 when there are none);
//! - recovered at the first bucket starting at or after the last outage end from which
//!   the success rate stays at or above `baseline − tolerance` for `hold` buckets (a
//!   bucket with no completions does not break the hold);
//! - `recovery_time = t − end`; not recovered by the end of the series: metastable.

use crate::engine::time::to_secs;
use crate::engine::Nanos;

/// Result of the recovery analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recovery {
    /// Pre-outage mean success rate.
    pub baseline: Option<f64>,
    /// Seconds from the last outage end to recovery.
    pub recovery_time_s: Option<f64>,
    /// Not recovered by the end of the series.
    pub metastable: bool,
}

/// Analyses per-bucket success rates (`None` = no completions in the bucket).
///
/// ```
/// use retrysim::metrics::recovery::analyse;
/// let s = |x: f64| Some(x);
/// let rates = [s(1.0), s(1.0), s(0.0), s(0.0), s(0.5), s(0.99), s(1.0), s(1.0)];
/// // Outage [2, 4) in 1-unit buckets; hold 3 buckets.
/// let r = analyse(&rates, 1_000_000_000, 0, Some((2_000_000_000, 4_000_000_000)), 0.02, 3);
/// assert_eq!(r.baseline, Some(1.0));
/// assert_eq!(r.recovery_time_s, Some(1.0));
/// assert!(!r.metastable);
/// ```
pub fn analyse(
    rates: &[Option<f64>],
    bucket: Nanos,
    warmup: Nanos,
    outage: Option<(Nanos, Nanos)>,
    tolerance: f64,
    hold: u32,
) -> Recovery {
    let Some((first_start, last_end)) = outage else {
        return Recovery {
            baseline: mean_rate(rates, bucket, warmup, Nanos::MAX),
            recovery_time_s: None,
            metastable: false,
        };
    };
    let baseline = mean_rate(rates, bucket, warmup, first_start).unwrap_or(1.0);
    let threshold = baseline - tolerance - 1e-12;
    let ok = |r: &Option<f64>| r.is_none_or(|x| x >= threshold);
    let hold = hold as usize;
    // An outage may end near the end of time: its bucket index may not fit, nor the
    // hold after it.
    let k0 = usize::try_from(last_end.div_ceil(bucket)).unwrap_or(usize::MAX);
    let mut k = k0;
    while k.checked_add(hold).is_some_and(|e| e <= rates.len()) {
        match rates[k..k + hold].iter().position(|r| !ok(r)) {
            None => {
                return Recovery {
                    baseline: Some(baseline),
                    recovery_time_s: Some(to_secs(k as Nanos * bucket - last_end)),
                    metastable: false,
                };
            }
            Some(bad) => k += bad + 1,
        }
    }
    Recovery {
        baseline: Some(baseline),
        recovery_time_s: None,
        metastable: true,
    }
}

fn mean_rate(rates: &[Option<f64>], bucket: Nanos, from: Nanos, to: Nanos) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, r) in rates.iter().enumerate() {
        let t = i as Nanos * bucket;
        if t >= from && t.saturating_add(bucket) <= to {
            if let Some(x) = r {
                sum += x;
                n += 1;
            }
        }
    }
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {

    use super::*;
    const S: Nanos = 1_000_000_000;

    #[test]
    fn never_recovering_is_metastable() {
        let rates: Vec<_> = [1.0, 1.0, 0.1, 0.1, 0.2, 0.1, 0.9, 0.1]
            .iter()
            .map(|x| Some(*x))
            .collect();
        let r = analyse(&rates, S, 0, Some((2 * S, 3 * S)), 0.02, 2);
        assert!(r.metastable);
        assert_eq!(r.recovery_time_s, None);
    }

    #[test]
    fn a_dip_inside_the_hold_restarts_it() {
        let rates: Vec<_> = [1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0]
            .iter()
            .map(|x| Some(*x))
            .collect();
        let r = analyse(&rates, S, 0, Some((S, 2 * S)), 0.02, 3);
        assert_eq!(r.recovery_time_s, Some(2.0));
    }

    #[test]
    fn warmup_buckets_are_left_out_of_the_baseline_and_empty_buckets_hold() {
        let rates = vec![Some(0.0), Some(0.8), None, Some(0.1), None, Some(0.79)];
        let r = analyse(&rates, S, S, Some((3 * S, 4 * S)), 0.02, 2);
        assert_eq!(r.baseline, Some(0.8));
        assert_eq!(r.recovery_time_s, Some(0.0));
    }

    #[test]
    fn an_outage_that_ends_at_the_end_of_time_never_recovers() {
        // 1 ns buckets: the bucket after the outage was u64::MAX, and the hold after it
        // wrapped around.
        let rates = vec![Some(1.0); 1000];
        for hold in [1, 10, u32::MAX] {
            let r = analyse(&rates, 1, 0, Some((0, u64::MAX)), 0.02, hold);
            assert!(r.metastable);
            assert_eq!(r.recovery_time_s, None);
        }
    }
}
