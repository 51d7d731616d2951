//! `retrysim explain`: the resolved model of a scenario in words and numbers, and lints
//! for the retry anti-patterns of the background texts.
//!
//! Everything here is computed from the validated [`Scenario`] alone, without running
//! it: the model knows nothing of files, and neither does this module.
//!
//! ```text
//! Scenario ─► explain() ─► Explanation { dependency, fleets, lints } ─► render() ─► text
//!                              │
//!                              └─ lint::lints(): one Lint per anti-pattern found
//! ```
//!
//! The numbers are bounds, not predictions (the simulation is for those):
//! - **capacity** = servers / mean service time, against the **offered load** (logical
//!   requests per second, first attempts only);
//! - **worst-case attempts per request** = the product of the layers' `max_attempts`
//!   (what the dependency sees when every attempt fails: N^L for L layers of N);
//! - **what the budgets cap it to**: once each layer's retry budget is spent in a
//!   sustained total failure, a token-bucket or AWS-quota layer makes 1 attempt per
//!   call and a ratio layer at most `1 + percent/100` (see [`BudgetCap`]);
//! - **backoff**: the longest total wait of each layer's schedule, and of a whole
//!   request across the nested layers, against the deadline.
//!
//! - **in a service graph** ([`graph`]): each service's capacity and calls, and per
//!   fleet the worst-case attempts at every service it reaches, the product of
//!   `max_attempts` along each path summed over the paths
//!   (`frontend 4 → backend 16 → db 64`).
//!
//! Counts that are unlimited or overflow `u64` are [`Bound::Unbounded`] and print as
//! "unbounded" ("unlimited" in a graph's chain); nothing here panics on a validated
//! scenario.

pub(crate) mod graph;
pub(crate) mod lint;
pub(crate) mod render;
mod render_graph;

pub(crate) use graph::{Hop, ServiceAttempts, ServiceExplanation};
pub(crate) use lint::Lint;

use crate::engine::time::to_secs;
use crate::engine::Nanos;
use crate::model::backoff::{max_wait, Backoff};
use crate::model::breaker::BreakerConfig;
use crate::model::budget::{BudgetCap, BudgetConfig};
use crate::model::config::{
    Arrival, Attempts, DependencyConfig, FleetConfig, LayerConfig, LoadProfile, PartPresets,
    Scenario,
};
use crate::model::limiter::LimiterConfig;
use crate::model::outcome::{Class, ClassSet};

pub(crate) use crate::model::backoff::backoff_total;
pub(crate) use crate::model::bound::Bound;
pub(crate) use crate::model::broker::QueueExplanation;

/// The whole explanation of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// Scenario name.
    pub name: String,
    /// Run length (logical arrivals come in `[0, duration)`).
    pub duration: Nanos,
    /// The dependency and its capacity.
    pub dependency: DependencyExplanation,
    /// Mean offered load of all open and burst fleets, logical requests per second.
    pub offered_mean: f64,
    /// Highest offered load of all open and burst fleets at any instant of the run
    /// (bursts counted at their mean rate), logical requests per second.
    pub offered_peak: f64,
    /// One entry per fleet, in file order.
    pub fleets: Vec<FleetExplanation>,
    /// Anti-patterns found, by fleet, then layer, then the order of `LINTS`.
    pub lints: Vec<Lint>,
    /// Whether the scenario is a graph of `[[services]]` (else one `[dependency]`).
    pub graph: bool,
    /// The service whose capacity [`Explanation::dependency`] describes: the one fleet 0
    /// calls (the whole-run columns describe it); `dependency` without a graph.
    pub dependency_service: String,
    /// The services of the graph, in file order (with `[dependency]`, the one service
    /// named `dependency`).
    pub services: Vec<ServiceExplanation>,
}

