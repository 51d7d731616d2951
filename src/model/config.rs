//! The validated scenario: typed values in integer nanoseconds, every rule checked.
//! This is what the model consumes; it never sees the file.

use crate::engine::Nanos;
pub(crate) use crate::model::attempts::Attempts;
pub(crate) use crate::model::broker::config::QueueConfig;
use crate::model::dist::Dist;
pub(crate) use crate::model::field::MAX_HORIZON;
pub(crate) use crate::model::guard::config::{BulkheadConfig, Guards, PoolConfig};
pub(crate) use crate::model::hedge::HedgingConfig;
use crate::model::outcome::ClassSet;

/// A validated scenario, ready to simulate.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name, used for the default output folder.
    pub name: String,
    /// Base seed.
    pub seed: u64,
    /// Logical requests arrive in `[0, duration)`.
    pub duration: Nanos,
    /// Longest drain after `duration`.
    pub drain: Nanos,
    /// Time-series bucket.
    pub bucket: Nanos,
    /// Recovery baseline starts here.
    pub warmup: Nanos,
    /// Recovery tolerance below the baseline.
    pub recovery_tolerance: f64,
    /// Buckets the success rate must hold to count as recovered.
    pub recovery_hold: u32,
    /// Repetitions of the run with derived seeds.
    pub replications: u32,
    /// Fine bucket of the herd series.
    pub herd_bucket: Nanos,
    /// The capacity of the service the fleets call first (the target of fleet 0):
    /// the whole-run columns describe it. With `[dependency]` this is that table.
    pub dependency: DependencyConfig,
    /// The services of the graph; with `[dependency]`, one service named
    /// `dependency` with no calls.
    pub services: Vec<ServiceConfig>,
    /// Whether the file wrote `[[services]]` (a graph) rather than `[dependency]`:
    /// only a graph writes `services.csv` and the per-service columns.
    pub graph: bool,
    /// Client fleets.
    pub fleets: Vec<FleetConfig>,
    /// Correlated faults.
    pub outages: Vec<OutageConfig>,
    /// Safety caps.
    pub limits: Limits,
    /// Request traces `retrysim run` records (`None`: none).
    pub trace: Option<TraceConfig>,
}

impl Scenario {
    /// Whether some tier has a `concurrency_limit`.
    pub fn uses_concurrency_limit(&self) -> bool {
        self.services
            .iter()
            .any(|s| s.capacity.concurrency_limit.is_some())
    }

    /// The tiers with a concurrency limit (each keeps a sample stamp per arena node
    /// and a limit series per bucket).
    pub fn limited_tiers(&self) -> u64 {
        self.services
            .iter()
            .filter(|s| s.capacity.concurrency_limit.is_some())
            .count() as u64
    }

    /// Whether some tier spends server time on its rejections (`reject_cost > 0`).
    pub fn uses_reject_cost(&self) -> bool {
        self.services.iter().any(|s| s.capacity.reject_cost > 0)
    }
}

/// Most logical requests a run traces: each keeps a row per attempt in memory.
pub(crate) const MAX_TRACE_SAMPLE: u64 = 10_000;

/// Which logical requests a run traces (see [`crate::metrics::trace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// How many, drawn uniformly over the run's logical requests.
    pub sample: u64,
    /// The seed of the draw (`None`: the run's seed).
    pub seed: Option<u64>,
}

/// Safety caps of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests in flight at once (orphaned work included) before the run stops as
    /// truncated; it also bounds calls, attempts and pending events (`model::limits`).
    pub max_in_flight: u64,
    /// Events handled before the run stops as truncated.
    pub max_events: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_in_flight: 1_000_000,
            max_events: 500_000_000,
        }
    }
}

