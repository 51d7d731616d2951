//! Per-service measurements of a service graph: what `services.csv` holds (one row per
//! bucket and service) and the per-service summary columns.
//!
//! Counts are per bucket (`inbound`, `served`, `rejected`, `shed`, `goodput`,
//! `wasted`), levels are time-weighted over the bucket (`queue_mean`, `threads_busy`),
//! and the totals cover the whole run, drain included. Only a scenario written with
//! `[[services]]` tracks them.

use crate::engine::Nanos;

/// One bucket of one service, or its whole-run totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceRow {
    /// Attempts that reached the service.
    pub inbound: u64,
    /// Requests it answered (success or failure) after serving them.
    pub served: u64,
    /// Requests refused for capacity (queue full).
    pub rejected: u64,
    /// Requests dropped because their deadline had passed (or nobody waited, with
    /// `drop_expired`).
    pub shed: u64,
    /// Successful answers somebody still waited for.
    pub goodput: u64,
    /// Answers nobody waited for any more.
    pub wasted: u64,
    /// Queue length × time (ns).
    pub queue_area: u128,
    /// Busy threads × time (ns).
    pub busy_area: u128,
}

/// The measurements of one service.
#[derive(Debug, Clone)]
pub struct ServiceTrack {
    /// Its servers (threads), `None` when unlimited.
    pub servers: Option<u32>,
    /// Per bucket over `[0, duration)`.
    pub rows: Vec<ServiceRow>,
    /// Over the whole run (the areas are not kept here).
    pub totals: ServiceRow,
    busy: u64,
    queue: u64,
    last: Nanos,
}

/// The measurements of every service of a graph.
#[derive(Debug, Clone)]
pub struct ServiceSeries {
    bucket: Nanos,
    duration: Nanos,
    /// Per service, in `[[services]]` order.
    pub services: Vec<ServiceTrack>,
}

impl ServiceSeries {
    /// Tracks services with `servers` each, in buckets of `bucket` over `[0, duration)`.
    pub fn new(duration: Nanos, bucket: Nanos, servers: Vec<Option<u32>>) -> ServiceSeries {
        let n = duration.div_ceil(bucket) as usize;
        ServiceSeries {
            bucket,
            duration,
            services: servers
                .into_iter()
                .map(|servers| ServiceTrack {
                    servers,
                    rows: vec![ServiceRow::default(); n],
                    totals: ServiceRow::default(),
                    busy: 0,
                    queue: 0,
                    last: 0,
                })
                .collect(),
        }
    }

    /// The bucket width.
    pub fn bucket(&self) -> Nanos {
        self.bucket
    }

    /// The real width of bucket `i` (the last may be partial).
    pub fn width(&self, i: usize) -> Nanos {
        let t = i as Nanos * self.bucket;
        t.saturating_add(self.bucket)
            .min(self.duration)
            .saturating_sub(t)
    }

    /// Counts one event of service `sv` at `now` with `f`, in its bucket and totals.
    #[inline]
    fn count(&mut self, now: Nanos, sv: usize, f: impl Fn(&mut ServiceRow)) {
        let i = (now / self.bucket) as usize;
        let tr = &mut self.services[sv];
        f(&mut tr.totals);
        if now < self.duration {
            if let Some(r) = tr.rows.get_mut(i) {
                f(r);
            }
        }
    }

    /// An attempt reached service `sv`.
    pub fn inbound(&mut self, now: Nanos, sv: usize) {
        self.count(now, sv, |r| r.inbound += 1);
    }

    /// Service `sv` refused a request for capacity.
    pub fn rejected(&mut self, now: Nanos, sv: usize) {
        self.count(now, sv, |r| r.rejected += 1);
    }

    /// Service `sv` dropped a request nobody waits for.
    pub fn shed(&mut self, now: Nanos, sv: usize) {
        self.count(now, sv, |r| r.shed += 1);
    }

    /// Service `sv` answered: `good` a success somebody waits for, `wasted` an answer
    /// nobody waits for.
    pub fn served(&mut self, now: Nanos, sv: usize, good: bool, wasted: bool) {
        self.count(now, sv, |r| {
            r.served += 1;
            r.goodput += u64::from(good);
            r.wasted += u64::from(wasted);
        });
    }