/// The dependency in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct DependencyExplanation {
    /// Servers (`None` = unlimited).
    pub servers: Option<u32>,
    /// Mean service time in nanoseconds.
    pub mean_service_ns: f64,
    /// Attempts per second at full load (servers / mean service time), `None` when
    /// unlimited.
    pub capacity: Option<f64>,
    /// With `per_concurrent`, the capacity when every server is busy:
    /// servers / (mean + per_concurrent · (servers − 1)).
    pub congested_capacity: Option<f64>,
    /// Extra service time per attempt already in service.
    pub per_concurrent: Nanos,
    /// Waiting room (`None` = unlimited).
    pub queue_limit: Option<u64>,
    /// Status of a rejection (503 or 429).
    pub reject_status: u16,
    /// Retry-After carried by rejections.
    pub retry_after: Option<Nanos>,
    /// Whether queued attempts nobody waits for are dropped.
    pub drop_expired: bool,
    /// What sheds its load, in the order explain lists them: a finite queue,
    /// `drop_expired`, its `concurrency_limit`, its `admission`, a CoDel
    /// `queue_policy`, `shed_by_criticality` (empty: it sheds nothing).
    pub sheds: Vec<&'static str>,
    /// Whether an attempt can be rejected (finite servers and a finite queue).
    pub can_reject: bool,
    /// What its limiter (`admission`) does, if it has one.
    pub admission: Option<String>,
    /// Server time a rejection takes.
    pub reject_cost: Nanos,
    /// What its priority shedding (`shed_by_criticality`) does, if it has it.
    pub shed_by_criticality: Option<String>,
    /// What its queue policy (`queue_policy`) does, if it has one.
    pub queue_policy: Option<String>,
    /// A measured service time (`histogram` or `quantiles`): what it was given as
    /// and its quantiles as sampled.
    pub measured_service: Option<String>,
    /// What its concurrency limit (`concurrency_limit`) does, if it has one.
    pub concurrency_limit: Option<String>,
}

/// Offered load of a fleet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Poisson or constant arrivals.
    Open {
        /// Logical requests per second averaged over the run.
        mean: f64,
        /// Highest rate at any instant of the run (load profile included).
        peak: f64,
    },
    /// `count` requests at once.
    Burst {
        /// How many.
        count: u64,
        /// When.
        at: Nanos,
        /// `count / duration`.
        mean: f64,
    },
    /// Closed loop: self-limiting.
    Closed {
        /// Requests in flight at most.
        clients: u64,
        /// `clients / mean think time`, an upper bound of the rate (`None` when the
        /// mean think time is 0).
        max_rate: Option<f64>,
    },
}

impl Load {
    /// The rate counted against capacity: the peak of an open fleet, the mean of a
    /// burst, nothing for a closed loop.
    pub fn counted_rate(&self) -> Option<f64> {
        match *self {
            Load::Open { peak, .. } => Some(peak),
            Load::Burst { mean, .. } => Some(mean),
            Load::Closed { .. } => None,
        }
    }
}

/// One retry layer in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerExplanation {
    /// Layer name.
    pub name: String,
    /// A measured hop latency: what it was given as and its quantiles as sampled.
    pub measured_hop: Option<String>,
    /// Attempts per call (`u32::MAX` = unlimited).
    pub max_attempts: Attempts,
    /// Whether the layer retries at all (more than one attempt, something in `retry_on`).
    pub retries: bool,
    /// Retried outcome classes.
    pub retry_on: ClassSet,
    /// Per-attempt timeout.
    pub attempt_timeout: Option<Nanos>,
    /// Backoff policy.
    pub backoff: Backoff,
    /// The Retry-After this layer honours, when the dependency can send one and the
    /// layer respects it and retries rejections.
    pub retry_after: Option<Nanos>,
    /// Independent copies of the layer's state (budget, breaker).
    pub instances: u64,
    /// Circuit breaker.
    pub breaker: Option<BreakerConfig>,
    /// The largest wait after failed attempt k, for the first few retries.
    pub first_waits: Vec<Nanos>,
    /// The longest total wait of one call's backoff schedule (the sum of the largest
    /// wait after each failed attempt but the last).
    pub backoff_total: Bound,
    /// The same with the dependency's Retry-After honoured after every retry, when
    /// that applies to this layer.
    pub backoff_total_with_retry_after: Option<Bound>,
    /// `attempt_timeout × max_attempts`, when there is an attempt timeout.
    pub timeouts_total: Option<Bound>,
    /// What the budget allows, if the layer has one.
    pub budget: Option<BudgetCap>,
    /// Time a call may take, all attempts and backoff included.
    pub total_timeout: Option<Nanos>,
    /// Client-side rate limiter.
    pub limiter: Option<LimiterConfig>,
    /// Client-side concurrency limit per instance.
    pub concurrency_limit: Option<crate::model::concurrency::ConcurrencyLimitConfig>,
    /// The named preset of the whole layer.
    pub preset: Option<String>,
    /// The named presets of its parts.
    pub part_presets: PartPresets,
    /// `max_attempts` as written, when `max_attempts_cap` lowered it.
    pub capped_from: Option<Attempts>,
    /// Hedged requests instead of retries.
    pub hedging: Option<crate::model::config::HedgingConfig>,
    /// The class its retries are lowered to.
    pub retry_criticality: Option<crate::model::criticality::Criticality>,
}

