//! Percentiles of one time-series bucket: exact while the bucket is small, from a
//! bounded histogram once it is busy.
//!
//! A bucket keeps its values exactly up to [`MAX_BUCKET_SAMPLES`] and answers with the
//! nearest rank; past that it moves them into a histogram of 3 significant digits, so
//! memory stays bounded however many values a bucket gets.

use hdrhistogram::Histogram;

/// Most values a time-series bucket keeps exactly (8 MiB); a busier bucket gives its
/// percentiles to 3 significant digits from a histogram of bounded size.
pub(crate) const MAX_BUCKET_SAMPLES: usize = 1 << 20;

/// The nearest-rank `qs`-quantiles of `xs` (`qs` ascending; reorders `xs`; linear
/// time). After selecting rank `r`, the values above it are `xs[r..]`, so each further
/// rank is selected there: p99 after p50 looks at half the values.
fn nearest_ranks<const N: usize>(xs: &mut [u64], qs: [f64; N]) -> [u64; N] {
    let n = xs.len();
    // `done`: the index of the last rank selected; xs[done + 1..] holds the larger values.
    let mut done: Option<usize> = None;
    qs.map(|q| {
        let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        match done {
            Some(d) if i == d => xs[d],
            Some(d) => {
                debug_assert!(i > d, "quantiles in ascending order");
                let above = &mut xs[d + 1..];
                let v = *above.select_nth_unstable(i - d - 1).1;
                done = Some(i);
                v
            }
            None => {
                let v = *xs.select_nth_unstable(i).1;
                done = Some(i);
                v
            }
        }
    })
}

/// A histogram of 3 significant digits.
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

/// The values (ns) of the bucket being filled.
#[derive(Debug, Default)]
pub(crate) struct BucketQuantiles {
    exact: Vec<u64>,
    hist: Option<Histogram<u64>>,
}

impl BucketQuantiles {
    /// Adds a value.
    #[inline(always)]
    pub(crate) fn push(&mut self, x: u64) {
        if self.hist.is_none() && self.exact.len() < MAX_BUCKET_SAMPLES {
            self.exact.push(x);
        } else {
            self.push_past_cap(x);
        }
    }

    /// Adds a value past the cap: the bucket's percentiles come from a histogram.
    #[cold]
    fn push_past_cap(&mut self, x: u64) {
        if let Some(h) = &mut self.hist {
            let _ = h.record(x.max(1));
        } else {
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
    pub(crate) fn take<const N: usize>(&mut self, qs: [f64; N]) -> Option<[u64; N]> {
        let out = if let Some(h) = self.hist.take() {
            Some(qs.map(|q| h.value_at_quantile(q)))
        } else if !self.exact.is_empty() {
            Some(nearest_ranks(&mut self.exact, qs))
        } else {
            None
        };
        clear_exact(&mut self.exact);
        out
    }

    /// Whether the bucket has no values yet.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values held.
    fn len(&self) -> u64 {
        match &self.hist {
            Some(h) => h.len(),
            None => self.exact.len() as u64,
        }
    }

    /// The `qs`-quantiles of the values of `a` and `b` together, exactly as one bucket
    /// given both would answer (`None` when neither has any): from the exact values
    /// while there are at most [`MAX_BUCKET_SAMPLES`], else from a histogram of them
    /// all. Call it before [`take`](Self::take) empties them; `scratch` is reused.
    pub(crate) fn union<const N: usize>(
        a: &BucketQuantiles,
        b: &BucketQuantiles,
        qs: [f64; N],
        scratch: &mut Vec<u64>,
    ) -> Option<[u64; N]> {
        let total = a.len() + b.len();
        if total == 0 {
            return None;
        }
        if total > MAX_BUCKET_SAMPLES as u64 {
            let mut h = new_histogram();
            for part in [a, b] {
                match &part.hist {
                    Some(ph) => {
                        let _ = h.add(ph);
                    }
                    None => {
                        for &v in &part.exact {
                            let _ = h.record(v.max(1));
                        }
                    }
                }
            }
            return Some(qs.map(|q| h.value_at_quantile(q)));
        }
        scratch.clear();
        scratch.extend_from_slice(&a.exact);
        scratch.extend_from_slice(&b.exact);
        let out = nearest_ranks(scratch, qs);
        clear_exact(scratch);
        Some(out)
    }
}

/// Empties a bucket's exact values, keeping a modest allocation for the next bucket.
fn clear_exact(v: &mut Vec<u64>) {
    v.clear();
    if v.capacity() > MAX_BUCKET_SAMPLES / 64 {
        *v = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union of two buckets answers as one bucket given every value of both, in
    /// exact mode and past the cap (then from a histogram).
    #[test]
    fn a_union_answers_as_one_bucket_of_both() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % 5_000_000
        };
        for n in [
            0usize,
            1,
            2,
            3,
            100,
            2_001,
            MAX_BUCKET_SAMPLES - 5,
            MAX_BUCKET_SAMPLES + 7,
        ] {
            let mut a = BucketQuantiles::default();
            let mut b = BucketQuantiles::default();
            let mut one = BucketQuantiles::default();
            for i in 0..n {
                let x = next();
                one.push(x);
                if i % 3 == 0 {
                    a.push(x);
                } else {
                    b.push(x);
                }
            }
            let mut scratch = Vec::new();
            let got = BucketQuantiles::union(&a, &b, [0.5, 0.99], &mut scratch);
            assert_eq!(got, one.take([0.5, 0.99]), "{n} values");
        }
    }

    /// Several quantiles at once, equal ranks included, match one select each.
    #[test]
    fn ascending_ranks_match_single_selects() {
        for n in 1..60u64 {
            let xs: Vec<u64> = (0..n).map(|i| (i * 7919) % 31).collect();
            let qs = [0.0, 0.5, 0.5, 0.9, 0.99, 1.0];
            let want = qs.map(|q| {
                let mut v = xs.clone();
                let r = ((q * n as f64).ceil() as usize).clamp(1, n as usize);
                *v.select_nth_unstable(r - 1).1
            });
            assert_eq!(nearest_ranks(&mut xs.clone(), qs), want, "n = {n}");
        }
    }

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

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn take_example() {
        use crate::metrics::quantiles::BucketQuantiles;
        let mut q = BucketQuantiles::default();
        assert_eq!(q.take([0.5]), None);
        for x in [5, 1, 4, 2, 3] {
            q.push(x);
        }
        assert_eq!(q.take([0.5, 0.99]), Some([3, 5]));
        assert_eq!(q.take([0.5]), None);
    }
}