/// How a fleet's logical requests arrive.
#[derive(Debug, Clone)]
pub enum Arrival {
    /// Poisson process of `rate` per second.
    Poisson {
        /// Logical requests per second.
        rate: f64,
    },
    /// Evenly spaced at `rate` per second, the first at time 0.
    Constant {
        /// Logical requests per second.
        rate: f64,
    },
    /// Closed loop: `clients` each send, wait for the answer, think, send again.
    Closed {
        /// Pause after each answer (also before the first request).
        think_time: Dist,
    },
    /// `count` requests at `at`.
    Burst {
        /// When.
        at: Nanos,
        /// How many.
        count: u64,
    },
    /// Requests replayed one by one at the times a trace recorded.
    Trace(std::sync::Arc<dyn TraceSource>),
}

/// One arrival of a replayed trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    /// When, in the run.
    pub at: Nanos,
    /// Which client sends it (taken modulo the fleet's clients); `None`: the clients in
    /// turn.
    pub client: Option<u64>,
    /// Whether it is a write; `None`: drawn with the fleet's `writes`.
    pub write: Option<bool>,
}

/// Arrivals recorded elsewhere, replayed in time order. The model pulls them one at a
/// time and knows nothing of where they come from (a trace file is read by
/// `scenario::inputs::trace`); each run opens its own stream.
pub trait TraceSource: std::fmt::Debug + Send + Sync {
    /// A fresh stream of the arrivals, from the first; `Err` says why it cannot open.
    fn open(&self) -> Result<Box<dyn ArrivalStream>, String>;
    /// The mean arrival rate, per second, over `[0, end)` of the run.
    fn mean_rate(&self, end: Nanos) -> f64;
}

/// An open stream of replayed arrivals: what a run holds of a trace.
pub trait ArrivalStream {
    /// The next arrival, at or after the one before; `Ok(None)` after the last; `Err`
    /// when the source fails (or changed since it was checked).
    fn next_arrival(&mut self) -> Result<Option<Replayed>, String>;
    /// The run reads no further: `Err` when the source changed since it was checked.
    fn stop(&mut self) -> Result<(), String>;
}

/// Multiplier of an open arrival rate over time.
#[derive(Debug, Clone)]
pub enum LoadProfile {
    /// Piecewise constant: `(from, multiplier)`, sorted; 1 before the first point.
    Steps(Vec<(Nanos, f64)>),
    /// Piecewise linear between points; constant before the first and after the last.
    Ramp(Vec<(Nanos, f64)>),
}

impl LoadProfile {
    /// The multiplier at time `t`.
    pub fn at(&self, t: Nanos) -> f64 {
        match self {
            LoadProfile::Steps(p) => match p.partition_point(|(at, _)| *at <= t) {
                0 => 1.0,
                i => p[i - 1].1,
            },
            LoadProfile::Ramp(p) => {
                let (first, last) = (p[0], p[p.len() - 1]);
                if t <= first.0 {
                    return first.1;
                }
                if t >= last.0 {
                    return last.1;
                }
                let i = p.partition_point(|(at, _)| *at <= t);
                let (t0, m0) = p[i - 1];
                let (t1, m1) = p[i];
                m0 + (m1 - m0) * ((t - t0) as f64 / (t1 - t0) as f64)
            }
        }
    }

    /// The largest multiplier at any time.
    pub fn max(&self) -> f64 {
        match self {
            // Before the first step the multiplier is 1.
            LoadProfile::Steps(p) => {
                let before = if p[0].0 > 0 { 1.0 } else { 0.0 };
                p.iter().map(|(_, m)| *m).fold(before, f64::max)
            }
            LoadProfile::Ramp(p) => p.iter().map(|(_, m)| *m).fold(0.0, f64::max),
        }
    }