/// One fleet in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetExplanation {
    /// A measured think time (closed loop): what it was given as and its quantiles
    /// as sampled.
    pub measured_think: Option<String>,
    /// Fleet name.
    pub name: String,
    /// Arrival kind: `poisson`, `constant`, `burst` or `closed`.
    pub arrival: &'static str,
    /// Clients the requests are spread over.
    pub clients: u64,
    /// Whether the fleet's rate follows a load profile.
    pub load_profile: bool,
    /// What the recording behind its load profile is, if one is.
    pub recorded: Option<String>,
    /// Fraction of non-idempotent writes.
    pub writes: f64,
    /// Whether writes carry an idempotency key.
    pub idempotency_keys: bool,
    /// Offered load.
    pub load: Load,
    /// The counted rate over the dependency's capacity (1.0 = 100%).
    pub utilisation: Option<f64>,
    /// End-to-end deadline.
    pub deadline: Option<Nanos>,
    /// Layers, top first.
    pub layers: Vec<LayerExplanation>,
    /// Product of the layers' `max_attempts`: dependency attempts per logical request
    /// when every attempt fails.
    pub worst_case_attempts: Bound,
    /// Attempts per request in a sustained total failure once every budget is spent
    /// (the product of [`BudgetCap::sustained_attempts`] and the unbudgeted layers'
    /// attempts); `None` when no layer has a budget, infinite when unbounded.
    pub sustained_attempts: Option<f64>,
    /// The longest total time a request can spend in backoff across all its layers
    /// (with Retry-After where it applies): `B_i = W_i + N_i · B_(i+1)`.
    pub backoff_per_request: Bound,
    /// The service the fleet calls.
    pub target: String,
    /// Whether the request's remaining deadline travels with its attempts.
    pub propagate_deadline: bool,
    /// Bulkhead and connection pool around its innermost layer's attempts.
    pub guards: crate::model::config::Guards,
    /// The class of its requests, when it sets `criticality`.
    pub criticality: Option<crate::model::criticality::Criticality>,
    /// Worst-case attempts at every service the fleet's requests reach, per logical
    /// request, callers before callees: the product of `max_attempts` along each path
    /// (the fleet's layers, then each call's), summed over the paths.
    pub per_service: Vec<ServiceAttempts>,
    /// The paths from the fleet's target to the services that call nobody, each hop
    /// with the worst-case attempts along that path (at most [`graph::MAX_PATHS`]).
    pub paths: Vec<Vec<Hop>>,
    /// How many such paths there are in all.
    pub path_count: Bound,
    /// The broker of a queue fleet.
    pub queue: Option<QueueExplanation>,
}

/// Whether a layer retries at all: more than one attempt and a class to retry.
pub(crate) fn retries(l: &LayerConfig) -> bool {
    l.max_attempts.retries() && l.retry_on != ClassSet::EMPTY
}

/// Product of the layers' `max_attempts` (a hedging layer's copies; 1 without layers).
pub(crate) fn worst_case_attempts(layers: &[LayerConfig]) -> Bound {
    layers
        .iter()
        .fold(Bound::Finite(1), |acc, l| acc * l.calls_below())
}

/// Whether this layer honours a Retry-After it can receive: it respects it, retries
/// the callee's rejections (class `overloaded` with `overloaded_status`), and the callee
/// can reject with one.
fn retry_after_applies(l: &LayerConfig, c: &Callee) -> bool {
    l.respect_retry_after
        && l.retry_on
            .retries(rejection_class(c.overloaded_status), c.config.reject_status)
        && c.explained.can_reject
        && c.config.retry_after.is_some()
}

/// The class of a capacity rejection: `overloaded` with `overloaded_status`.
pub(crate) fn rejection_class(overloaded_status: bool) -> Class {
    if overloaded_status {
        Class::Overloaded
    } else {
        Class::Rejected
    }
}

