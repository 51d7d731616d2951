//! Collects observations while a run goes: counters per time bucket, time-weighted
//! levels (queue length, busy servers, open breakers), whole-run totals and latency
//! histograms.
//!
//! The model calls [`Recorder::advance`] with the event time before it changes any level,
//! so each level's area is split exactly at bucket boundaries.
//!
//! The series covers `[0, duration)` (MODEL.md §1): when `duration` is not a multiple of
//! the bucket width, the last bucket is partial, `[t, duration)`, and closes at
//! `duration`. Nothing at or after `duration` (the drain) goes into the series; the
//! totals count everything.

use hdrhistogram::Histogram;

use crate::engine::Nanos;
use crate::model::observe::{CallAt, CallObserver, Refusal, SvcAt};
use crate::model::outcome::Class;
use crate::model::request::Arena;

use super::bins::Bins;
use super::guards::GuardMetrics;
use super::ordinal::{End, Ordinals};
pub(crate) use super::quantiles::MAX_BUCKET_SAMPLES;
use super::quantiles::{new_histogram, BucketQuantiles};
use super::services::ServiceSeries;

/// One bucket of the time series, as raw counts and areas.
#[derive(Debug, Clone, Default)]
pub struct BucketRow {
    /// Bucket start.
    pub t: Nanos,
    /// Logical arrivals.
    pub offered: u64,
    /// Attempts arriving at the dependency (rejected included).
    pub inbound: u64,
    /// Attempts that finished service.
    pub served: u64,
    /// Logical successes.
    pub successes: u64,
    /// Logical completions (successes and failures).
    pub completions: u64,
    /// ∫ queue length dt, in attempt·ns.
    pub queue_area: u128,
    /// Largest queue length.
    pub queue_max: u64,
    /// ∫ busy servers dt.
    pub busy_area: u128,
    /// Service time of attempts whose caller had given up.
    pub wasted_ns: u64,
    /// ∫ open breaker instances dt.
    pub breaker_area: u128,
    /// Mean budget fill level at the bucket's end.
    pub budget_level: Option<f64>,
    /// Outcomes counted in the bucket, by class index.
    pub outcomes: [u64; Class::COUNT],
    /// Median latency of completions in the bucket (ns).
    pub latency_p50: Option<u64>,
    /// 99th percentile latency of completions in the bucket (ns).
    pub latency_p99: Option<u64>,
    /// Median latency of the bucket's successes (ns).
    pub success_latency_p50: Option<u64>,
    /// 99th percentile latency of the bucket's successes (ns).
    pub success_latency_p99: Option<u64>,
    /// Median time to failure of the bucket's failed requests (ns).
    pub failure_latency_p50: Option<u64>,
    /// Attempts the dependency admitted (to a server or its queue).
    pub admitted: u64,
    /// Admitted attempts that found no free server and queued.
    pub waited: u64,
    /// Attempts refused at arrival by a full queue.
    pub blocked: u64,
    /// Attempts that reached a server.
    pub started: u64,
    /// Time those attempts waited for their server.
    pub wait_ns: u128,
}

/// Per-fleet totals.
#[derive(Debug, Clone, Default)]
pub struct FleetTotals {
    /// Logical requests.
    pub logical: u64,
    /// Logical successes.
    pub succeeded: u64,
    /// Logical failures.
    pub failed: u64,
    /// Attempts that reached the dependency.
    pub attempts: u64,
}

/// Whole-run totals.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Logical requests.
    pub logical: u64,
    /// Logical successes.
    pub succeeded: u64,
    /// Logical failures.
    pub failed: u64,
    /// Attempts that reached the dependency.
    pub attempts: u64,
    /// Copies a hedging layer sent after its first, in any stack.
    pub hedges: u64,
    /// Hedged calls won by a copy other than the first.
    pub hedge_wins: u64,
    /// Copies still out when their hedged call was decided.
    pub hedge_losers: u64,
    /// Outcomes by class index, counted where they arose.
    pub outcomes: [u64; Class::COUNT],
    /// Attempts that finished service.
    pub served: u64,
    /// Total service time.
    pub service_ns: u128,
    /// Service time of attempts whose caller had given up.
    pub wasted_ns: u128,
    /// Queued attempts skipped by `drop_expired`.
    pub shed: u64,
    /// Logical writes applied more than once.
    pub duplicates: u64,
    /// Applications beyond the first, over all writes.
    pub duplicate_applies: u64,
    /// Calls made by each layer (index = layer depth).
    pub layer_calls: Vec<u64>,
    /// Sum of logical latencies.
    pub latency_sum_ns: u128,
    /// Per fleet.
    pub fleets: Vec<FleetTotals>,
    /// Times a breaker opened.
    pub breaker_trips: u64,
    /// Events handled.
    pub events: u64,
    /// Why the run stopped early, if it did.
    pub truncated: Option<String>,
    /// Time of the last logical completion.
    pub last_completion: Nanos,
    /// Time of the last logical success.
    pub last_success: Option<Nanos>,
    /// Conditional writes processed by an OCC dependency.
    pub write_calls: u64,
    /// Sum of the latencies of logical successes.
    pub success_latency_sum_ns: u128,
    /// Sum of the times to failure of logical failures.
    pub failure_latency_sum_ns: u128,
    /// Attempts the dependency admitted (to a server or its queue).
    pub admitted: u64,
    /// Admitted attempts that found no free server and queued.
    pub waited: u64,
    /// Attempts refused at arrival by a full queue.
    pub blocked: u64,
    /// Attempts that reached a server.
    pub started: u64,
    /// Time those attempts waited for their server.
    pub wait_ns: u128,
}

