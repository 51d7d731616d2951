//! What a run counts of its limiters: admitted and refused attempts per bucket of
//! `[0, duration)` (summed over the tiers with `admission`), and per tier over the
//! whole run, drain included.

use crate::engine::Nanos;

/// Admission counts of a run; `None` in [`crate::metrics::RunMetrics`] when no tier
/// has a limiter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    bucket: Nanos,
    duration: Nanos,
    /// Per bucket: attempts the limiters admitted.
    pub admitted_series: Vec<u64>,
    /// Per bucket: attempts the limiters refused.
    pub limited_series: Vec<u64>,
    /// Per tier, whole run: attempts its limiter admitted.
    pub admitted: Vec<u64>,
    /// Per tier, whole run: attempts its limiter refused.
    pub limited: Vec<u64>,
    /// Per tier, whole run: attempts its limiter admitted with a delay (counted in
    /// `admitted` too).
    pub delayed: Vec<u64>,
    /// Per tier, whole run: the sum of those delays (ns).
    pub delay_sum: Vec<u128>,
}

impl Counts {
    /// Counts for `tiers` tiers in buckets of `bucket` over `[0, duration)`.
    pub fn new(duration: Nanos, bucket: Nanos, tiers: usize) -> Counts {
        let n = duration.div_ceil(bucket) as usize;
        Counts {
            bucket,
            duration,
            admitted_series: vec![0; n],
            limited_series: vec![0; n],
            admitted: vec![0; tiers],
            limited: vec![0; tiers],
            delayed: vec![0; tiers],
            delay_sum: vec![0; tiers],
        }
    }

    /// Tier `sv`'s limiter admitted an attempt at `now`.
    pub fn admit(&mut self, now: Nanos, sv: usize) {
        self.admitted[sv] += 1;
        if now < self.duration {
            self.admitted_series[(now / self.bucket) as usize] += 1;
        }
    }

    /// Tier `sv`'s limiter refused an attempt at `now`.
    pub fn limit(&mut self, now: Nanos, sv: usize) {
        self.limited[sv] += 1;
        if now < self.duration {
            self.limited_series[(now / self.bucket) as usize] += 1;
        }
    }

    /// Tier `sv`'s limiter delayed an attempt it admitted by `d`.
    pub fn delay(&mut self, sv: usize, d: Nanos) {
        self.delayed[sv] += 1;
        self.delay_sum[sv] += u128::from(d);
    }

    /// Attempts every limiter delayed.
    pub fn total_delayed(&self) -> u64 {
        self.delayed.iter().sum()
    }

    /// The mean delay (ms) of the attempts delayed by the tiers `which` selects,
    /// `None` when none was.
    pub fn mean_delay_ms(&self, which: impl Fn(usize) -> bool) -> Option<f64> {
        let (n, sum) = (0..self.delayed.len())
            .filter(|&i| which(i))
            .fold((0u64, 0u128), |(n, s), i| {
                (n + self.delayed[i], s + self.delay_sum[i])
            });
        (n > 0).then(|| sum as f64 / n as f64 / 1e6)
    }

    /// Attempts admitted by every limiter.
    pub fn total_admitted(&self) -> u64 {
        self.admitted.iter().sum()
    }

    /// Attempts refused by every limiter.
    pub fn total_limited(&self) -> u64 {
        self.limited.iter().sum()
    }
}
