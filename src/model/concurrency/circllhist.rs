//! The latency histogram Envoy's gradient controller keeps (`circllhist`,
//! `openhistogram/libcircllhist` `circllhist.c`), for whole-microsecond samples.
//!
//! A value `v ≥ 10` falls in the bin `[a·10^e, (a + 1)·10^e)` of its two leading
//! digits `a` (so 1234 → [1200, 1300)); `1 ≤ v ≤ 9` in `[v, v + 0.1)`; 0 in the zero
//! bin (width 0). `hist_approx_quantile(q)` walks the bins in order to the count
//! `n·q` and interpolates linearly inside the bin it lands in; the bin bounds are
//! computed in `f64` as circllhist does (`(val / 10.0) · 10^exp`, width `10^exp / 10`),
//! so the result, truncated to whole microseconds by Envoy, is the same.
//!
//! Memory: one entry per occupied bin, so never more than the samples held, and never
//! more than 90 bins per decade (under 2,000 for any `u64`).

use std::collections::BTreeMap;

/// `power_of_ten[i]` of circllhist for `i` in 0..=19 (exact doubles).
const POW10: [f64; 20] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19,
];

/// Samples per bin, keyed by the bin's integer lower bound (0 for the zero bin).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hist {
    bins: BTreeMap<u64, u64>,
    count: u64,
}

/// The integer lower bound of `v`'s bin.
fn key(v: u64) -> u64 {
    if v < 10 {
        return v;
    }
    let mut scale = 1;
    while v / scale >= 100 {
        scale *= 10;
    }
    v / scale * scale
}

/// circllhist's `(left, width)` of the bin with lower bound `k`, in `f64`.
fn bounds(k: u64) -> (f64, f64) {
    if k == 0 {
        return (0.0, 0.0);
    }
    // (val, exp) of hist_bucket_t: val in 10..=99, value = val/10 · 10^exp.
    let (val, exp) = if k < 10 {
        (k * 10, 0usize)
    } else {
        let mut e = 0usize;
        let mut m = k;
        while m >= 100 {
            m /= 10;
            e += 1;
        }
        (m, e + 1)
    };
    let p = POW10[exp];
    ((val as f64 / 10.0) * p, p / 10.0)
}

impl Hist {
    /// An empty histogram.
    pub(crate) fn new() -> Hist {
        Hist::default()
    }

    /// Adds a sample of `v` microseconds.
    pub(crate) fn insert(&mut self, v: u64) {
        *self.bins.entry(key(v)).or_insert(0) += 1;
        self.count += 1;
    }

    /// Samples held.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Bins occupied (the memory held).
    #[cfg(test)]
    pub(crate) fn bins(&self) -> usize {
        self.bins.len()
    }

    /// Forgets every sample.
    pub(crate) fn clear(&mut self) {
        self.bins.clear();
        self.count = 0;
    }

    /// `hist_approx_quantile` for `q` in [0, 1]; `None` when empty.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let mut it = self.bins.iter();
        let (&k, &c) = it.next()?;
        let target = self.count as f64 * q;
        let (mut left, mut width) = bounds(k);
        let (mut lower, mut upper) = (0.0, c as f64);
        for (&k, &c) in it {
            if upper >= target {
                break;
            }
            (left, width) = bounds(k);
            lower = upper;
            upper = lower + c as f64;
        }
        Some(if lower == target {
            left
        } else if upper == target {
            left + width
        } else if width == 0.0 {
            left
        } else {
            left + (target - lower) / (upper - lower) * width
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fall_in_bins_of_two_significant_digits() {
        assert_eq!(key(0), 0);
        assert_eq!(key(7), 7);
        assert_eq!(key(10), 10);
        assert_eq!(key(99), 99);
        assert_eq!(key(1234), 1200);
        assert_eq!(key(10_999), 10_000);
        assert_eq!(bounds(7), (7.0, 0.1));
        assert_eq!(bounds(1200), (1200.0, 100.0));
        assert_eq!(bounds(47), (47.0, 1.0));
        assert_eq!(bounds(470), (470.0, 10.0));
    }

    #[test]
    fn the_quantile_interpolates_inside_the_bin_it_lands_in() {
        let mut h = Hist::new();
        assert_eq!(h.quantile(0.5), None);
        for _ in 0..4 {
            h.insert(10_000); // [10000, 11000)
        }
        // p50: 2 of 4 → 10000 + 2/4 · 1000
        assert_eq!(h.quantile(0.5), Some(10_500.0));
        assert_eq!(h.quantile(0.0), Some(10_000.0));
        assert_eq!(h.quantile(1.0), Some(11_000.0));
        h.insert(20_000);
        h.insert(20_000);
        h.insert(20_000);
        h.insert(20_000);
        // p50 of 8: the first bin's upper edge exactly
        assert_eq!(h.quantile(0.5), Some(11_000.0));
        // p90: 7.2 of 8 → 20000 + 3.2/4 · 1000
        assert_eq!(h.quantile(0.9), Some(20_000.0 + 3.2 / 4.0 * 1000.0));
        assert_eq!(h.bins(), 2);
        h.clear();
        assert_eq!((h.count(), h.bins()), (0, 0));
    }

    #[test]
    fn memory_is_one_entry_per_occupied_bin() {
        let mut h = Hist::new();
        for v in 0..1_000_000u64 {
            h.insert(v);
        }
        // 0..=9, then 90 bins per decade for 10..10^6
        assert_eq!(h.bins(), 10 + 90 * 5);
    }
}