/// Everything a finished run measured.
#[derive(Debug, Clone)]
pub struct RunMetrics {
    /// The time series over `[0, duration)`.
    pub buckets: Vec<BucketRow>,
    /// Bucket width (the last bucket may be narrower: see [`RunMetrics::width`]).
    pub bucket: Nanos,
    /// End of the series (the run's `duration`).
    pub duration: Nanos,
    /// Whole-run totals.
    pub totals: Totals,
    /// Latency of every logical completion, in microseconds.
    pub latency: Histogram<u64>,
    /// Latency of every logical success, in microseconds.
    pub success_latency: Histogram<u64>,
    /// Time to failure of every logical failure, in microseconds.
    pub failure_latency: Histogram<u64>,
    /// Wait for a server of every attempt that reached one, in microseconds (0 = none).
    pub wait: Histogram<u64>,
    /// Fine-grained inbound counts: `(start, width, counts)`.
    pub herd: Option<(Nanos, Nanos, Vec<u64>)>,
    /// Logical requests still in flight at the end.
    pub in_flight: u64,
    /// When the run stopped.
    pub end: Nanos,
    /// Attempts by layer, ordinal and how they ended.
    pub ordinals: Ordinals,
    /// Per service, for a service graph.
    pub services: Option<ServiceSeries>,
    /// The message queues, when the scenario has a queue fleet.
    pub queue: Option<super::queue::QueueMetrics>,
    /// Bulkheads and pools (`None` when the scenario has none).
    pub guards: Option<GuardMetrics>,
    /// The tiers' limiters (`None` when no tier has `admission`).
    pub admission: Option<crate::model::admission::Counts>,
    /// The tiers' concurrency limits (`None` when no tier has `concurrency_limit`).
    pub limits: Option<crate::model::concurrency::Counts>,
    /// The tiers' threads busy rejecting (`None` when no tier has `reject_cost`).
    pub reject_busy: Option<super::reject::RejectBusy>,
    /// Attempts the tiers shed by criticality, per class.
    pub priority_shed: crate::model::criticality::ShedCounts,
    /// Attempts the tiers' CoDel dropped (`None` when no tier's queue policy drops).
    pub codel: Option<crate::model::queue_policy::Dropped>,
}

impl RunMetrics {
    /// The real width of bucket `b`: `bucket`, or `duration - t` for a partial last
    /// bucket. Rates and time-weighted means of a bucket are normalised by it.
    pub fn width(&self, b: &BucketRow) -> Nanos {
        b.t.saturating_add(self.bucket)
            .min(self.duration)
            .saturating_sub(b.t)
    }
}

/// The live recorder.
#[derive(Debug)]
/// Public for the reference bench (feature `dev-hooks`), the crate's own otherwise.
#[cfg_attr(not(feature = "dev-hooks"), allow(unreachable_pub))]
pub struct Recorder {
    bucket: Nanos,
    /// End of the series.
    duration: Nanos,
    buckets: Vec<BucketRow>,
    /// The bucket being filled: counted here, without an index per observation, and
    /// stored at `buckets[cur]` when it closes (past the series, it is dropped).
    live: BucketRow,
    cur: usize,
    next_boundary: Nanos,
    /// When each level (queue, busy, open) last changed or was accrued.
    queue_since: Nanos,
    busy_since: Nanos,
    open_since: Nanos,
    queue_len: u64,
    busy: u64,
    open: u64,
    totals: Totals,
    /// Latencies (µs) of successes and of failures, and waits for a server, in the
    /// bins of the run's histograms (see [`Bins`]).
    success_latency: Bins,
    failure_latency: Bins,
    wait: Bins,
    /// Latencies (ns) of the current bucket's successes and failures (its completions
    /// are both together).
    bucket_success: BucketQuantiles,
    bucket_failure: BucketQuantiles,
    /// Room to put them together when the bucket closes.
    bucket_scratch: Vec<u64>,
    herd_start: Nanos,
    herd_width: Nanos,
    herd: Vec<u64>,
    herd_writes: bool,
    ordinals: Ordinals,
    services: Option<ServiceSeries>,
    guards: Option<Box<GuardMetrics>>,
    /// Admission counts, when a tier has a limiter.
    pub(crate) admission: Option<Box<crate::model::admission::Counts>>,
    /// The concurrency limits, when a tier has one.
    pub(crate) limits: Option<Box<crate::model::concurrency::Counts>>,
    /// Threads busy rejecting, when a tier has a `reject_cost`.
    reject_busy: Option<Box<super::reject::RejectBusy>>,
    /// Attempts the tiers shed by criticality, per class.
    pub(crate) priority_shed: crate::model::criticality::ShedCounts,
    /// CoDel drop counts, when a tier's queue policy drops.
    pub(crate) codel: Option<Box<crate::model::queue_policy::Dropped>>,
}

