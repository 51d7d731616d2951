//! Measurements of bulkheads and connection pools (see `model::guard`): refusals,
//! waits for a connection and connections in use per bucket, summed over every
//! bulkhead and pool of the scenario (fleets' and service calls'). Only a scenario
//! with one tracks them.

use hdrhistogram::Histogram;

use crate::engine::Nanos;

use super::quantiles::new_histogram;

/// The guards' measurements of one run.
#[derive(Debug, Clone)]
pub struct GuardMetrics {
    /// Attempts refused by a full bulkhead.
    pub bulkhead_full: u64,
    /// Attempts that got no connection within `acquire_timeout`.
    pub pool_exhausted: u64,
    /// Waits for a connection that ended (a connection, or `pool_exhausted`).
    pub pool_waits: u64,
    /// Their total (ns).
    pub pool_wait_ns: u128,
    /// Their distribution (µs; waits of 0 counted in `waits_zero` until the end).
    pub pool_wait: Histogram<u64>,
    waits_zero: u64,
    /// Connections in use × time (ns), per bucket over `[0, duration)`.
    pub in_use_area: Vec<u128>,
    in_use: u64,
    last: Nanos,
    bucket: Nanos,
    duration: Nanos,
}

impl GuardMetrics {
    /// Measurements in buckets of `bucket` over `[0, duration)`.
    pub fn new(duration: Nanos, bucket: Nanos) -> GuardMetrics {
        GuardMetrics {
            bulkhead_full: 0,
            pool_exhausted: 0,
            pool_waits: 0,
            pool_wait_ns: 0,
            pool_wait: new_histogram(),
            waits_zero: 0,
            in_use_area: vec![0; duration.div_ceil(bucket) as usize],
            in_use: 0,
            last: 0,
            bucket,
            duration,
        }
    }

    fn accrue(&mut self, until: Nanos) {
        let end = until.min(self.duration);
        let mut t = self.last;
        while t < end {
            let i = (t / self.bucket) as usize;
            let stop = ((i as Nanos + 1) * self.bucket).min(end);
            if let Some(a) = self.in_use_area.get_mut(i) {
                *a += u128::from(self.in_use) * u128::from(stop - t);
            }
            t = stop;
        }
        self.last = self.last.max(until);
    }

    /// Connections in use changed by `delta` at `now`.
    pub fn in_use_change(&mut self, now: Nanos, up: bool) {
        self.accrue(now);
        if up {
            self.in_use += 1;
        } else {
            self.in_use -= 1;
        }
    }

    /// A wait for a connection ended after `wait`.
    pub fn waited(&mut self, wait: Nanos) {
        self.pool_waits += 1;
        self.pool_wait_ns += u128::from(wait);
        if wait == 0 {
            self.waits_zero += 1;
        } else {
            let _ = self.pool_wait.record(wait.div_ceil(1000).max(1));
        }
    }

    /// Closes the series at `end`.
    pub fn finish(&mut self, end: Nanos) {
        self.accrue(end);
        let _ = self.pool_wait.record_n(0, self.waits_zero);
        self.waits_zero = 0;
    }

    /// The mean connections in use in bucket `i` of width `width`.
    pub fn in_use_mean(&self, i: usize, width: Nanos) -> Option<f64> {
        let a = self.in_use_area.get(i)?;
        (width > 0).then(|| *a as f64 / width as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_in_use_are_time_weighted_per_bucket() {
        let mut g = GuardMetrics::new(3_000, 1_000);
        g.in_use_change(500, true); // 1 from 500
        g.in_use_change(1_500, true); // 2 from 1500
        g.in_use_change(2_000, false); // 1 from 2000
        g.finish(3_000);
        assert_eq!(g.in_use_area, vec![500, 500 + 1_000, 1_000]);
        assert_eq!(g.in_use_mean(1, 1_000), Some(1.5));
        g.waited(0);
        g.waited(2_000_000);
        assert_eq!((g.pool_waits, g.pool_wait_ns), (2, 2_000_000));
    }
}