    /// The span of the profile's excursions above 1 (the base rate): from the first
    /// time the multiplier exceeds 1 to the last time it comes back to 1 or below
    /// (`Nanos::MAX` when it never does). `None` when it never exceeds 1.
    pub fn excursion(&self) -> Option<(Nanos, Nanos)> {
        let mut spans: Vec<(Nanos, Nanos)> = Vec::new();
        match self {
            LoadProfile::Steps(p) => {
                for (i, &(at, m)) in p.iter().enumerate() {
                    if m > 1.0 {
                        spans.push((at, p.get(i + 1).map_or(Nanos::MAX, |n| n.0)));
                    }
                }
            }
            LoadProfile::Ramp(p) => {
                if p[0].1 > 1.0 {
                    spans.push((0, p[0].0));
                }
                for w in p.windows(2) {
                    let ((t0, m0), (t1, m1)) = (w[0], w[1]);
                    if m0 <= 1.0 && m1 <= 1.0 {
                        continue;
                    }
                    // Where the segment crosses 1, if it does.
                    let cross = |target: f64| {
                        t0 + ((target - m0) / (m1 - m0) * (t1 - t0) as f64).round() as Nanos
                    };
                    let start = if m0 > 1.0 { t0 } else { cross(1.0) };
                    let end = if m1 > 1.0 { t1 } else { cross(1.0) };
                    spans.push((start, end));
                }
                let last = p[p.len() - 1];
                if last.1 > 1.0 {
                    spans.push((last.0, Nanos::MAX));
                }
            }
        }
        let start = spans.iter().map(|s| s.0).min()?;
        let end = spans.iter().map(|s| s.1).max()?;
        Some((start, end))
    }

    /// The next time after `t` at which the profile changes slope or level.
    pub fn next_change(&self, t: Nanos) -> Option<Nanos> {
        let pts = match self {
            LoadProfile::Steps(p) | LoadProfile::Ramp(p) => p,
        };
        pts.get(pts.partition_point(|(at, _)| *at <= t))
            .map(|(at, _)| *at)
    }
}

/// A client fleet.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// Unique name.
    pub name: String,
    /// Arrival process.
    pub arrival: Arrival,
    /// Clients the fleet's requests are spread over.
    pub clients: u64,
    /// Rate multiplier over time (open arrivals only).
    pub load_profile: Option<LoadProfile>,
    /// End-to-end budget of a logical request.
    pub deadline: Option<Nanos>,
    /// Fraction of requests that are non-idempotent writes.
    pub writes: f64,
    /// Whether writes carry a stable idempotency key.
    pub idempotency_keys: bool,
    /// Retry layers, top first.
    pub layers: Vec<LayerConfig>,
    /// The service the fleet calls (index into [`Scenario::services`]).
    pub target: u16,
    /// Whether the request's remaining deadline travels with its attempts, so the
    /// service drops work whose deadline has passed.
    pub propagate_deadline: bool,
    /// A message-queue consumer fleet (`arrival = { kind = "queue", ... }`): `arrival`
    /// is then its publish process, and each delivery of a message is a logical request.
    pub queue: Option<QueueConfig>,
    /// Bulkhead and connection pool on the attempts its innermost layer sends.
    pub guards: Guards,
    /// The class of its requests (`criticality`; `None`: not written, `critical`).
    pub criticality: Option<crate::model::criticality::Criticality>,
    /// What explain says of the recording its load profile came from, if it did.
    pub recorded: Option<String>,
}

impl FleetConfig {
    /// Mean offered load in logical requests per second over `[0, duration)`.
    pub fn offered_rate(&self, duration: Nanos) -> Option<f64> {
        let base = match &self.arrival {
            Arrival::Poisson { rate } | Arrival::Constant { rate } => *rate,
            Arrival::Burst { count, .. } => {
                return Some(*count as f64 / crate::engine::time::to_secs(duration.max(1)))
            }
            Arrival::Closed { .. } => return None,
            Arrival::Trace(t) => return Some(t.mean_rate(duration)),
        };
        Some(match &self.load_profile {
            None => base,
            Some(p) => {
                // Average the multiplier over the window on a fine grid.
                let n = 1000u64;
                let sum: f64 = (0..n)
                    .map(|i| p.at(duration / n * i + duration / n / 2))
                    .sum();
                base * sum / n as f64
            }
        })
    }
}