/// A latency in whole microseconds, rounded up, at least 1 (the histograms' unit).
#[inline]
fn micros(ns: Nanos) -> u64 {
    ns.div_ceil(1000).max(1)
}

#[cfg_attr(not(feature = "dev-hooks"), allow(unreachable_pub))]
impl Recorder {
    /// A recorder for `ceil(duration / bucket)` buckets covering `[0, duration)` (the
    /// last one partial when `bucket` does not divide `duration`), `fleets` fleets,
    /// `layers` layer depths, and a herd window `(start, width, count)` of fine buckets.
    pub fn new(
        duration: Nanos,
        bucket: Nanos,
        fleets: usize,
        layers: usize,
        herd: Option<(Nanos, Nanos, usize)>,
    ) -> Recorder {
        let n = duration.div_ceil(bucket) as usize;
        let buckets = (0..n)
            .map(|i| BucketRow {
                t: i as Nanos * bucket,
                ..BucketRow::default()
            })
            .collect();
        let (herd_start, herd_width, herd_n) = herd.unwrap_or((0, 1, 0));
        Recorder {
            bucket,
            duration,
            buckets,
            live: BucketRow::default(),
            cur: 0,
            next_boundary: bucket.min(duration),
            queue_since: 0,
            busy_since: 0,
            open_since: 0,
            queue_len: 0,
            busy: 0,
            open: 0,
            totals: Totals {
                layer_calls: vec![0; layers],
                fleets: vec![FleetTotals::default(); fleets],
                ..Totals::default()
            },
            success_latency: Bins::default(),
            failure_latency: Bins::default(),
            wait: Bins::default(),
            bucket_success: BucketQuantiles::default(),
            bucket_failure: BucketQuantiles::default(),
            bucket_scratch: Vec::new(),
            herd_start,
            herd_width,
            herd: vec![0; herd_n],
            herd_writes: false,
            ordinals: Ordinals::new(layers),
            services: None,
            guards: None,
            admission: None,
            limits: None,
            reject_busy: None,
            priority_shed: [0; 4],
            codel: None,
        }
    }

    /// Tracks the threads busy rejecting of tiers with `servers` threads each,
    /// `primary` the one the first fleet calls.
    pub(crate) fn track_reject_busy(&mut self, servers: Vec<Option<u32>>, primary: usize) {
        let r = super::reject::RejectBusy::new(self.duration, self.bucket, servers, primary);
        self.reject_busy = Some(Box::new(r));
    }

    /// Tracks the services of a graph, with `servers` threads each.
    pub(crate) fn track_services(&mut self, servers: Vec<Option<u32>>) {
        self.services = Some(ServiceSeries::new(self.duration, self.bucket, servers));
    }

    /// Tracks bulkheads and connection pools (see [`GuardMetrics`]).
    pub(crate) fn track_guards(&mut self) {
        self.guards = Some(Box::new(GuardMetrics::new(self.duration, self.bucket)));
    }

    /// A hedging layer sent a copy after its first.
    pub(crate) fn hedge_sent(&mut self) {
        self.totals.hedges += 1;
    }

    /// A hedged call was won by a copy other than its first.
    pub(crate) fn hedge_won(&mut self) {
        self.totals.hedge_wins += 1;
    }

    /// A copy was still out when its hedged call was decided.
    pub(crate) fn hedge_lost(&mut self) {
        self.totals.hedge_losers += 1;
    }

    /// A bulkhead or a pool refused an attempt (`bulkhead_full`, `pool_exhausted`).
    pub(crate) fn guard_refused(&mut self, class: Class) {
        if let Some(g) = &mut self.guards {
            match class {
                Class::BulkheadFull => g.bulkhead_full += 1,
                _ => g.pool_exhausted += 1,
            }
        }
    }

    /// A free connection was taken at `now` (a wait of 0).
    pub(crate) fn pool_acquired(&mut self, now: Nanos, wait: Nanos) {
        if let Some(g) = &mut self.guards {
            g.in_use_change(now, true);
            g.waited(wait);
        }
    }

    /// A wait for a connection ended after `wait` (a connection handed over, or none).
    pub(crate) fn pool_waited(&mut self, wait: Nanos) {
        if let Some(g) = &mut self.guards {
            g.waited(wait);
        }
    }