/// `d` in numbers; `rejected` is what its refusals are answered as (`rejected`, or
/// `overloaded` for a graph tier with `overloaded_status`).
pub(crate) fn explain_dependency(d: &DependencyConfig, rejected: Class) -> DependencyExplanation {
    let mean = d.service_time.mean_ns();
    let congested_capacity = match d.servers {
        Some(s) if d.per_concurrent > 0 => {
            let t = mean + d.per_concurrent as f64 * f64::from(s.saturating_sub(1));
            Some(f64::from(s) / (t / 1e9))
        }
        _ => None,
    };
    DependencyExplanation {
        servers: d.servers,
        mean_service_ns: mean,
        capacity: d.capacity(),
        congested_capacity,
        per_concurrent: d.per_concurrent,
        queue_limit: d.queue_limit,
        reject_status: d.reject_status,
        retry_after: d.retry_after,
        drop_expired: d.drop_expired,
        sheds: d.shedders(),
        can_reject: d.servers.is_some() && d.queue_limit.is_some(),
        admission: d.admission.map(|a| a.describe()),
        reject_cost: d.reject_cost,
        shed_by_criticality: d
            .shed_by_criticality
            .map(|s| s.describe(d.servers, d.queue_limit)),
        queue_policy: d.queue_policy.map(|q| q.describe(rejected)),
        measured_service: measured(Some(&d.service_time)),
        concurrency_limit: d.concurrency_limit.map(|l| l.describe()),
    }
}

/// The profile's multiplier at its change points inside `[0, duration)`, and at 0.
fn profile_times(p: &LoadProfile, duration: Nanos) -> Vec<Nanos> {
    let pts = match p {
        LoadProfile::Steps(p) | LoadProfile::Ramp(p) => p,
    };
    std::iter::once(0)
        .chain(pts.iter().map(|(at, _)| *at).filter(|at| *at < duration))
        .collect()
}

/// Rate of an open fleet at time `t` (0 for other arrivals).
fn open_rate_at(f: &FleetConfig, t: Nanos) -> f64 {
    match f.arrival {
        Arrival::Poisson { rate } | Arrival::Constant { rate } => {
            rate * f.load_profile.as_ref().map_or(1.0, |p| p.at(t))
        }
        _ => 0.0,
    }
}

fn fleet_load(f: &FleetConfig, duration: Nanos) -> Load {
    match &f.arrival {
        Arrival::Poisson { .. } | Arrival::Constant { .. } => {
            let times = f
                .load_profile
                .as_ref()
                .map_or(vec![0], |p| profile_times(p, duration));
            let peak = times
                .iter()
                .map(|&t| open_rate_at(f, t))
                .fold(0.0, f64::max);
            Load::Open {
                mean: f.offered_rate(duration).unwrap_or(peak),
                peak,
            }
        }
        Arrival::Trace(t) => {
            // A trace's mean over the run; its peak is not estimated.
            let mean = t.mean_rate(duration);
            Load::Open { mean, peak: mean }
        }
        Arrival::Burst { at, count } => Load::Burst {
            count: *count,
            at: *at,
            mean: *count as f64 / to_secs(duration.max(1)),
        },
        Arrival::Closed { think_time } => {
            let think = think_time.mean_ns();
            Load::Closed {
                clients: f.clients,
                max_rate: (think > 0.0).then(|| f.clients as f64 / (think / 1e9)),
            }
        }
    }
}

/// The highest total offered load of the open and burst fleets at any instant of
/// `[0, duration)`: open rates are piecewise constant or linear between profile points,
/// so their sum peaks at one of the points; bursts count at their mean rate.
pub(crate) fn offered_peak(scn: &Scenario) -> f64 {
    offered_peak_where(scn, |_| true)
}

/// [`offered_peak`] of the fleets `counted` selects.
pub(crate) fn offered_peak_where(scn: &Scenario, counted: impl Fn(&FleetConfig) -> bool) -> f64 {
    let fleets = || scn.fleets.iter().filter(|f| counted(f));
    let mut times: Vec<Nanos> = vec![0];
    for f in fleets() {
        if let Some(p) = &f.load_profile {
            times.extend(profile_times(p, scn.duration));
        }
    }
    times.sort_unstable();
    times.dedup();
    let bursts: f64 = fleets()
        .filter_map(|f| match fleet_load(f, scn.duration) {
            Load::Burst { mean, .. } => Some(mean),
            // A replayed trace counts at its mean rate, as a burst does.
            Load::Open { mean, .. } if matches!(f.arrival, Arrival::Trace(_)) => Some(mean),
            _ => None,
        })
        .sum();
    times
        .iter()
        .map(|&t| fleets().map(|f| open_rate_at(f, t)).sum::<f64>())
        .fold(0.0, f64::max)
        + bursts
}