/// A retry layer.
#[derive(Debug, Clone)]
pub struct LayerConfig {
    /// Name.
    pub name: String,
    /// Attempts per call, the first included.
    pub max_attempts: Attempts,
    /// Per-attempt timeout.
    pub attempt_timeout: Option<Nanos>,
    /// Cancel the work below on timeout.
    pub cancel_on_timeout: bool,
    /// Backoff.
    pub backoff: crate::model::backoff::Backoff,
    /// Retried outcome classes.
    pub retry_on: ClassSet,
    /// Retry timed-out writes that carry no key.
    pub retry_ambiguous_writes: bool,
    /// Honour Retry-After.
    pub respect_retry_after: bool,
    /// Independent copies of the layer's state.
    pub instances: u64,
    /// Retry budget.
    pub budget: Option<crate::model::budget::BudgetConfig>,
    /// Circuit breaker.
    pub breaker: Option<crate::model::breaker::BreakerConfig>,
    /// Network delay each way to the layer below.
    pub hop_latency: Option<Dist>,
    /// Time a call into this layer may take, all attempts and backoff included.
    pub total_timeout: Option<Nanos>,
    /// Client-side rate limiter consulted before each attempt.
    pub limiter: Option<crate::model::limiter::LimiterConfig>,
    /// Client-side concurrency limit per instance, around each attempt.
    pub concurrency_limit: Option<crate::model::concurrency::ConcurrencyLimitConfig>,
    /// Hedged requests instead of retries (`max_attempts` is then 1).
    pub hedging: Option<HedgingConfig>,
    /// The named preset the layer was built from.
    pub preset: Option<String>,
    /// The named presets of its parts, when given part by part.
    pub part_presets: PartPresets,
    /// `max_attempts` as written when `max_attempts_cap` lowered it.
    pub capped_from: Option<Attempts>,
    /// The class its retries are lowered to (`retry_criticality`).
    pub retry_criticality: Option<crate::model::criticality::Criticality>,
}

/// Names of the presets a layer's parts were resolved from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartPresets {
    /// `backoff = { preset = ... }`.
    pub backoff: Option<String>,
    /// `budget = { preset = ... }`.
    pub budget: Option<String>,
    /// `breaker = { preset = ... }`.
    pub breaker: Option<String>,
    /// `limiter = { preset = ... }`.
    pub limiter: Option<String>,
}

/// Queue discipline of the dependency (`discipline = "fifo" | "lifo"`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Discipline {
    /// First in, first out.
    #[default]
    Fifo,
    /// Last in, first out.
    Lifo,
}

/// What kind of dependency the fleets call (`kind = "queue" | "occ"`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DependencyKind {
    /// Servers and a queue (MODEL.md §4).
    #[default]
    Queue,
    /// One versioned record under optimistic concurrency: an attempt reads the version,
    /// then writes conditionally; a write after another's success is a `conflict`.
    Occ,
}

/// The capacity-limited dependency.
#[derive(Debug, Clone)]
pub struct DependencyConfig {
    /// Queue or optimistic-concurrency record.
    pub kind: DependencyKind,
    /// Servers (`None` = unlimited).
    pub servers: Option<u32>,
    /// Waiting room (`None` = unlimited).
    pub queue_limit: Option<u64>,
    /// 503 or 429.
    pub reject_status: u16,
    /// Retry-After carried by rejections.
    pub retry_after: Option<Nanos>,
    /// Service time.
    pub service_time: Dist,
    /// Extra service time per attempt already in service.
    pub per_concurrent: Nanos,
    /// Queue discipline.
    pub discipline: Discipline,
    /// Skip queued attempts nobody waits for.
    pub drop_expired: bool,
    /// Independent transient failure probability.
    pub error_rate: f64,
    /// The limiter in front of the queue (`admission`).
    pub admission: Option<crate::model::admission::AdmissionConfig>,
    /// Server time a rejection takes (`reject_cost`; 0 = free).
    pub reject_cost: Nanos,
    /// Priority shedding before the queue (`shed_by_criticality`).
    pub shed_by_criticality: Option<crate::model::criticality::ShedConfig>,
    /// What the queue does under load (`queue_policy`).
    pub queue_policy: Option<crate::model::queue_policy::QueuePolicyConfig>,
    /// The concurrency limit in front of the queue (`concurrency_limit`).
    pub concurrency_limit: Option<crate::model::concurrency::ConcurrencyLimitConfig>,
}