    /// A connection went back to its pool at `now`.
    pub(crate) fn pool_released(&mut self, now: Nanos) {
        if let Some(g) = &mut self.guards {
            g.in_use_change(now, false);
        }
    }

    /// An attempt reached service `sv` (see [`ServiceSeries`]).
    #[inline]
    pub(crate) fn svc_inbound(&mut self, now: Nanos, sv: usize) {
        if let Some(s) = &mut self.services {
            s.inbound(now, sv);
        }
    }

    /// Service `sv` refused a request for capacity.
    #[inline]
    pub(crate) fn svc_rejected(&mut self, now: Nanos, sv: usize) {
        if let Some(s) = &mut self.services {
            s.rejected(now, sv);
        }
    }

    /// Service `sv` dropped a request nobody waits for.
    #[inline]
    pub(crate) fn svc_shed(&mut self, now: Nanos, sv: usize) {
        if let Some(s) = &mut self.services {
            s.shed(now, sv);
        }
    }

    /// Service `sv` answered a request.
    #[inline]
    pub(crate) fn svc_served(&mut self, now: Nanos, sv: usize, good: bool, wasted: bool) {
        if let Some(s) = &mut self.services {
            s.served(now, sv, good, wasted);
        }
    }

    /// Busy threads of service `sv` changed.
    #[inline]
    pub(crate) fn svc_busy(&mut self, now: Nanos, sv: usize, busy: u32) {
        if let Some(s) = &mut self.services {
            s.set_busy(now, sv, busy);
        }
    }

    /// The queue of service `sv` changed.
    #[inline]
    pub(crate) fn svc_queue(&mut self, now: Nanos, sv: usize, queued: u64) {
        if let Some(s) = &mut self.services {
            s.set_queue(now, sv, queued);
        }
    }

    /// Makes the herd series count conditional writes (OCC) instead of arrivals.
    pub(crate) fn herd_counts_writes(&mut self) {
        self.herd_writes = true;
    }

    #[inline]
    fn herd_count(&mut self, now: Nanos) {
        if now >= self.herd_start {
            let i = ((now - self.herd_start) / self.herd_width) as usize;
            if let Some(c) = self.herd.get_mut(i) {
                *c += 1;
            }
        }
    }

    /// An OCC dependency processed a conditional write.
    #[inline]
    pub(crate) fn write_call(&mut self, now: Nanos, _success: bool) {
        self.totals.write_calls += 1;
        self.herd_count(now);
    }

    /// Whether `now` is past the current bucket (the caller then passes the budget
    /// level to [`advance`](Self::advance)).
    #[inline]
    pub fn crosses(&self, now: Nanos) -> bool {
        now >= self.next_boundary
    }

    /// Adds every level's area up to `until` to the current bucket.
    #[inline]
    fn accrue(&mut self, until: Nanos) {
        self.accrue_queue(until);
        self.accrue_busy(until);
        self.accrue_open(until);
    }

    // Each level keeps its own last change, so a change of one level adds only its own
    // area: the sums are the same integers as splitting at every change of any level.

    #[inline]
    fn accrue_queue(&mut self, until: Nanos) {
        self.live.queue_area += u128::from(self.queue_len) * u128::from(until - self.queue_since);
        self.queue_since = until;
    }

    #[inline]
    fn accrue_busy(&mut self, until: Nanos) {
        self.live.busy_area += u128::from(self.busy) * u128::from(until - self.busy_since);
        self.busy_since = until;
    }

    #[inline]
    fn accrue_open(&mut self, until: Nanos) {
        self.live.breaker_area += u128::from(self.open) * u128::from(until - self.open_since);
        self.open_since = until;
    }

    /// Moves the clock to `now`, closing buckets on the way; `budget_level` is the mean
    /// budget fill level to record for closed buckets. Call it when [`crosses`](Self::crosses)
    /// says so, before recording anything at `now`.
    pub fn advance(&mut self, now: Nanos, budget_level: Option<f64>) {
        while now >= self.next_boundary {
            self.accrue(self.next_boundary);
            self.close_bucket(budget_level);
            self.store_live();
            self.cur += 1;
            // The last bucket ends at `duration`, not a whole bucket later.
            self.next_boundary = self
                .next_boundary
                .saturating_add(self.bucket)
                .min(self.duration);
            self.live.queue_max = self.queue_len;
            if self.cur >= self.buckets.len() {
                self.next_boundary = Nanos::MAX;
            }
        }
    }

    /// Stores the live row as bucket `cur` (nothing past the series) and starts the
    /// next one empty.
    fn store_live(&mut self) {
        let row = std::mem::take(&mut self.live);
        if let Some(b) = self.buckets.get_mut(self.cur) {
            *b = BucketRow { t: b.t, ..row };
        }
    }

