//! Counts in the bins of a 3-significant-digit HdrHistogram, kept without the
//! histogram's per-value bookkeeping and handed over as one at the end of a run.
//!
//! A run records one latency per logical request; `Histogram::record` spends most of
//! its time on what a run does not need per value (range checks, resizing, min and
//! max). [`Bins`] counts each value at the index the histogram would use, and
//! [`Bins::histogram`] records each bin's count at the bin's lowest value. Every query
//! of a histogram (its counts, total, `min`, `max`, quantiles, mean) depends only on
//! which bin each value fell in, so the result equals recording the values one by one.

use hdrhistogram::Histogram;

use super::quantiles::new_histogram;

/// log2 of half the sub-buckets per bucket (2,048 sub-buckets keep 3 digits).
const HALF_MAGNITUDE: u32 = 10;
/// Half the sub-buckets per bucket.
const HALF: usize = 1 << HALF_MAGNITUDE;
/// The sub-bucket mask of the histogram's first bucket.
const SUB_MASK: u64 = (2 * HALF as u64) - 1;
/// `64 - unit magnitude (0) - sub-bucket count magnitude (11)`.
const LEADING_ZERO_BASE: u32 = 53;

/// Value counts by HdrHistogram bin index (3 significant digits, lowest value 1).
#[derive(Debug, Clone, Default)]
pub(crate) struct Bins {
    counts: Vec<u64>,
}

impl Bins {
    /// The histogram's counts-array index of `v`.
    #[inline]
    fn index(v: u64) -> usize {
        let bucket = LEADING_ZERO_BASE - (v | SUB_MASK).leading_zeros();
        let sub = (v >> bucket) as usize;
        ((bucket as usize + 1) << HALF_MAGNITUDE) + sub - HALF
    }

    /// The lowest value of bin `i` (the inverse of [`Bins::index`] on bin starts).
    fn lowest(i: usize) -> u64 {
        let bucket = (i >> HALF_MAGNITUDE) as i64 - 1;
        let sub = (i & (HALF - 1)) + HALF;
        if bucket < 0 {
            (sub - HALF) as u64
        } else {
            (sub as u64) << bucket
        }
    }

    /// Counts one value.
    #[inline]
    pub(crate) fn record(&mut self, v: u64) {
        let i = Self::index(v);
        if i >= self.counts.len() {
            self.grow(i);
        }
        self.counts[i] += 1;
    }

    #[cold]
    fn grow(&mut self, i: usize) {
        self.counts.resize(i + 1, 0);
    }

    /// The histogram that recording every counted value would have made.
    pub(crate) fn histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                // Within range by construction: the histogram resizes to any u64.
                let _ = h.record_n(Self::lowest(i), n);
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn bins_are_the_histograms_own() {
        let h = new_histogram();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut values: Vec<u64> = (0..4_096).collect();
        values.extend([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1]);
        for _ in 0..200_000 {
            let bits = rng.random_range(0..64);
            values.push(rng.random::<u64>() >> bits);
        }
        for v in values {
            let i = Bins::index(v);
            assert_eq!(
                Bins::lowest(i),
                h.lowest_equivalent(v),
                "value {v}, index {i}"
            );
            assert!(Bins::index(Bins::lowest(i)) == i);
        }
    }

    #[test]
    fn the_histogram_equals_one_recorded_value_by_value() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut bins = Bins::default();
        let mut direct = new_histogram();
        for _ in 0..100_000 {
            // Latencies in microseconds over nine decades, and a few zeros.
            let v = (10f64.powf(rng.random_range(0.0..9.0))) as u64;
            bins.record(v);
            direct.record(v).unwrap();
        }
        for _ in 0..7 {
            bins.record(0);
            direct.record(0).unwrap();
        }
        let h = bins.histogram();
        assert_eq!(h, direct);
        assert_eq!(h.len(), 100_007);
        assert_eq!(
            (h.min(), h.max(), h.min_nz()),
            (direct.min(), direct.max(), direct.min_nz())
        );
        assert_eq!(h.mean(), direct.mean());
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(h.value_at_quantile(q), direct.value_at_quantile(q));
        }
        assert_eq!(Bins::default().histogram(), new_histogram());
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn bins_example() {
        use crate::metrics::bins::Bins;
        let mut b = Bins::default();
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in [1, 999, 2_048, 2_049, 123_456, 9_876_543_210] {
            b.record(v);
            h.record(v).unwrap();
        }
        assert_eq!(b.histogram(), h);
    }
}
