//! Collapse and backlog: how long a storm held goodput down, and when the dependency's
//! queue, not just its success rate, was back to normal.
//!
//! - A bucket is *collapsed* when its goodput (logical successes) is below half of its
//!   offered load (logical arrivals); a bucket with nothing offered is not.
//! - `collapsed_fraction`: the collapsed share of the time from the bucket holding the
//!   first trigger's start to the end of the series, each bucket weighted by its real
//!   width; `collapse_start_s`: the start of the first collapsed bucket in that span.
//! - `recovery_queue_s`: from the trigger's end, the first bucket from which the
//!   queue's maximum stays below `servers × attempt_timeout / mean service time` (the
//!   backlog the servers clear within one attempt timeout) for `hold` buckets, minus the
//!   trigger's end. A success rate can read "recovered" while a backlog still drains;
//!   this reads the backlog.

use crate::engine::time::to_secs;
use crate::engine::Nanos;

use super::recorder::BucketRow;

/// Whether a bucket is collapsed: goodput below half the offered load.
fn collapsed(b: &BucketRow) -> bool {
    b.offered > 0 && 2 * b.successes < b.offered
}

/// `(collapsed_fraction, collapse_start_s)` of a series whose first trigger starts at
/// `start`; `width(b)` is bucket `b`'s real width.
pub(crate) fn collapse(
    buckets: &[BucketRow],
    bucket: Nanos,
    start: Nanos,
    width: impl Fn(&BucketRow) -> Nanos,
) -> (Option<f64>, Option<f64>) {
    let from = start - start % bucket;
    let (mut total, mut down) = (0u128, 0u128);
    let mut first = None;
    for b in buckets.iter().filter(|b| b.t >= from) {
        let w = u128::from(width(b));
        total += w;
        if collapsed(b) {
            down += w;
            first.get_or_insert(b.t);
        }
    }
    let fraction = (total > 0).then(|| down as f64 / total as f64);
    (fraction, first.map(to_secs))
}

/// Seconds from `end` (the trigger's end) until the queue's maximum stays below
/// `threshold` attempts for `hold` buckets, counted from the first bucket starting at
/// or after `end`; `None` when it never does within the series.
pub(crate) fn queue_recovery(
    buckets: &[BucketRow],
    bucket: Nanos,
    end: Nanos,
    threshold: f64,
    hold: u32,
) -> Option<f64> {
    let hold = hold.max(1) as usize;
    let k0 = usize::try_from(end.div_ceil(bucket)).ok()?;
    let mut run = 0usize;
    for (k, b) in buckets.iter().enumerate().skip(k0) {
        if (b.queue_max as f64) < threshold {
            run += 1;
            if run == hold {
                let at = buckets[k + 1 - hold].t;
                return Some(to_secs(at - end));
            }
        } else {
            run = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: Nanos, offered: u64, successes: u64) -> BucketRow {
        BucketRow {
            t,
            offered,
            successes,
            ..BucketRow::default()
        }
    }

    #[test]
    fn idle_buckets_are_not_collapsed_and_a_partial_bucket_weighs_its_width() {
        let b = [row(0, 0, 0), row(1_000, 4, 1), row(2_000, 4, 4)];
        // The last bucket is 500 wide: 1000 collapsed of 2500 after the trigger at 0.
        let w = |r: &BucketRow| if r.t == 2_000 { 500 } else { 1_000 };
        assert_eq!(collapse(&b, 1_000, 0, w), (Some(0.4), Some(1e-6)));
        // Exactly half is not below half.
        assert_eq!(
            collapse(&[row(0, 4, 2)], 1_000, 0, |_| 1_000),
            (Some(0.0), None)
        );
    }

    #[test]
    fn a_trigger_after_the_series_has_no_collapse() {
        assert_eq!(
            collapse(&[row(0, 4, 0)], 1_000, 5_000, |_| 1_000),
            (None, None)
        );
    }

    #[test]
    fn a_queue_spike_inside_the_hold_restarts_it() {
        let q = |t, queue_max| BucketRow {
            t,
            queue_max,
            ..BucketRow::default()
        };
        let b = [q(0, 0), q(1_000, 0), q(2_000, 99), q(3_000, 0), q(4_000, 0)];
        assert_eq!(queue_recovery(&b, 1_000, 500, 10.0, 2), Some(2.5e-6));
        assert_eq!(queue_recovery(&b, 1_000, 500, 10.0, 3), None);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn collapse_example() {
        use crate::metrics::collapse::collapse;
        use crate::metrics::BucketRow;
        let row = |t, offered, successes| BucketRow {
            t,
            offered,
            successes,
            ..BucketRow::default()
        };
        // 1 s buckets; the trigger starts at 1.5 s: buckets 1..4 count, two are collapsed.
        let b = [
            row(0, 10, 10),
            row(1_000, 10, 2),
            row(2_000, 10, 4),
            row(3_000, 10, 9),
        ];
        let (fraction, start) = collapse(&b, 1_000, 1_500, |_| 1_000);
        assert_eq!(fraction, Some(2.0 / 3.0));
        assert_eq!(start, Some(1e-6));
    }

    #[test]
    fn queue_recovery_example() {
        use crate::metrics::collapse::queue_recovery;
        use crate::metrics::BucketRow;
        let row = |t, queue_max| BucketRow {
            t,
            queue_max,
            ..BucketRow::default()
        };
        let b: Vec<BucketRow> = [0, 50, 40, 9, 30, 5, 2, 1]
            .iter()
            .enumerate()
            .map(|(i, &q)| row(i as u64 * 1_000, q))
            .collect();
        // Trigger ends at 1 s (1 000 ns here); below 10 for 3 buckets from bucket 5.
        assert_eq!(queue_recovery(&b, 1_000, 1_000, 10.0, 3), Some(4e-6));
        assert_eq!(queue_recovery(&b, 1_000, 1_000, 1.0, 3), None);
    }
}