    fn close_bucket(&mut self, budget_level: Option<f64>) {
        if self.cur >= self.buckets.len() {
            return;
        }
        let b = &mut self.live;
        b.budget_level = budget_level;
        // Every completion is a success or a failure: the bucket's latency percentiles
        // are those of the two together, or of one alone when the other has none.
        let (all, success, failure_p50) = if self.bucket_failure.is_empty() {
            let s = self.bucket_success.take([0.5, 0.99]);
            (s, s, None)
        } else if self.bucket_success.is_empty() {
            let f = self.bucket_failure.take([0.5, 0.99]);
            (f, None, f.map(|[p50, _]| p50))
        } else {
            let all = BucketQuantiles::union(
                &self.bucket_success,
                &self.bucket_failure,
                [0.5, 0.99],
                &mut self.bucket_scratch,
            );
            let success = self.bucket_success.take([0.5, 0.99]);
            (all, success, self.bucket_failure.take([0.5]).map(|[p]| p))
        };
        if let Some([p50, p99]) = all {
            (b.latency_p50, b.latency_p99) = (Some(p50), Some(p99));
        }
        if let Some([p50, p99]) = success {
            (b.success_latency_p50, b.success_latency_p99) = (Some(p50), Some(p99));
        }
        b.failure_latency_p50 = failure_p50;
    }

    /// The row observations go to: the live bucket (dropped when past the series).
    #[inline]
    fn row(&mut self) -> &mut BucketRow {
        &mut self.live
    }

    /// A logical request arrived.
    #[inline]
    pub fn offered(&mut self, fleet: usize) {
        self.totals.logical += 1;
        self.totals.fleets[fleet].logical += 1;
        let b = self.row();
        b.offered += 1;
    }

    /// An attempt of `fleet` arrived at the dependency.
    #[inline]
    pub fn inbound(&mut self, now: Nanos, fleet: usize) {
        self.totals.attempts += 1;
        self.totals.fleets[fleet].attempts += 1;
        let b = self.row();
        b.inbound += 1;
        if !self.herd_writes {
            self.herd_count(now);
        }
    }

    /// An attempt finished service after `service` ns; `wasted` when its caller had
    /// already given up.
    #[inline]
    pub fn served(&mut self, service: Nanos, wasted: bool) {
        self.totals.served += 1;
        self.totals.service_ns += u128::from(service);
        if wasted {
            self.totals.wasted_ns += u128::from(service);
        }
        let b = self.row();
        b.served += 1;
        if wasted {
            b.wasted_ns += service;
        }
    }

    /// A logical request of `fleet` completed after `latency`.
    #[inline]
    pub fn completion(&mut self, now: Nanos, fleet: usize, success: bool, latency: Nanos) {
        let f = &mut self.totals.fleets[fleet];
        if success {
            self.totals.succeeded += 1;
            f.succeeded += 1;
        } else {
            self.totals.failed += 1;
            f.failed += 1;
        }
        self.totals.latency_sum_ns += u128::from(latency);
        self.totals.last_completion = now;
        // The histogram of all completions is the sum of these two, made at the end.
        let us = micros(latency);
        if success {
            self.totals.last_success = Some(now);
            self.totals.success_latency_sum_ns += u128::from(latency);
            self.success_latency.record(us);
        } else {
            self.totals.failure_latency_sum_ns += u128::from(latency);
            self.failure_latency.record(us);
        }
        if self.cur < self.buckets.len() {
            if success {
                self.bucket_success.push(latency);
            } else {
                self.bucket_failure.push(latency);
            }
            let b = &mut self.live;
            b.completions += 1;
            if success {
                b.successes += 1;
            }
        }
    }

    /// The dependency admitted an attempt: to a free server, or (`queued`) to its
    /// queue.
    #[inline]
    pub fn admitted(&mut self, queued: bool) {
        self.totals.admitted += 1;
        self.totals.waited += u64::from(queued);
        let b = self.row();
        b.admitted += 1;
        b.waited += u64::from(queued);
    }

    /// The dependency's full queue refused an attempt at its arrival.
    #[inline]
    pub fn blocked(&mut self) {
        self.totals.blocked += 1;
        let b = self.row();
        b.blocked += 1;
    }

    /// An attempt reached a server after waiting `wait` ns for it (0 = at once).
    #[inline]
    pub fn service_started(&mut self, wait: Nanos) {
        self.totals.started += 1;
        self.totals.wait_ns += u128::from(wait);
        // A wait of 0 (a free server) is the histogram's 0, not 1 µs.
        self.wait.record(if wait == 0 { 0 } else { micros(wait) });
        let b = self.row();
        b.started += 1;
        b.wait_ns += u128::from(wait);
    }

    /// An outcome of `class` arose (counted once, where it arose).
    #[inline]
    pub fn outcome(&mut self, class: Class) {
        self.totals.outcomes[class as usize] += 1;
        let b = self.row();
        b.outcomes[class as usize] += 1;
    }

    /// Attempt `ordinal` of a call into layer `depth` ended with `end`.
    #[inline]
    pub fn attempt_end(&mut self, depth: usize, ordinal: u32, end: End) {
        self.ordinals.record(depth, ordinal, end);
    }

