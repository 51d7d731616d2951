//! Server time spent on rejections (a tier's `reject_cost`): per tier, the threads busy
//! rejecting, time-weighted per bucket of `[0, duration)` and over the whole series.
//! Tracked only when some tier has `reject_cost > 0`; the model reports each change
//! from its cold rejection path, so a run without rejection cost pays nothing.

use crate::engine::Nanos;

/// The rejecting threads of every tier of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectBusy {
    bucket: Nanos,
    duration: Nanos,
    /// Per tier: its servers (`None` when unlimited).
    pub servers: Vec<Option<u32>>,
    /// The tier the first fleet calls, which `timeseries.csv` and the whole-run
    /// column describe.
    pub primary: usize,
    /// Per tier, per bucket: rejecting threads × time (ns).
    pub areas: Vec<Vec<u128>>,
    /// Per tier: threads rejecting now.
    level: Vec<u32>,
    /// Per tier: when its level last changed or was accrued.
    since: Vec<Nanos>,
}

impl RejectBusy {
    /// Tracks tiers with `servers` each, `primary` the one the first fleet calls, in
    /// buckets of `bucket` over `[0, duration)`.
    pub fn new(
        duration: Nanos,
        bucket: Nanos,
        servers: Vec<Option<u32>>,
        primary: usize,
    ) -> RejectBusy {
        let n = duration.div_ceil(bucket) as usize;
        let tiers = servers.len();
        RejectBusy {
            bucket,
            duration,
            servers,
            primary,
            areas: vec![vec![0; n]; tiers],
            level: vec![0; tiers],
            since: vec![0; tiers],
        }
    }

    /// Adds tier `sv`'s level from its last change until `until` to the buckets it
    /// spans.
    fn accrue(&mut self, sv: usize, until: Nanos) {
        let end = until.min(self.duration);
        let level = u128::from(self.level[sv]);
        let mut t = self.since[sv];
        while t < end {
            let i = (t / self.bucket) as usize;
            let stop = ((i as Nanos + 1) * self.bucket).min(end);
            self.areas[sv][i] += level * u128::from(stop - t);
            t = stop;
        }
        self.since[sv] = self.since[sv].max(until);
    }

    /// A thread of tier `sv` started (`true`) or finished spending its `reject_cost`
    /// on a rejection at `now`.
    pub fn change(&mut self, now: Nanos, sv: usize, started: bool) {
        self.accrue(sv, now);
        if started {
            self.level[sv] += 1;
        } else {
            self.level[sv] -= 1;
        }
    }

    /// Closes every tier's level at `end`.
    pub fn finish(&mut self, end: Nanos) {
        for sv in 0..self.level.len() {
            self.accrue(sv, end);
        }
    }

    /// The real width of bucket `i` (the last may be partial).
    fn width(&self, i: usize) -> Nanos {
        let t = i as Nanos * self.bucket;
        t.saturating_add(self.bucket)
            .min(self.duration)
            .saturating_sub(t)
    }

    /// The mean threads of tier `sv` busy rejecting in bucket `i`.
    pub fn rejecting(&self, sv: usize, i: usize) -> f64 {
        self.areas[sv][i] as f64 / self.width(i).max(1) as f64
    }

    /// The mean threads of tier `sv` busy rejecting over `[0, duration)`.
    pub fn rejecting_mean(&self, sv: usize) -> f64 {
        let area: u128 = self.areas[sv].iter().sum();
        area as f64 / self.duration.max(1) as f64
    }

    /// The fraction of tier `sv`'s server time over `[0, duration)` spent rejecting
    /// (`None` with unlimited servers).
    pub fn fraction(&self, sv: usize) -> Option<f64> {
        let servers = self.servers[sv]?;
        Some(self.rejecting_mean(sv) / f64::from(servers.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejecting_threads_are_split_at_bucket_boundaries_and_stop_at_the_series_end() {
        // Buckets of 10 over [0, 25): widths 10, 10, 5; tier 0 has 4 servers.
        let mut r = RejectBusy::new(25, 10, vec![Some(4), None], 0);
        r.change(5, 0, true); // 1 rejecting from 5 ...
        r.change(8, 0, true); // ... 2 from 8 ...
        r.change(12, 0, false); // ... 1 from 12 to the end (drain beyond 25 is dropped)
        r.change(3, 1, true);
        r.change(4, 1, false);
        r.finish(40);
        assert_eq!(r.areas[0], [3 + 2 * 2, 2 * 2 + 8, 5]);
        assert_eq!(r.rejecting(0, 2), 1.0);
        assert_eq!(r.rejecting_mean(0), 24.0 / 25.0);
        assert_eq!(r.fraction(0), Some(24.0 / 25.0 / 4.0));
        assert_eq!(r.areas[1], [1, 0, 0]);
        assert_eq!(r.fraction(1), None);
    }
}