    /// Adds the levels of service `sv` from its last change until `until` to the
    /// buckets they span.
    fn accrue(&mut self, sv: usize, until: Nanos) {
        let (bucket, duration) = (self.bucket, self.duration);
        let tr = &mut self.services[sv];
        let end = until.min(duration);
        let mut t = tr.last;
        while t < end {
            let i = (t / bucket) as usize;
            let stop = ((i as Nanos + 1) * bucket).min(end);
            let dt = u128::from(stop - t);
            if let Some(r) = tr.rows.get_mut(i) {
                r.busy_area += u128::from(tr.busy) * dt;
                r.queue_area += u128::from(tr.queue) * dt;
            }
            t = stop;
        }
        tr.last = tr.last.max(until);
    }

    /// Busy threads of service `sv` changed at `now`.
    pub fn set_busy(&mut self, now: Nanos, sv: usize, busy: u32) {
        self.accrue(sv, now);
        self.services[sv].busy = u64::from(busy);
    }

    /// The queue of service `sv` changed at `now`.
    pub fn set_queue(&mut self, now: Nanos, sv: usize, queued: u64) {
        self.accrue(sv, now);
        self.services[sv].queue = queued;
    }

    /// Closes every service's levels at `end`.
    pub fn finish(&mut self, end: Nanos) {
        for sv in 0..self.services.len() {
            self.accrue(sv, end);
        }
    }

    /// The mean busy threads of service `sv` in bucket `i`.
    pub fn threads_busy(&self, sv: usize, i: usize) -> f64 {
        self.services[sv].rows[i].busy_area as f64 / self.width(i).max(1) as f64
    }

    /// The mean queue length of service `sv` in bucket `i`.
    pub fn queue_mean(&self, sv: usize, i: usize) -> f64 {
        self.services[sv].rows[i].queue_area as f64 / self.width(i).max(1) as f64
    }

    /// The utilisation of service `sv` in bucket `i` (`None` with unlimited threads).
    pub fn utilisation(&self, sv: usize, i: usize) -> Option<f64> {
        let servers = self.services[sv].servers?;
        Some(self.threads_busy(sv, i) / f64::from(servers))
    }

    /// The busiest bucket's utilisation of service `sv`.
    pub fn utilisation_peak(&self, sv: usize) -> Option<f64> {
        (0..self.services[sv].rows.len())
            .filter_map(|i| self.utilisation(sv, i))
            .reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_split_at_bucket_boundaries_and_counts_land_in_their_bucket() {
        // Buckets of 10 over [0, 25): widths 10, 10, 5.
        let mut s = ServiceSeries::new(25, 10, vec![Some(4), None]);
        s.set_busy(5, 0, 2); // 2 busy from 5 ...
        s.set_queue(12, 0, 3);
        s.set_busy(15, 0, 4); // ... 4 from 15 ...
        s.inbound(3, 0);
        s.inbound(24, 0);
        s.inbound(30, 0); // drain: totals only
        s.served(11, 1, true, false);
        s.finish(40);
        let t = &s.services[0];
        assert_eq!(t.rows[0].busy_area, 2 * 5);
        assert_eq!(t.rows[1].busy_area, 2 * 5 + 4 * 5);
        assert_eq!(t.rows[2].busy_area, 4 * 5);
        assert_eq!(t.rows[1].queue_area, 3 * 8);
        assert_eq!(t.rows[2].queue_area, 3 * 5);
        assert_eq!(
            t.rows.iter().map(|r| r.inbound).collect::<Vec<_>>(),
            [1, 0, 1]
        );
        assert_eq!(t.totals.inbound, 3);
        assert_eq!(s.services[1].rows[1].goodput, 1);
        assert_eq!(s.threads_busy(0, 2), 4.0);
        assert_eq!(s.utilisation(0, 1), Some(0.75));
        assert_eq!(s.utilisation_peak(0), Some(1.0));
        assert_eq!(s.utilisation(1, 0), None);
    }
}
