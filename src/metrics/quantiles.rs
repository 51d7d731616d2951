//! Percentiles of one time-series bucket: exact while the bucket is small, from a
//! bounded histogram once it is busy.
//!
//! A bucket keeps its values exactly up to [`MAX_BUCKET_SAMPLES`] and answers with the
//! nearest rank; past that it moves them into a histogram of 3 significant digits, so
//! memory stays bounded however many values a bucket gets.

use hdrhistogram::Histogram;

/// Most values a time-series bucket keeps exactly (8 MiB); a busier bucket gives its
/// percentiles to 3 significant digits from a histogram of bounded size.
pub const MAX_BUCKET_SAMPLES: usize = 1 << 20;

/// The nearest-rank `q`-quantile of `xs` (reorders `xs`; linear time).
fn nearest_rank(xs: &mut [u64], q: f64) -> u64 {
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    *xs.select_nth_unstable(rank - 1).1
}

/// A histogram of 3 significant digits.
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

/// The values (ns) of the bucket being filled.
#[derive(Debug, Default)]
pub struct BucketQuantiles {
    exact: Vec<u64>,
    hist: Option<Histogram<u64>>,
}

impl BucketQuantiles {
    /// Adds a value.
    #[inline]
    pub fn push(&mut self, x: u64) {
        if let Some(h) = &mut self.hist {
            let _ = h.record(x.max(1));
        } else if self.exact.len() < MAX_BUCKET_SAMPLES {
            self.exact.push(x);
        } else {
            // Past the cap the bucket's percentiles come from a histogram.
            let mut h = new_histogram();
            for &v in self.exact.iter().chain([&x]) {
                let _ = h.record(v.max(1));
            }
            self.exact = Vec::new();
            self.hist = Some(h);
        }
    }

    /// The `qs`-quantiles of the bucket's values (`None` when it had none), and a fresh
    /// start for the next bucket.
    ///
    /// ```
    /// use retrysim::metrics::quantiles::BucketQuantiles;
    /// let mut q = BucketQuantiles::default();
    /// assert_eq!(q.take([0.5]), None);
    /// for x in [5, 1, 4, 2, 3] { q.push(x); }
    /// assert_eq!(q.take([0.5, 0.99]), Some([3, 5]));
    /// assert_eq!(q.take([0.5]), None);
    /// ```
    pub fn take<const N: usize>(&mut self, qs: [f64; N]) -> Option<[u64; N]> {
        let out = if let Some(h) = self.hist.take() {
            Some(qs.map(|q| h.value_at_quantile(q)))
        } else if !self.exact.is_empty() {
            Some(qs.map(|q| nearest_rank(&mut self.exact, q)))
        } else {
            None
        };
        self.exact.clear();
        if self.exact.capacity() > MAX_BUCKET_SAMPLES / 64 {
            self.exact = Vec::new();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_bucket_answers_from_its_histogram_to_three_digits() {
        let mut q = BucketQuantiles::default();
        let n = MAX_BUCKET_SAMPLES as u64 + 10;
        for x in 1..=n {
            q.push(x);
        }
        let [p50] = q.take([0.5]).unwrap();
        let want = n / 2;
        assert!(p50.abs_diff(want) <= want / 500, "{p50} vs {want}");
    }
}