    /// Layer `depth` made a call below.
    #[inline]
    pub fn layer_call(&mut self, depth: usize) {
        self.totals.layer_calls[depth] += 1;
    }

    /// The dependency's queue length changed at `now`.
    #[inline]
    pub fn set_queue(&mut self, now: Nanos, len: u64) {
        self.accrue_queue(now);
        self.queue_len = len;
        self.live.queue_max = self.live.queue_max.max(len);
    }

    /// Busy servers changed at `now`.
    #[inline]
    pub fn set_busy(&mut self, now: Nanos, busy: u64) {
        self.accrue_busy(now);
        self.busy = busy;
    }

    /// Open breaker instances changed at `now`.
    #[inline]
    pub(crate) fn set_open_breakers(&mut self, now: Nanos, open: u64) {
        self.accrue_open(now);
        self.open = open;
    }

    /// A breaker opened.
    pub(crate) fn breaker_tripped(&mut self) {
        self.totals.breaker_trips += 1;
    }

    /// A queued attempt was dropped as expired.
    pub(crate) fn shed(&mut self) {
        self.totals.shed += 1;
    }

    /// A write was applied again: `first` when it is its first duplicate.
    pub(crate) fn duplicate(&mut self, first: bool) {
        self.totals.duplicate_applies += 1;
        if first {
            self.totals.duplicates += 1;
        }
    }

    /// Closes the series at `end` and hands over the measurements.
    pub fn finish(
        mut self,
        end: Nanos,
        budget_level: Option<f64>,
        in_flight: u64,
        events: u64,
        truncated: Option<String>,
    ) -> RunMetrics {
        // Close every bucket up to the end of the series (or of the run, if earlier).
        let stop = end.min(self.duration);
        self.advance(stop, budget_level);
        self.accrue(stop);
        if self.cur < self.buckets.len() {
            self.close_bucket(budget_level);
            self.store_live();
        }
        self.totals.events = events;
        self.totals.truncated = truncated;
        // Every completion is a success or a failure: the run's histogram is their sum.
        let success_latency = self.success_latency.histogram();
        let failure_latency = self.failure_latency.histogram();
        let mut latency = new_histogram();
        let _ = latency.add(&success_latency);
        let _ = latency.add(&failure_latency);
        let herd = (!self.herd.is_empty()).then_some((self.herd_start, self.herd_width, self.herd));
        if let Some(s) = &mut self.services {
            s.finish(stop);
        }
        if let Some(g) = &mut self.guards {
            g.finish(stop);
        }
        if let Some(r) = &mut self.reject_busy {
            r.finish(stop);
        }
        RunMetrics {
            buckets: self.buckets,
            bucket: self.bucket,
            duration: self.duration,
            totals: self.totals,
            latency,
            success_latency,
            failure_latency,
            wait: self.wait.histogram(),
            herd,
            in_flight,
            end,
            ordinals: self.ordinals,
            services: self.services,
            queue: None,
            guards: self.guards.map(|g| *g),
            admission: self.admission.map(|c| *c),
            limits: self.limits.map(|c| c.finish()),
            reject_busy: self.reject_busy.map(|r| *r),
            priority_shed: self.priority_shed,
            codel: self.codel.map(|c| *c),
        }
    }
}

/// How the metrics count the call lifecycle: a layer's counts (calls, attempts by
/// ordinal, outcomes that arose in it) for the fleets' stacks, whose counts are the
/// whole-run columns; the dependency's columns for the primary service; every service's
/// series for a graph.
impl CallObserver for Recorder {
    #[inline(always)]
    fn request_started(&mut self, _: u32, fleet: usize, _: u32, _: Nanos) {
        self.offered(fleet);
    }

    #[inline(always)]
    fn request_expired(&mut self) {
        self.outcome(Class::DeadlineExceeded);
    }

    #[inline(always)]
    fn request_finished(&mut self, _: u32, fleet: usize, class: Class, latency: Nanos, now: Nanos) {
        self.completion(now, fleet, class == Class::Success, latency);
    }

    #[inline(always)]
    fn breaker_refused_call(&mut self, _: &Arena, call: CallAt) {
        if call.top {
            self.attempt_end(call.depth, 1, End::Class(Class::BreakerOpen));
        }
    }

