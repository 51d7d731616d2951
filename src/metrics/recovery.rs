//! Recovery after the last outage, and the metastable flag (MODEL.md §6).
//!
//! - baseline: mean success rate over the buckets from `warmup` to the first outage
//!   start (buckets wholly inside that span; 1.0 when there are none);
//! - recovered at the first bucket starting at or after the last outage end from which
//!   the success rate stays at or above `baseline − tolerance` for `hold` buckets;
//! - a bucket with no logical completions (no success rate) passes the hold only when
//!   the system is idle in it: no logical request in flight at the bucket's end. An
//!   empty bucket with requests in flight is a stall and breaks the hold like a low
//!   success rate, so a run whose requests hang (a blackhole without timeouts) does not
//!   read as recovered;
//! - `recovery_time = t − end`; not recovered by the end of the series: metastable.
//!
//! In flight at the end of bucket k is read from the series: logical arrivals minus
//! logical completions (successes and failures) over buckets `0..=k` (see [`samples`]).

use crate::engine::time::to_secs;
use crate::engine::Nanos;

use super::recorder::BucketRow;

/// What the recovery analysis reads of one bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// Logical successes / logical completions in the bucket (`None` = no completions).
    pub success_rate: Option<f64>,
    /// Logical requests in flight at the bucket's end.
    pub in_flight: u64,
}

impl Sample {
    /// A bucket with completions at success rate `rate`.
    #[cfg(test)]
    pub(crate) fn rate(rate: f64) -> Sample {
        Sample {
            success_rate: Some(rate),
            in_flight: 0,
        }
    }

    /// A bucket with no completions and `in_flight` requests in flight at its end.
    #[cfg(test)]
    pub(crate) fn empty(in_flight: u64) -> Sample {
        Sample {
            success_rate: None,
            in_flight,
        }
    }
}

/// The recovery samples of a time series: each bucket's success rate, and the logical
/// requests in flight at its end (cumulative arrivals minus cumulative completions).
pub(crate) fn samples(buckets: &[BucketRow]) -> Vec<Sample> {
    let (mut arrived, mut completed) = (0u64, 0u64);
    buckets
        .iter()
        .map(|b| {
            arrived += b.offered;
            completed += b.completions;
            Sample {
                success_rate: (b.completions > 0)
                    .then(|| b.successes as f64 / b.completions as f64),
                in_flight: arrived.saturating_sub(completed),
            }
        })
        .collect()
}

/// Result of the recovery analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Recovery {
    /// Pre-outage mean success rate.
    pub baseline: Option<f64>,
    /// Seconds from the last outage end to recovery.
    pub recovery_time_s: Option<f64>,
    /// Not recovered by the end of the series.
    pub metastable: bool,
}