/// What a stack of layers calls: the callee's capacity, and whether its capacity
/// rejections are answered `overloaded` (`overloaded_status`).
#[derive(Clone, Copy)]
pub(crate) struct Callee<'a> {
    pub(crate) explained: &'a DependencyExplanation,
    pub(crate) config: &'a DependencyConfig,
    pub(crate) overloaded_status: bool,
}

/// What a measured distribution was given as and its quantiles as sampled (`None`
/// for the parametric ones, whose keys say it all).
fn measured(d: Option<&crate::model::dist::Dist>) -> Option<String> {
    match d? {
        crate::model::dist::Dist::Measured(m) => Some(m.describe()),
        _ => None,
    }
}

/// Explains a stack of layers calling `callees` (one, or the callees of a fan-out):
/// a layer honours the longest Retry-After of the callees it applies to.
pub(crate) fn explain_layers(layers: &[LayerConfig], callees: &[Callee]) -> Vec<LayerExplanation> {
    layers
        .iter()
        .map(|l| {
            let ra = callees
                .iter()
                .filter(|c| retry_after_applies(l, c))
                .filter_map(|c| c.config.retry_after)
                .max();
            let shown = l.max_attempts.limit().map_or(5, |n| (n - 1).min(5));
            LayerExplanation {
                name: l.name.clone(),
                measured_hop: measured(l.hop_latency.as_ref()),
                max_attempts: l.max_attempts,
                retries: retries(l),
                retry_on: l.retry_on,
                attempt_timeout: l.attempt_timeout,
                backoff: l.backoff,
                retry_after: ra,
                instances: l.instances,
                breaker: l.breaker,
                first_waits: (1..=shown).map(|k| max_wait(&l.backoff, k)).collect(),
                backoff_total: backoff_total(&l.backoff, l.max_attempts, 0),
                backoff_total_with_retry_after: ra
                    .map(|r| backoff_total(&l.backoff, l.max_attempts, r)),
                timeouts_total: l
                    .attempt_timeout
                    .map(|t| Bound::Finite(t) * l.max_attempts.bound()),
                budget: l.budget.as_ref().map(BudgetConfig::cap),
                total_timeout: l.total_timeout,
                limiter: l.limiter,
                concurrency_limit: l.concurrency_limit,
                preset: l.preset.clone(),
                part_presets: l.part_presets.clone(),
                capped_from: l.capped_from,
                hedging: l.hedging,
                retry_criticality: l.retry_criticality,
            }
        })
        .collect()
}

/// Attempts per call in a sustained total failure once every budget is spent; `None`
/// when no layer has a budget.
pub(crate) fn sustained_attempts(layers: &[LayerExplanation]) -> Option<f64> {
    layers.iter().any(|l| l.budget.is_some()).then(|| {
        layers
            .iter()
            .map(|l| match &l.budget {
                Some(b) => b.sustained_attempts(l.max_attempts),
                None => l.max_attempts.as_f64(),
            })
            .product()
    })
}

/// The longest total backoff of one call through nested layers:
/// `B_i = W_i + N_i · B_(i+1)`.
pub(crate) fn backoff_per_call(layers: &[LayerExplanation]) -> Bound {
    layers.iter().rev().fold(Bound::Finite(0), |below, l| {
        let own = l.backoff_total_with_retry_after.unwrap_or(l.backoff_total);
        own + l.max_attempts.bound() * below
    })
}

