//! What a run counts of its queue policies: attempts CoDel (or its timeout form)
//! dropped, per bucket of `[0, duration)` summed over the tiers, and per tier over the
//! whole run, drain included.

use crate::engine::Nanos;

/// CoDel drop counts of a run; `None` in [`crate::metrics::RunMetrics`] when no tier
/// has a queue policy that drops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dropped {
    bucket: Nanos,
    duration: Nanos,
    /// Per bucket: attempts the tiers' CoDel dropped.
    pub series: Vec<u64>,
    /// Per tier, whole run: attempts its CoDel dropped.
    pub per_tier: Vec<u64>,
}

impl Dropped {
    /// Counts for `tiers` tiers in buckets of `bucket` over `[0, duration)`.
    pub fn new(duration: Nanos, bucket: Nanos, tiers: usize) -> Dropped {
        Dropped {
            bucket,
            duration,
            series: vec![0; duration.div_ceil(bucket) as usize],
            per_tier: vec![0; tiers],
        }
    }

    /// Tier `sv`'s queue policy dropped an attempt at `now`.
    pub fn drop_at(&mut self, now: Nanos, sv: usize) {
        self.per_tier[sv] += 1;
        if now < self.duration {
            self.series[(now / self.bucket) as usize] += 1;
        }
    }

    /// Attempts every tier dropped.
    pub fn total(&self) -> u64 {
        self.per_tier.iter().sum()
    }
}