/// Analyses per-bucket samples (success rate, and requests in flight at the bucket's
/// end, which decides whether a bucket without completions is idle or stalled).
pub(crate) fn analyse(
    samples: &[Sample],
    bucket: Nanos,
    warmup: Nanos,
    outage: Option<(Nanos, Nanos)>,
    tolerance: f64,
    hold: u32,
) -> Recovery {
    let Some((first_start, last_end)) = outage else {
        return Recovery {
            baseline: mean_rate(samples, bucket, warmup, Nanos::MAX),
            recovery_time_s: None,
            metastable: false,
        };
    };
    let baseline = mean_rate(samples, bucket, warmup, first_start).unwrap_or(1.0);
    let threshold = baseline - tolerance - 1e-12;
    // A bucket without completions passes only when idle (nothing in flight).
    let ok = |s: &Sample| match s.success_rate {
        Some(x) => x >= threshold,
        None => s.in_flight == 0,
    };
    let hold = hold as usize;
    // An outage may end near the end of time: its bucket index may not fit, nor the
    // hold after it.
    let k0 = usize::try_from(last_end.div_ceil(bucket)).unwrap_or(usize::MAX);
    let mut k = k0;
    while k.checked_add(hold).is_some_and(|e| e <= samples.len()) {
        match samples[k..k + hold].iter().position(|s| !ok(s)) {
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

fn mean_rate(samples: &[Sample], bucket: Nanos, from: Nanos, to: Nanos) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for (i, s) in samples.iter().enumerate() {
        let t = i as Nanos * bucket;
        if t >= from && t.saturating_add(bucket) <= to {
            if let Some(x) = s.success_rate {
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

    fn rates(xs: &[f64]) -> Vec<Sample> {
        xs.iter().map(|x| Sample::rate(*x)).collect()
    }

    fn row(offered: u64, completions: u64, successes: u64) -> BucketRow {
        BucketRow {
            offered,
            completions,
            successes,
            ..BucketRow::default()
        }
    }

    #[test]
    fn never_recovering_is_metastable() {
        let s = rates(&[1.0, 1.0, 0.1, 0.1, 0.2, 0.1, 0.9, 0.1]);
        let r = analyse(&s, S, 0, Some((2 * S, 3 * S)), 0.02, 2);
        assert!(r.metastable);
        assert_eq!(r.recovery_time_s, None);
    }

    #[test]
    fn a_dip_inside_the_hold_restarts_it() {
        let s = rates(&[1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0]);
        let r = analyse(&s, S, 0, Some((S, 2 * S)), 0.02, 3);
        assert_eq!(r.recovery_time_s, Some(2.0));
    }

    #[test]
    fn warmup_buckets_are_left_out_of_the_baseline_and_idle_empty_buckets_hold() {
        let s = [
            Sample::rate(0.0),
            Sample::rate(0.8),
            Sample::empty(0),
            Sample::rate(0.1),
            Sample::empty(0),
            Sample::rate(0.79),
        ];
        let r = analyse(&s, S, S, Some((3 * S, 4 * S)), 0.02, 2);
        assert_eq!(r.baseline, Some(0.8));
        assert_eq!(r.recovery_time_s, Some(0.0));
    }

    #[test]
    fn in_flight_is_cumulative_arrivals_minus_completions() {
        let s = samples(&[row(3, 1, 1), row(2, 0, 0), row(0, 4, 2), row(0, 0, 0)]);
        let in_flight: Vec<u64> = s.iter().map(|x| x.in_flight).collect();
        assert_eq!(in_flight, vec![2, 4, 0, 0]);
        assert_eq!(s[1].success_rate, None);
        assert_eq!(s[2].success_rate, Some(0.5));
    }

    #[test]
    fn a_stalled_run_is_not_recovered_until_completions_resume() {
        // Outage [2, 3): 10 requests a second; after it, 4 s in which nothing completes
        // while requests pile up in flight (a hang), then everything completes.
        let mut buckets = vec![row(10, 10, 10), row(10, 10, 10), row(10, 10, 0)];
        buckets.extend((0..4).map(|_| row(10, 0, 0)));
        buckets.push(row(10, 50, 50));
        buckets.extend((0..3).map(|_| row(10, 10, 10)));
        let s = samples(&buckets);
        assert!(s[3..7]
            .iter()
            .all(|x| x.success_rate.is_none() && x.in_flight > 0));
        let r = analyse(&s, S, 0, Some((2 * S, 3 * S)), 0.02, 3);
        assert_eq!(r.baseline, Some(1.0));
        // Recovered when completions resume at 7 s, not at the outage end (3 s).
        assert_eq!(r.recovery_time_s, Some(4.0));
        assert!(!r.metastable);

        // Stalled to the end of the series: never recovered.
        let r = analyse(&s[..7], S, 0, Some((2 * S, 3 * S)), 0.02, 3);
        assert!(r.metastable);
        assert_eq!(r.recovery_time_s, None);
    }

    #[test]
    fn an_idle_run_with_empty_buckets_still_recovers() {
        // Every request has completed by the outage end; no arrivals after it.
        let mut buckets = vec![row(10, 10, 10), row(10, 10, 10), row(10, 10, 5)];
        buckets.extend((0..5).map(|_| row(0, 0, 0)));
        let s = samples(&buckets);
        assert!(s[3..]
            .iter()
            .all(|x| x.success_rate.is_none() && x.in_flight == 0));
        let r = analyse(&s, S, 0, Some((2 * S, 3 * S)), 0.02, 3);
        assert_eq!(r.recovery_time_s, Some(0.0));
        assert!(!r.metastable);
    }

    #[test]
    fn an_outage_that_ends_at_the_end_of_time_never_recovers() {
        // 1 ns buckets: the bucket after the outage was u64::MAX, and the hold after it
        // wrapped around.
        let s = vec![Sample::rate(1.0); 1000];
        for hold in [1, 10, u32::MAX] {
            let r = analyse(&s, 1, 0, Some((0, u64::MAX)), 0.02, hold);
            assert!(r.metastable);
            assert_eq!(r.recovery_time_s, None);
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn samples_example() {
        use crate::metrics::recovery::{samples, Sample};
        use crate::metrics::BucketRow;
        let row = |offered, completions, successes| BucketRow {
            offered,
            completions,
            successes,
            ..BucketRow::default()
        };
        let s = samples(&[row(4, 2, 1), row(0, 0, 0), row(0, 2, 2)]);
        assert_eq!(
            s,
            vec![
                Sample {
                    success_rate: Some(0.5),
                    in_flight: 2
                },
                Sample {
                    success_rate: None,
                    in_flight: 2
                },
                Sample {
                    success_rate: Some(1.0),
                    in_flight: 0
                },
            ]
        );
    }

    #[test]
    fn analyse_example() {
        use crate::metrics::recovery::{analyse, Sample};
        let s = Sample::rate;
        let samples = [
            s(1.0),
            s(1.0),
            s(0.0),
            s(0.0),
            s(0.5),
            s(0.99),
            s(1.0),
            s(1.0),
        ];
        // Outage [2, 4) in 1-unit buckets; hold 3 buckets.
        let r = analyse(
            &samples,
            1_000_000_000,
            0,
            Some((2_000_000_000, 4_000_000_000)),
            0.02,
            3,
        );
        assert_eq!(r.baseline, Some(1.0));
        assert_eq!(r.recovery_time_s, Some(1.0));
        assert!(!r.metastable);

        // Nothing completes after the outage while 5 requests hang: stalled, not recovered.
        let stalled = [
            s(1.0),
            s(1.0),
            s(0.0),
            s(0.0),
            Sample::empty(5),
            Sample::empty(5),
            Sample::empty(5),
        ];
        let r = analyse(
            &stalled,
            1_000_000_000,
            0,
            Some((2_000_000_000, 4_000_000_000)),
            0.02,
            3,
        );
        assert!(r.metastable);
    }
}