fn explain_fleet(
    scn: &Scenario,
    dep: &DependencyExplanation,
    dep_cfg: &DependencyConfig,
    f: &FleetConfig,
) -> FleetExplanation {
    let load = fleet_load(f, scn.duration);
    let utilisation = match (load.counted_rate(), dep.capacity) {
        (Some(r), Some(c)) if c > 0.0 => Some(r / c),
        _ => None,
    };
    let overloaded_status = scn
        .services
        .get(usize::from(f.target))
        .is_some_and(|s| s.overloaded_status);
    let callee = Callee {
        explained: dep,
        config: dep_cfg,
        overloaded_status,
    };
    let layers = explain_layers(&f.layers, &[callee]);
    let sustained_attempts = sustained_attempts(&layers);
    let backoff_per_request = backoff_per_call(&layers);
    let reach = graph::reach(scn, f);
    FleetExplanation {
        measured_think: match &f.arrival {
            Arrival::Closed { think_time } => measured(Some(think_time)),
            _ => None,
        },
        name: f.name.clone(),
        arrival: match f.arrival {
            Arrival::Poisson { .. } => "poisson",
            Arrival::Constant { .. } => "constant",
            Arrival::Burst { .. } => "burst",
            Arrival::Closed { .. } => "closed",
            Arrival::Trace(_) => "trace",
        },
        clients: f.clients,
        load_profile: f.load_profile.is_some(),
        recorded: f.recorded.clone(),
        writes: f.writes,
        idempotency_keys: f.idempotency_keys,
        load,
        utilisation,
        deadline: f.deadline,
        worst_case_attempts: worst_case_attempts(&f.layers),
        sustained_attempts,
        backoff_per_request,
        layers,
        target: scn
            .services
            .get(usize::from(f.target))
            .map_or_else(String::new, |s| s.name.clone()),
        propagate_deadline: f.propagate_deadline,
        guards: f.guards,
        criticality: f.criticality,
        per_service: reach.per_service,
        paths: reach.paths,
        path_count: reach.path_count,
        queue: f.queue.as_ref().map(|q| {
            QueueExplanation::new(
                q,
                lint::handler_worst_case(f),
                worst_case_attempts(&f.layers),
            )
        }),
    }
}

/// Explains a validated scenario: capacity against offered load, worst-case attempts,
/// budget caps, backoff against deadlines, and the lints. Pure: same scenario, same
/// explanation.
pub(crate) fn explain(scn: &Scenario) -> Explanation {
    let dependency = explain_dependency(&scn.dependency, Class::Rejected);
    let services = graph::explain_services(scn);
    let fleets = scn
        .fleets
        .iter()
        .map(|f| match services.get(usize::from(f.target)) {
            // A graph's fleet is measured against the service it calls.
            Some(s) if scn.graph => {
                let cfg = &scn.services[usize::from(f.target)].capacity;
                explain_fleet(scn, &s.capacity, cfg, f)
            }
            _ => explain_fleet(scn, &dependency, &scn.dependency, f),
        })
        .collect();
    let offered_mean = scn
        .fleets
        .iter()
        .map(|f| match fleet_load(f, scn.duration) {
            Load::Open { mean, .. } | Load::Burst { mean, .. } => mean,
            Load::Closed { .. } => 0.0,
        })
        .sum();
    let dependency_service = scn
        .fleets
        .first()
        .and_then(|f| scn.services.get(usize::from(f.target)))
        .or(scn.services.first())
        .map_or_else(String::new, |s| s.name.clone());
    Explanation {
        name: scn.name.clone(),
        duration: scn.duration,
        offered_mean,
        offered_peak: offered_peak(scn),
        fleets,
        lints: lint::lints(scn),
        dependency,
        graph: scn.graph,
        dependency_service,
        services,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_saturate_to_unbounded_and_zero_absorbs() {
        assert_eq!(Bound::Finite(u64::MAX) + Bound::Finite(1), Bound::Unbounded);
        assert_eq!(
            Bound::Finite(1 << 40) * Bound::Finite(1 << 40),
            Bound::Unbounded
        );
        assert_eq!(Bound::Unbounded * Bound::Finite(0), Bound::Finite(0));
        assert_eq!(Attempts::Unlimited.bound(), Bound::Unbounded);
        assert_eq!(Attempts::Limited(3).bound(), Bound::Finite(3));
        assert!(Bound::Unbounded.exceeds(u64::MAX));
        assert!(!Bound::Finite(5).exceeds(5));
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn explain_example() {
        use crate::explain::{explain, Bound};
        use crate::scenario::{load, Source};
        let loaded = load(Source::embedded_default(), &[]).unwrap();
        let e = explain(&loaded.scenario);
        assert_eq!(e.fleets[0].worst_case_attempts, Bound::Finite(3));
        assert!(e.render().contains("3 attempts per request (worst case)"));
        assert!(e.lints.is_empty());
    }
}