impl DependencyConfig {
    /// The HTTP status of the concurrency limit's refusals (gRPC UNAVAILABLE reads
    /// 503, as gRPC-to-HTTP gateways map it); `reject_status` without a limit.
    #[cold]
    fn limit_status(&self) -> u16 {
        match self.concurrency_limit.map(|l| l.status()) {
            Some(crate::model::concurrency::Rejected::Status(s)) => s,
            Some(crate::model::concurrency::Rejected::Unavailable) => 503,
            None => self.reject_status,
        }
    }

    /// The status a rejection of class `c` carries: the limiter's for `rate_limited`
    /// (`admission`'s, else `concurrency_limit`'s), 503 for `priority_shed`, `reject_status` otherwise.
    #[inline]
    pub fn status_of(&self, c: crate::model::outcome::Class) -> u16 {
        match (c, &self.admission) {
            (crate::model::outcome::Class::RateLimited, Some(a)) => a.status(),
            (crate::model::outcome::Class::RateLimited, None) => self.limit_status(),
            (crate::model::outcome::Class::PriorityShed, _) => 503,
            _ => self.reject_status,
        }
    }

    /// What sheds its load, by name: a finite queue, `drop_expired`, its
    /// `concurrency_limit`, its `admission`, a CoDel `queue_policy` and
    /// `shed_by_criticality` (adaptive LIFO reorders and sheds nothing).
    pub fn shedders(&self) -> Vec<&'static str> {
        [
            (self.queue_limit.is_some(), "finite queue"),
            (self.drop_expired, "drop_expired"),
            (self.concurrency_limit.is_some(), "concurrency_limit"),
            (self.admission.is_some(), "admission"),
            (
                self.queue_policy.is_some_and(|q| q.drops_requests()),
                "CoDel",
            ),
            (self.shed_by_criticality.is_some(), "shed_by_criticality"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// Attempts per second the dependency completes at full load, if finite.
    pub fn capacity(&self) -> Option<f64> {
        if self.kind == DependencyKind::Occ {
            return None;
        }
        let s = self.servers?;
        Some(f64::from(s) / (self.service_time.mean_ns() / 1e9))
    }
}

/// What an outage does while active.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutageMode {
    /// Attempts that start service fail with `error` after this long.
    Fail(Nanos),
    /// Served attempts fail with this probability.
    ErrorRate(f64),
    /// Service times multiplied.
    Slow(f64),
    /// Servers reduced to this many.
    Capacity(u32),
    /// Attempts get no answer.
    Blackhole,
}

/// When an outage is active.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutageTiming {
    /// `[start, end)`.
    Window {
        /// Start.
        start: Nanos,
        /// End.
        end: Nanos,
    },
    /// Alternating exponential up and down periods, starting up.
    Markov {
        /// Mean up time.
        mean_up: Nanos,
        /// Mean down time.
        mean_down: Nanos,
    },
}

/// A correlated fault.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutageConfig {
    /// When.
    pub timing: OutageTiming,
    /// What.
    pub mode: OutageMode,
    /// The service it hits (`None`: every service).
    pub target: Option<u16>,
}

/// How a service answers a request it could not complete.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// `error`: retryable by the default `retry_on`.
    #[default]
    Error,
    /// `overloaded`: "overloaded; don't retry", left out of `retry_on` by a caller
    /// that retries only at the layer immediately above the one that rejected.
    Overloaded,
}

/// When a fan-out call succeeds (`join`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Every callee must succeed.
    All,
    /// One success is enough.
    Any,
    /// At least this many successes.
    Quorum(u32),
}

impl Join {
    /// Successes needed out of `n` callees.
    pub fn needed(self, n: u32) -> u32 {
        match self {
            Join::All => n,
            Join::Any => 1,
            Join::Quorum(k) => k,
        }
    }
}

