//! What a run keeps of its tiers' concurrency limits: per tier with a limit, the limit
//! over `[0, duration)` (time-weighted per bucket and over the whole series, its least
//! and greatest value) and the attempts it refused, per bucket and over the whole run,
//! drain included.

use crate::engine::Nanos;

/// One tier's limit over the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierSeries {
    last_t: Nanos,
    last: u32,
    /// Per bucket: the integral of the limit over the bucket (limit · ns).
    area: Vec<u128>,
    /// Per bucket: attempts the limit refused.
    pub rejected_series: Vec<u64>,
    /// Whole run: attempts the limit refused.
    pub rejected: u64,
    /// The least limit held during `[0, duration)`.
    pub min: u32,
    /// The greatest limit held during `[0, duration)`.
    pub max: u32,
}

/// The concurrency limits of a run; `None` in [`crate::metrics::RunMetrics`] when no
/// tier has one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    bucket: Nanos,
    duration: Nanos,
    /// Per tier: its series, `None` without a limit.
    pub tiers: Vec<Option<TierSeries>>,
    /// The tier the fleets call (the `[dependency]`, or the first fleet's target).
    pub primary: usize,
}

impl Counts {
    /// Counts over `[0, duration)` in buckets of `bucket`, for tiers whose limit at
    /// time 0 `initial` gives (`None`: no limit).
    pub fn new(duration: Nanos, bucket: Nanos, initial: &[Option<u32>], primary: usize) -> Counts {
        let n = duration.div_ceil(bucket) as usize;
        let tiers = initial
            .iter()
            .map(|l| {
                l.map(|l| TierSeries {
                    last_t: 0,
                    last: l,
                    area: vec![0; n],
                    rejected_series: vec![0; n],
                    rejected: 0,
                    min: l,
                    max: l,
                })
            })
            .collect();
        Counts {
            bucket,
            duration,
            tiers,
            primary,
        }
    }

    /// Tier `sv`'s limit is `limit` from `now` on.
    pub fn set(&mut self, sv: usize, now: Nanos, limit: u32) {
        let (bucket, duration) = (self.bucket, self.duration);
        let Some(t) = self.tiers[sv].as_mut() else {
            return;
        };
        if limit == t.last {
            return;
        }
        t.close(now.min(duration), bucket);
        t.last = limit;
        if now < duration {
            t.min = t.min.min(limit);
            t.max = t.max.max(limit);
        }
    }

    /// Tier `sv`'s limit refused an attempt at `now`.
    pub fn refuse(&mut self, sv: usize, now: Nanos) {
        let (bucket, duration) = (self.bucket, self.duration);
        if let Some(t) = self.tiers[sv].as_mut() {
            t.rejected += 1;
            if now < duration {
                t.rejected_series[(now / bucket) as usize] += 1;
            }
        }
    }

    /// The counts once the run is over: every limit's integral closed at `duration`.
    pub fn finish(mut self) -> Counts {
        let (bucket, duration) = (self.bucket, self.duration);
        for t in self.tiers.iter_mut().flatten() {
            t.close(duration, bucket);
        }
        self
    }

    /// Tier `sv`'s time-weighted mean limit in bucket `i` (after [`Counts::finish`]).
    pub fn bucket_mean(&self, sv: usize, i: usize) -> Option<f64> {
        let t = self.tiers.get(sv)?.as_ref()?;
        let start = i as u64 * self.bucket;
        let len = (start + self.bucket)
            .min(self.duration)
            .checked_sub(start)?;
        let area = *t.area.get(i)?;
        (len > 0).then(|| area as f64 / len as f64)
    }

    /// Tier `sv`'s time-weighted mean limit over `[0, duration)`.
    pub fn mean(&self, sv: usize) -> Option<f64> {
        let t = self.tiers.get(sv)?.as_ref()?;
        (self.duration > 0).then(|| t.area.iter().sum::<u128>() as f64 / self.duration as f64)
    }

    /// Attempts the limits refused in bucket `i`, summed over the tiers.
    pub fn rejected_in(&self, i: usize) -> u64 {
        self.tiers
            .iter()
            .flatten()
            .map(|t| t.rejected_series.get(i).copied().unwrap_or(0))
            .sum()
    }

    /// Attempts every limit refused over the run.
    pub fn total_rejected(&self) -> u64 {
        self.tiers.iter().flatten().map(|t| t.rejected).sum()
    }
}

impl TierSeries {
    /// Adds the limit held from the last change to `end` (at most the duration).
    fn close(&mut self, end: Nanos, bucket: Nanos) {
        let mut t = self.last_t;
        while t < end {
            let b = t / bucket;
            let stop = ((b + 1) * bucket).min(end);
            self.area[b as usize] += u128::from(self.last) * u128::from(stop - t);
            t = stop;
        }
        self.last_t = self.last_t.max(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_averaged_over_time_in_each_bucket_and_the_run() {
        // Buckets of 10 over [0, 25): limit 4 until 5, 8 until 30 (past the end).
        let mut c = Counts::new(25, 10, &[None, Some(4)], 1);
        c.set(1, 5, 8);
        c.set(1, 30, 2); // after the duration: neither the mean nor min/max see it
        c.refuse(1, 3);
        c.refuse(1, 24);
        c.refuse(1, 26);
        let c = c.finish();
        assert_eq!(c.bucket_mean(1, 0), Some(6.0));
        assert_eq!(c.bucket_mean(1, 1), Some(8.0));
        assert_eq!(
            c.bucket_mean(1, 2),
            Some(8.0),
            "the last bucket is [20, 25)"
        );
        assert_eq!(c.mean(1), Some((4.0 * 5.0 + 8.0 * 20.0) / 25.0));
        let t = c.tiers[1].as_ref().unwrap();
        assert_eq!((t.min, t.max), (4, 8));
        assert_eq!(c.total_rejected(), 3);
        assert_eq!((c.rejected_in(0), c.rejected_in(2)), (1, 1));
        assert_eq!(c.bucket_mean(0, 0), None);
    }
}