    #[inline(always)]
    fn attempt_past_deadline(&mut self, call: CallAt, ordinal: u32) {
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Class(Class::DeadlineExceeded));
        }
    }

    #[inline(always)]
    fn attempt_refused(&mut self, _: &Arena, call: CallAt, ordinal: u32, why: Refusal, _: Nanos) {
        let class = why.class();
        if let Refusal::Guard(_) = why {
            self.guard_refused(class);
        }
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Class(class));
            self.outcome(class);
        }
    }

    #[inline(always)]
    fn attempt_sent(&mut self, _: &Arena, call: CallAt, _: u32, _: u32, _: Nanos) {
        if call.top {
            self.layer_call(call.depth);
        }
    }

    #[inline(always)]
    fn copy_sent(&mut self, _: &Arena, call: CallAt, _: u32, ordinal: u32, _: bool, _: Nanos) {
        if call.top {
            self.layer_call(call.depth);
        }
        if ordinal >= 2 {
            self.hedge_sent();
        }
    }

    #[inline(always)]
    fn attempt_answered(&mut self, _: &Arena, call: CallAt, ordinal: u32, class: Class, _: Nanos) {
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Class(class));
        }
    }

    #[inline(always)]
    fn copy_answered(&mut self, _: &Arena, call: CallAt, copy: u8, class: Class, _: Nanos) {
        if call.top {
            self.attempt_end(call.depth, u32::from(copy) + 1, End::Class(class));
        }
        if copy > 0 && class == Class::Success {
            self.hedge_won();
        }
    }

    #[inline(always)]
    fn attempt_timed_out(
        &mut self,
        _: &Arena,
        call: CallAt,
        ordinal: u32,
        past_deadline: bool,
        _: Nanos,
    ) {
        if !call.top {
            return;
        }
        // The deadline is counted once, at the request; a timeout here.
        let class = if past_deadline {
            Class::DeadlineExceeded
        } else {
            self.outcome(Class::Timeout);
            Class::Timeout
        };
        self.attempt_end(call.depth, ordinal, End::Class(class));
    }

    #[inline(always)]
    fn retry_refused(&mut self, _: &Arena, call: CallAt, ordinal: u32, why: Refusal, _: Nanos) {
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Class(why.class()));
        }
    }

    #[inline(always)]
    fn call_finished(&mut self, _: &Arena, call: CallAt, class: Class, here: bool, _: Nanos) {
        if here && call.top {
            self.outcome(class);
        }
    }

    #[inline(always)]
    fn attempt_cancelled(&mut self, call: CallAt, ordinal: u32) {
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Cancelled);
        }
    }

    #[inline(always)]
    fn copy_lost(&mut self, call: CallAt, ordinal: u32) {
        self.hedge_lost();
        if call.top {
            self.attempt_end(call.depth, ordinal, End::Cancelled);
        }
    }

    #[inline(always)]
    fn attempt_in_flight(&mut self, call: CallAt, ordinal: u32) {
        if call.top {
            self.attempt_end(call.depth, ordinal, End::InFlight);
        }
    }

    #[inline(always)]
    fn service_reached(&mut self, _: &Arena, _: u32, svc: SvcAt, fleet: usize, now: Nanos) {
        if svc.primary {
            self.inbound(now, fleet);
        }
        self.svc_inbound(now, svc.sv);
    }

    #[inline(always)]
    fn admitted(&mut self, svc: SvcAt, queued: Option<u64>, now: Nanos) {
        if svc.primary {
            self.admitted(queued.is_some());
        }
        if let Some(q) = queued {
            self.dequeued(svc, q, now);
        }
    }

    #[inline(always)]
    fn rejected(&mut self, svc: SvcAt, now: Nanos) {
        self.svc_rejected(now, svc.sv);
        if svc.primary {
            self.blocked();
        }
    }

    #[inline(always)]
    fn shed(&mut self, _: &Arena, _: u32, svc: SvcAt, now: Nanos) {
        if svc.primary {
            Recorder::shed(self);
        }
        self.svc_shed(now, svc.sv);
    }

    #[inline(always)]
    fn queue_left(&mut self, _: &Arena, _: u32, svc: SvcAt, queued: u64, now: Nanos) {
        self.dequeued(svc, queued, now);
    }

    #[inline(always)]
    fn dequeued(&mut self, svc: SvcAt, queued: u64, now: Nanos) {
        if svc.primary {
            self.set_queue(now, queued);
        }
        self.svc_queue(now, svc.sv, queued);
    }

    #[inline(always)]
    fn service_started(
        &mut self,
        _: &Arena,
        _: u32,
        svc: SvcAt,
        wait: Nanos,
        busy: u32,
        now: Nanos,
    ) {
        if svc.primary {
            Recorder::service_started(self, wait);
        }
        self.thread_released(svc, busy, now);
    }

    fn rejection_started(&mut self, svc: SvcAt, busy: u32, now: Nanos) {
        self.thread_released(svc, busy, now);
        if let Some(r) = &mut self.reject_busy {
            r.change(now, svc.sv, true);
        }
    }

    fn rejection_done(&mut self, svc: SvcAt, busy: u32, now: Nanos) {
        self.thread_released(svc, busy, now);
        if let Some(r) = &mut self.reject_busy {
            r.change(now, svc.sv, false);
        }
    }

    #[inline(always)]
    fn thread_released(&mut self, svc: SvcAt, busy: u32, now: Nanos) {
        if svc.primary {
            self.set_busy(now, u64::from(busy));
        }
        self.svc_busy(now, svc.sv, busy);
    }

    #[inline(always)]
    fn served(&mut self, svc: SvcAt, held: Nanos, class: Class, useful: bool, now: Nanos) {
        let ok = class == Class::Success;
        self.svc_served(now, svc.sv, ok && useful, !useful);
        if svc.primary {
            Recorder::served(self, held, !useful);
            if !ok {
                self.outcome(class);
            }
        }
    }

    #[inline(always)]
    fn duplicate_applied(&mut self, first: bool) {
        self.duplicate(first);
    }

    #[inline(always)]
    fn occ_written(&mut self, won: bool, now: Nanos) {
        self.write_call(now, won);
    }

    #[inline(always)]
    fn pool_acquired(&mut self, now: Nanos) {
        Recorder::pool_acquired(self, now, 0);
    }

    #[inline(always)]
    fn pool_wait_ended(&mut self, wait: Nanos) {
        self.pool_waited(wait);
    }

    #[inline(always)]
    fn pool_released(&mut self, now: Nanos) {
        Recorder::pool_released(self, now);
    }

    #[inline(always)]
    fn breaker_tripped(&mut self) {
        Recorder::breaker_tripped(self);
    }

    #[inline(always)]
    fn breakers_open(&mut self, open: u64, now: Nanos) {
        self.set_open_breakers(now, open);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_split_at_bucket_boundaries() {
        let mut r = Recorder::new(3_000, 1_000, 1, 0, None);
        r.set_queue(500, 4); // 4 from 500 to 2500
        r.advance(2_500, None);
        r.set_queue(2_500, 0);
        let m = r.finish(3_000, None, 0, 0, None);
        let areas: Vec<u128> = m.buckets.iter().map(|b| b.queue_area).collect();
        assert_eq!(areas, vec![2_000, 4_000, 2_000]);
        let max: Vec<u64> = m.buckets.iter().map(|b| b.queue_max).collect();
        assert_eq!(max, vec![4, 4, 4]);
    }

    #[test]
    fn a_partial_last_bucket_ends_at_duration_and_drain_is_left_out() {
        // duration 2.5 µs in 1 µs buckets: [0, 1), [1, 2), [2, 2.5). Arrivals every
        // 100 ns in [0, 2500), each served from its arrival for 300 ns on one server
        // (busy from 0 to 2800), then completing: the last three complete in the drain.
        let mut r = Recorder::new(2_500, 1_000, 1, 0, None);
        let mut events: Vec<(Nanos, bool)> = (0..25).map(|i| (i * 100, true)).collect();
        events.extend((0..25).map(|i| (i * 100 + 300, false)));
        events.sort();
        r.set_busy(0, 1);
        for (t, arrival) in events {
            if r.crosses(t) {
                r.advance(t, None);
            }
            if arrival {
                r.offered(0);
                r.inbound(t, 0);
            } else {
                r.served(300, false);
                r.completion(t, 0, true, 300);
            }
        }
        r.set_busy(2_800, 0);
        let m = r.finish(2_800, None, 0, 50, None);
        let col = |f: fn(&BucketRow) -> u64| m.buckets.iter().map(f).collect::<Vec<_>>();
        assert_eq!(col(|b| b.t), vec![0, 1_000, 2_000]);
        assert_eq!(col(|b| b.offered), vec![10, 10, 5]);
        assert_eq!(col(|b| b.inbound), vec![10, 10, 5]);
        // Completions at 300, 400, ..., 2700: those at 2500 and later are drain.
        assert_eq!(col(|b| b.completions), vec![7, 10, 5]);
        assert_eq!(col(|b| b.served), vec![7, 10, 5]);
        let busy: Vec<u128> = m.buckets.iter().map(|b| b.busy_area).collect();
        assert_eq!(busy, vec![1_000, 1_000, 500]);
        let widths: Vec<Nanos> = m.buckets.iter().map(|b| m.width(b)).collect();
        assert_eq!(widths, vec![1_000, 1_000, 500]);
        // The totals count the drain too.
        assert_eq!(m.totals.logical, 25);
        assert_eq!(m.totals.succeeded, 25);
        assert_eq!(m.totals.served, 25);
    }

    #[test]
    fn herd_counts_fall_in_fine_buckets() {
        let mut r = Recorder::new(1_000, 1_000, 1, 0, Some((100, 10, 5)));
        for t in [50, 100, 105, 119, 149, 150] {
            r.advance(t, None);
            r.inbound(t, 0);
        }
        let m = r.finish(1_000, None, 0, 0, None);
        assert_eq!(m.herd.unwrap().2, vec![2, 1, 0, 0, 1]);
        assert_eq!(m.totals.attempts, 6);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn width_example() {
        use crate::metrics::Recorder;
        // 2.5 s in 1 s buckets: [0, 1), [1, 2), [2, 2.5).
        let m = Recorder::new(2_500, 1_000, 1, 0, None).finish(2_500, None, 0, 0, None);
        let w: Vec<u64> = m.buckets.iter().map(|b| m.width(b)).collect();
        assert_eq!(w, vec![1_000, 1_000, 500]);
    }
}