/// One step of a service's work: a call to one callee, or a parallel fan-out.
#[derive(Debug, Clone)]
pub struct CallConfig {
    /// Callee services (indices into [`Scenario::services`]); more than one is a
    /// fan-out.
    pub to: Vec<u16>,
    /// When a fan-out succeeds.
    pub join: Join,
    /// Whether the callees still going are cancelled once the join is decided.
    pub cancel_rest: bool,
    /// Whether the remaining deadline travels with the call's attempts.
    pub propagate_deadline: bool,
    /// The call's retry layers, outermost first (the same for every callee).
    pub layers: Vec<LayerConfig>,
    /// Bulkhead and connection pool on the attempts its innermost layer sends (one
    /// per callee, as its layers' state).
    pub guards: Guards,
}

/// A service of the graph: a tier with finite threads and a queue that, while
/// serving a request, makes its own calls in order after its own service time.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Unique name.
    pub name: String,
    /// Servers (threads), queue, service time and errors.
    pub capacity: DependencyConfig,
    /// Downstream calls, in order.
    pub calls: Vec<CallConfig>,
    /// Whether a thread is held for the whole request, downstream calls and their
    /// backoff included (`true`), or only for the service's own work.
    pub hold_threads: bool,
    /// How a failed request is answered.
    pub on_failure: OnFailure,
    /// Whether a rejection for capacity is answered `overloaded`.
    pub overloaded_status: bool,
}

/// The status a full queue's rejection is answered with when `reject_status` is not
/// written (a tier's own rejection, not its limiter's).
pub(crate) const DEFAULT_REJECT_STATUS: u16 = 503;

/// Server time a rejection takes when `reject_cost` is not written: none.
pub(crate) const DEFAULT_REJECT_COST: Nanos = 0;

/// Whether a tier holds a thread for the whole request when `hold_threads` is not
/// written.
pub(crate) const DEFAULT_HOLD_THREADS: bool = true;

/// Whether a capacity rejection is answered `overloaded` when `overloaded_status` is
/// not written.
pub(crate) const DEFAULT_OVERLOADED_STATUS: bool = false;

/// Whether the callees still going are cancelled once a join is decided, when
/// `cancel_rest` is not written.
pub(crate) const DEFAULT_CANCEL_REST: bool = true;

/// Whether the remaining deadline travels with the attempts when
/// `propagate_deadline` is not written.
pub(crate) const DEFAULT_PROPAGATE_DEADLINE: bool = false;

/// How long a `fail` outage's attempts take to fail when `after` is not written.
pub(crate) const DEFAULT_FAIL_AFTER: Nanos = 1_000_000;

/// Fraction of non-idempotent writes when `writes` is not written: none.
pub(crate) const DEFAULT_WRITES: f64 = 0.0;

/// Whether writes carry an idempotency key when `idempotency_keys` is not written.
pub(crate) const DEFAULT_IDEMPOTENCY_KEYS: bool = false;

/// Whether a timed-out attempt cancels the work below when `cancel_on_timeout` is not
/// written.
pub(crate) const DEFAULT_CANCEL_ON_TIMEOUT: bool = false;

/// Whether ambiguous writes without keys are retried when `retry_ambiguous_writes` is
/// not written.
pub(crate) const DEFAULT_RETRY_AMBIGUOUS_WRITES: bool = false;

/// Whether a layer honours Retry-After when `respect_retry_after` is not written.
pub(crate) const DEFAULT_RESPECT_RETRY_AFTER: bool = true;

/// Extra service time per attempt already in service when `per_concurrent` is not
/// written: none.
pub(crate) const DEFAULT_PER_CONCURRENT: Nanos = 0;

/// Whether queued work nobody waits for is skipped when `drop_expired` is not written.
pub(crate) const DEFAULT_DROP_EXPIRED: bool = false;

/// Independent transient failure probability when `error_rate` is not written: none.
pub(crate) const DEFAULT_ERROR_RATE: f64 = 0.0;

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn excursion_example() {
        use crate::model::config::LoadProfile;
        let spike = LoadProfile::Steps(vec![(20, 2.0), (30, 1.0)]);
        assert_eq!(spike.excursion(), Some((20, 30)));
        let ramp = LoadProfile::Ramp(vec![(0, 0.5), (100, 1.5), (200, 0.5)]);
        assert_eq!(ramp.excursion(), Some((50, 150)));
    }
}
