//! Lints: the retry anti-patterns of the background texts, found in a validated
//! scenario. Each has a stable id (kebab-case; `--deny ID` turns it into an error), the
//! fleet it concerns, the layer where that is relevant, and one sentence of why.
//!
//! A layer *retries* when `max_attempts > 1` and `retry_on` is not empty. "Below" a
//! layer means the layers after it in `[[fleets.layers]]` (nearer the dependency).
//! The exact firing rules, one per lint:
//!
//! | id | fires when |
//! | --- | --- |
//! | `multi-layer-retries-without-budget` | two or more layers of the fleet retry and have no `budget` (one lint per fleet) |
//! | `unjittered-backoff-many-clients` | a retrying layer's waits are deterministic and positive (`fixed` with a delay > 0, or `exponential` with `jitter = "none"` and a first wait > 0, or a library kind without jitter: `polly` without `jitter`, `resilience4j` without `randomization_factor`, `aws_legacy` with a fixed `base`) and the fleet has many clients: `clients` ≥ [`MANY_CLIENTS`], or a burst of at least that many requests |
//! | `retries-ambiguous-writes` | the fleet has `writes` > 0 without `idempotency_keys`, and a retrying layer has `retry_ambiguous_writes = true` and `timeout` in `retry_on`, and a timeout can reach it (an `attempt_timeout` at this layer or below) |
//! | `retries-breaker-open` | a retrying layer has `breaker_open` in `retry_on` and a breaker can produce it: its own breaker with `placement = "inside"`, or any breaker below it |
//! | `ignores-retry-after` | a retrying layer has `respect_retry_after = false` and `rejected` in `retry_on`, and the dependency can reject (finite `servers` and `queue_limit`) with a `retry_after` |
//! | `backoff-exceeds-deadline` | the fleet has a `deadline` and a retrying layer's backoff schedule (the largest wait after each failed attempt but the last, summed; Retry-After not counted) is longer than it; unlimited attempts with any positive wait count as unbounded |
//! | `timeouts-exceed-deadline` | the fleet has a `deadline` and a retrying layer's `attempt_timeout × max_attempts` is longer than it |
//! | `too-many-attempts` | a retrying layer's `max_attempts` is above [`MAX_ATTEMPTS`] (or unlimited) |
//! | `no-attempt-timeout-under-deadline` | the fleet has a `deadline` and a retrying layer has no `attempt_timeout`, nor does any layer below it |
//! | `overload-without-shedding` | the dependency (in a graph, each service a fleet calls, against the fleets that call it) has finite servers, the highest total offered load of the open and burst fleets (first attempts; bursts at their mean rate over the run; closed loops are self-limiting and not counted) exceeds its capacity, and it sheds nothing: unlimited `queue_limit` and no `drop_expired` (a deadline alone does not shed: the abandoned attempts are still served). One lint, on the fleet with the largest offered load |
//! | `retries-at-several-tiers` | on a path of a service graph from a fleet to a service that calls nobody, more than one tier retries (a tier is the fleet's layers, or one call's layers; it retries when one of its layers does) and at least one retrying tier has a layer without a `budget`. One lint per fleet, naming the path with the largest product |
//! | `visibility-timeout-below-handler-time` | a queue fleet's handler can run longer than its `visibility_timeout`: its worst case ([`handler_worst_case`]: attempts × their timeouts plus the backoff schedule, layer by layer, capped by `total_timeout` and the `deadline`) exceeds it, or nothing bounds it (no attempt timeout, total timeout or deadline) |
//! | `double-retry-loop` | a queue fleet's handler retries (a layer retries) and the broker redelivers (`max_receive_count` above 1 or unlimited), and no retrying layer has a `budget` |
//! | `pool-held-during-backoff` | a fleet or call has a `pool` with `hold_during_backoff = true` and its innermost layer (whose attempts hold the connections) retries. A call's lint names the first fleet whose requests reach it |
//! | `hedges-writes` | the fleet has `writes` > 0 without `idempotency_keys`, and one of its layers, or a layer of a call its requests reach, has `hedging` |
//! | `retries-overloaded` | a retrying fleet or call layer has `overloaded` in `retry_on` and a callee can answer overloaded (`on_failure = "overloaded"` or `overloaded_status = true`). A call's lint names the first fleet whose requests reach it; a call no fleet reaches is not linted |
//!
//! Rules that would fire on inert settings stay silent: retrying `breaker_open` without
//! a breaker, ignoring a Retry-After the dependency never sends, retrying ambiguous
//! writes when nothing can time out.

use std::fmt;

use crate::model::breaker::Placement;
use crate::model::config::{
    Arrival, Attempts, DependencyConfig, FleetConfig, LayerConfig, Scenario,
};
use crate::model::outcome::Class;

mod guards;
mod hedge;
mod queue;
mod tiers;

pub use queue::handler_worst_case;

use super::render::{fmt_count, fmt_duration, fmt_num, fmt_time, fmt_total, quoted_list};
use super::{backoff_total, fleet_load, offered_peak_where, rejection_class, retries, Bound};

/// A fleet has "many clients" from this many clients (or burst requests) on.
pub const MANY_CLIENTS: u64 = 10;
/// More attempts per call than this is too many.
pub const MAX_ATTEMPTS: u32 = 5;

/// Id: retries at two or more layers without a budget.
pub const MULTI_LAYER_RETRIES_WITHOUT_BUDGET: &str = "multi-layer-retries-without-budget";
/// Id: unjittered backoff in a fleet of many clients.
pub const UNJITTERED_BACKOFF_MANY_CLIENTS: &str = "unjittered-backoff-many-clients";
/// Id: retrying timed-out non-idempotent writes without keys.
pub const RETRIES_AMBIGUOUS_WRITES: &str = "retries-ambiguous-writes";
/// Id: retrying `breaker_open`.
pub const RETRIES_BREAKER_OPEN: &str = "retries-breaker-open";
/// Id: ignoring Retry-After.
pub const IGNORES_RETRY_AFTER: &str = "ignores-retry-after";
/// Id: a backoff schedule longer than the deadline.
pub const BACKOFF_EXCEEDS_DEADLINE: &str = "backoff-exceeds-deadline";
/// Id: `attempt_timeout × max_attempts` longer than the deadline.
pub const TIMEOUTS_EXCEED_DEADLINE: &str = "timeouts-exceed-deadline";
/// Id: more than five attempts per call.
pub const TOO_MANY_ATTEMPTS: &str = "too-many-attempts";
/// Id: retries under a deadline with no attempt timeout.
pub const NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE: &str = "no-attempt-timeout-under-deadline";
/// Id: offered load above capacity and no load shedding.
pub const OVERLOAD_WITHOUT_SHEDDING: &str = "overload-without-shedding";

/// Id: retries at more than one tier of a service graph's path, not all budgeted.
pub const RETRIES_AT_SEVERAL_TIERS: &str = "retries-at-several-tiers";
/// Id: a layer retries a callee's `overloaded` answers.
pub const RETRIES_OVERLOADED: &str = "retries-overloaded";

/// Id: a queue handler that can outlive its visibility timeout.
pub const VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME: &str = "visibility-timeout-below-handler-time";
/// Id: handler retries inside broker redelivery, without a budget.
pub const DOUBLE_RETRY_LOOP: &str = "double-retry-loop";

/// Id: a connection pool held through a retrying layer's backoff.
pub const POOL_HELD_DURING_BACKOFF: &str = "pool-held-during-backoff";

/// Id: hedging non-idempotent writes without idempotency keys.
pub const HEDGES_WRITES: &str = "hedges-writes";

/// Every lint: its id and one sentence of what it means, in report order.
pub const LINTS: [(&str, &str); 16] = [
    (
        MULTI_LAYER_RETRIES_WITHOUT_BUDGET,
        "two or more layers of a fleet retry without a retry budget, so their attempts multiply (3 layers of 3 = 27 per request)",
    ),
    (
        UNJITTERED_BACKOFF_MANY_CLIENTS,
        "a fleet of many clients (or a burst) backs off on a fixed or unjittered exponential schedule, so clients that failed together retry together",
    ),
    (
        RETRIES_AMBIGUOUS_WRITES,
        "a layer retries timed-out non-idempotent writes that carry no idempotency key, which can apply a write twice",
    ),
    (
        RETRIES_BREAKER_OPEN,
        "a layer retries breaker_open, spending attempts on a breaker that is refusing calls instead of failing fast",
    ),
    (
        IGNORES_RETRY_AFTER,
        "a layer retries the dependency's rejections without waiting the Retry-After they carry",
    ),
    (
        BACKOFF_EXCEEDS_DEADLINE,
        "a layer's longest backoff schedule is longer than the fleet's deadline, so its last retries end in deadline_exceeded",
    ),
    (
        TIMEOUTS_EXCEED_DEADLINE,
        "a layer's attempt_timeout × max_attempts is longer than the fleet's deadline, so the deadline, not max_attempts, bounds the attempts",
    ),
    (
        TOO_MANY_ATTEMPTS,
        "a layer makes more than 5 attempts per call, each one more load on a dependency that is already failing",
    ),
    (
        NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE,
        "a retrying layer has no attempt timeout at or below it, so one hung attempt uses the whole deadline and the retries never happen",
    ),
    (
        OVERLOAD_WITHOUT_SHEDDING,
        "offered load exceeds the dependency's capacity and it sheds nothing (unlimited queue, no drop_expired), so queue and latency grow without bound",
    ),
    (
        RETRIES_AT_SEVERAL_TIERS,
        "more than one tier on a path of a service graph retries, not every one with a budget, so the attempts multiply tier by tier (4 × 4 × 4 = 64 at the database)",
    ),
    (
        RETRIES_OVERLOADED,
        "a layer retries a callee's overloaded answers, which mean \"overloaded; don't retry\", so tiers above the one that rejected retry too",
    ),
    (
        VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME,
        "a queue handler's worst case (its retries, their timeouts and its backoff) exceeds the visibility timeout, so its message is delivered again while it still runs",
    ),
    (
        DOUBLE_RETRY_LOOP,
        "a queue handler retries and the broker redelivers too, with no budget, so the two loops multiply (3 attempts × 5 receives = 15 per message)",
    ),
    (
        POOL_HELD_DURING_BACKOFF,
        "a connection pool is held through the backoff of a layer that retries, so the dependency's slowdown becomes the caller's pool exhaustion (at most size / (service time + backoff) attempts per second)",
    ),
    (
        HEDGES_WRITES,
        "a layer hedges non-idempotent writes that carry no idempotency key: its concurrent copies are ambiguous duplicates, each applied",
    ),
];

/// One anti-pattern found in a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lint {
    /// Stable id, one of [`LINTS`].
    pub id: &'static str,
    /// The fleet it concerns.
    pub fleet: String,
    /// The layer it concerns, when it is about one layer.
    pub layer: Option<String>,
    /// The call of a service graph it concerns (`backend ─▶ db`), when its layer is a
    /// call's rather than the fleet's; [`Lint::fleet`] is then the first fleet whose
    /// requests reach the call.
    pub call: Option<String>,
    /// One sentence of why, with the numbers.
    pub message: String,
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] fleet '{}'", self.id, self.fleet)?;
        if let Some(c) = &self.call {
            write!(f, ", call {c}")?;
        }
        if let Some(l) = &self.layer {
            write!(f, ", layer '{l}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// `--deny` named a lint that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--deny: unknown lint \"{found}\" (known: all, {})", known_ids())]
pub struct UnknownLint {
    /// What was given.
    pub found: String,
}

fn known_ids() -> String {
    LINTS.map(|(id, _)| id).join(", ")
}

/// Resolves `--deny` arguments to lint ids (`all` = every lint), in [`LINTS`] order,
/// without duplicates.
///
/// ```
/// use retrysim::explain::lint::{resolve_deny, LINTS, TOO_MANY_ATTEMPTS};
/// assert_eq!(resolve_deny(&["too-many-attempts".into()]).unwrap(), vec![TOO_MANY_ATTEMPTS]);
/// assert_eq!(resolve_deny(&["all".into()]).unwrap().len(), LINTS.len());
/// assert!(resolve_deny(&["no-such-lint".into()]).is_err());
/// ```
pub fn resolve_deny(args: &[String]) -> Result<Vec<&'static str>, UnknownLint> {
    let mut denied = [false; LINTS.len()];
    for a in args {
        let a = a.trim();
        if a == "all" {
            denied = [true; LINTS.len()];
        } else {
            match LINTS.iter().position(|(id, _)| *id == a) {
                Some(i) => denied[i] = true,
                None => {
                    return Err(UnknownLint {
                        found: a.to_string(),
                    })
                }
            }
        }
    }
    Ok(LINTS
        .iter()
        .zip(denied)
        .filter(|(_, d)| *d)
        .map(|((id, _), _)| *id)
        .collect())
}

/// A call of a service graph: (service index, call index).
type CallAt = (usize, usize);

/// Where a lint sorts: fleet index, call, layer index, rule index.
type SortKey = (usize, Option<CallAt>, Option<usize>, usize);

/// Collects lints with their sort key.
struct Found {
    out: Vec<(SortKey, Lint)>,
}

impl Found {
    fn push(
        &mut self,
        fi: usize,
        f: &FleetConfig,
        li: Option<usize>,
        id: &'static str,
        message: String,
    ) {
        let layer = li.map(|i| f.layers[i].name.clone());
        self.push_at(fi, f, None, li, layer, id, message);
    }

    /// A lint at `call` (with `layer` its layer's name) or at the fleet's own layer.
    #[allow(clippy::too_many_arguments)]
    fn push_at(
        &mut self,
        fi: usize,
        f: &FleetConfig,
        call: Option<(CallAt, String)>,
        li: Option<usize>,
        layer: Option<String>,
        id: &'static str,
        message: String,
    ) {
        let rule = LINTS
            .iter()
            .position(|(x, _)| *x == id)
            .unwrap_or(LINTS.len());
        let (at, call) = match call {
            Some((at, c)) => (Some(at), Some(c)),
            None => (None, None),
        };
        self.out.push((
            (fi, at, li, rule),
            Lint {
                id,
                fleet: f.name.clone(),
                layer,
                call,
                message,
            },
        ));
    }
}

/// Finds every lint in a scenario, ordered by fleet, then layer (fleet-wide lints
/// first), then the order of [`LINTS`].
pub fn lints(scn: &Scenario) -> Vec<Lint> {
    let mut found = Found { out: Vec::new() };
    for (fi, f) in scn.fleets.iter().enumerate() {
        multi_layer_without_budget(&mut found, fi, f);
        for (li, l) in f.layers.iter().enumerate() {
            if !retries(l) {
                continue;
            }
            unjittered(&mut found, fi, f, li, l);
            ambiguous_writes(&mut found, fi, f, li, l);
            breaker_open(&mut found, fi, f, li, l);
            ignores_retry_after(&mut found, scn, fi, f, li, l);
            deadline_rules(&mut found, fi, f, li, l);
            if l.max_attempts.limit().is_none_or(|n| n > MAX_ATTEMPTS) {
                let n = match l.max_attempts.limit() {
                    None => "unlimited attempts per call".to_string(),
                    Some(n) => format!("up to {n} attempts per call"),
                };
                found.push(
                    fi,
                    f,
                    Some(li),
                    TOO_MANY_ATTEMPTS,
                    format!(
                        "it makes {n} (more than {MAX_ATTEMPTS}), and every one is more load on a dependency that is already failing"
                    ),
                );
            }
        }
    }
    overload_without_shedding(&mut found, scn);
    tiers::several_tiers(&mut found, scn);
    tiers::overloaded(&mut found, scn);
    queue::queue_lints(&mut found, scn);
    guards::held_during_backoff(&mut found, scn);
    hedge::writes(&mut found, scn);
    let mut out = found.out;
    out.sort_by_key(|(key, _)| *key);
    out.into_iter().map(|(_, l)| l).collect()
}

fn multi_layer_without_budget(found: &mut Found, fi: usize, f: &FleetConfig) {
    let bare: Vec<&LayerConfig> = f
        .layers
        .iter()
        .filter(|l| retries(l) && l.budget.is_none())
        .collect();
    if bare.len() < 2 {
        return;
    }
    let names: Vec<&str> = bare.iter().map(|l| l.name.as_str()).collect();
    let factors: Vec<String> = bare.iter().map(|l| fmt_attempts(l.max_attempts)).collect();
    let product = bare
        .iter()
        .fold(Bound::Finite(1), |acc, l| acc * l.max_attempts.bound());
    found.push(
        fi,
        f,
        None,
        MULTI_LAYER_RETRIES_WITHOUT_BUDGET,
        format!(
            "layers {} all retry with no retry budget, so their attempts multiply to {} = {} dependency attempts per request when the dependency fails; let one layer own the retries or give each a budget",
            quoted_list(&names),
            factors.join(" × "),
            fmt_count(product)
        ),
    );
}

/// Whether the fleet's requests fail together: many clients, or a large burst.
fn many_clients(f: &FleetConfig) -> Option<String> {
    if let Arrival::Burst { count, .. } = f.arrival {
        if count >= MANY_CLIENTS {
            return Some(format!("the {count} requests of the burst"));
        }
    }
    (f.clients >= MANY_CLIENTS).then(|| format!("the fleet's {} clients", f.clients))
}

fn unjittered(found: &mut Found, fi: usize, f: &FleetConfig, li: usize, l: &LayerConfig) {
    let Some(what) = l.backoff.unjittered(l.max_attempts) else {
        return;
    };
    let Some(who) = many_clients(f) else { return };
    found.push(
        fi,
        f,
        Some(li),
        UNJITTERED_BACKOFF_MANY_CLIENTS,
        format!(
            "{who} fail together, and with {what} they retry together, in waves that land on the dependency while it recovers; use full jitter"
        ),
    );
}

fn timeout_at_or_below(f: &FleetConfig, li: usize) -> bool {
    f.layers[li..].iter().any(|l| l.attempt_timeout.is_some())
}

fn ambiguous_writes(found: &mut Found, fi: usize, f: &FleetConfig, li: usize, l: &LayerConfig) {
    if f.writes > 0.0
        && !f.idempotency_keys
        && l.retry_ambiguous_writes
        && l.retry_on.contains(Class::Timeout)
        && timeout_at_or_below(f, li)
    {
        found.push(
            fi,
            f,
            Some(li),
            RETRIES_AMBIGUOUS_WRITES,
            format!(
                "{}% of requests are non-idempotent writes without idempotency keys and this layer retries their timeouts (retry_ambiguous_writes = true), but a timed-out write may already be applied, so the retry can apply it twice",
                fmt_num(f.writes * 100.0)
            ),
        );
    }
}

fn breaker_open(found: &mut Found, fi: usize, f: &FleetConfig, li: usize, l: &LayerConfig) {
    if !l.retry_on.contains(Class::BreakerOpen) {
        return;
    }
    let source = if l.breaker.is_some_and(|b| b.placement == Placement::Inside) {
        "its own breaker (inside the retry loop)".to_string()
    } else if let Some(below) = f.layers[li + 1..].iter().find(|b| b.breaker.is_some()) {
        format!("the breaker of layer '{}' below", below.name)
    } else {
        return;
    };
    found.push(
        fi,
        f,
        Some(li),
        RETRIES_BREAKER_OPEN,
        format!(
            "it retries breaker_open, so calls refused by {source} are tried again instead of failing fast, spending attempts and backoff on a breaker that is protecting the dependency"
        ),
    );
}

fn ignores_retry_after(
    found: &mut Found,
    scn: &Scenario,
    fi: usize,
    f: &FleetConfig,
    li: usize,
    l: &LayerConfig,
) {
    // In a graph the layer calls the fleet's target, whose capacity rejections are
    // `overloaded` with `overloaded_status`.
    let (d, status, who) = match scn.services.get(usize::from(f.target)) {
        Some(s) if scn.graph => (
            &s.capacity,
            s.overloaded_status,
            format!("service '{}'", s.name),
        ),
        _ => (&scn.dependency, false, "the dependency".to_string()),
    };
    let Some(ra) = d.retry_after else { return };
    if l.respect_retry_after
        || !l.retry_on.retries(rejection_class(status), d.reject_status)
        || d.servers.is_none()
        || d.queue_limit.is_none()
    {
        return;
    }
    found.push(
        fi,
        f,
        Some(li),
        IGNORES_RETRY_AFTER,
        format!(
            "{who} rejects with Retry-After {} when its queue is full, but this layer has respect_retry_after = false and retries on its own schedule, into a dependency that asked for a pause",
            fmt_time(ra)
        ),
    );
}

fn deadline_rules(found: &mut Found, fi: usize, f: &FleetConfig, li: usize, l: &LayerConfig) {
    let Some(deadline) = f.deadline else { return };
    let sched = backoff_total(&l.backoff, l.max_attempts, 0);
    if sched.exceeds(deadline) {
        found.push(
            fi,
            f,
            Some(li),
            BACKOFF_EXCEEDS_DEADLINE,
            format!(
                "its backoff schedule can wait {} over {} retries, longer than the deadline of {}, so its last retries can only end in deadline_exceeded",
                fmt_total(sched),
                fmt_retries(l.max_attempts),
                fmt_time(deadline)
            ),
        );
    }
    if let Some(t) = l.attempt_timeout {
        let total = Bound::Finite(t) * l.max_attempts.bound();
        if total.exceeds(deadline) {
            found.push(
                fi,
                f,
                Some(li),
                TIMEOUTS_EXCEED_DEADLINE,
                format!(
                    "{} attempts of up to {} each ({}) do not fit in the deadline of {}, so the deadline, not max_attempts, decides how many attempts are made",
                    fmt_attempts(l.max_attempts),
                    fmt_time(t),
                    fmt_duration(total),
                    fmt_time(deadline)
                ),
            );
        }
    }
    if !timeout_at_or_below(f, li) {
        found.push(
            fi,
            f,
            Some(li),
            NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE,
            format!(
                "neither this layer nor any below it has an attempt_timeout, so one hung attempt (a blackhole, a long queue) holds the call until the deadline of {} and its retries never happen",
                fmt_time(deadline)
            ),
        );
    }
}

fn overload_without_shedding(found: &mut Found, scn: &Scenario) {
    if !scn.graph {
        overloaded_service(found, scn, &scn.dependency, "the dependency", |_| true);
        return;
    }
    // In a graph, each service the fleets call against the fleets that call it.
    let mut seen = Vec::new();
    for f in &scn.fleets {
        let t = f.target;
        let Some(s) = scn.services.get(usize::from(t)) else {
            continue;
        };
        if seen.contains(&t) {
            continue;
        }
        seen.push(t);
        let who = format!("service '{}'", s.name);
        overloaded_service(found, scn, &s.capacity, &who, |g| g.target == t);
    }
}

fn overloaded_service(
    found: &mut Found,
    scn: &Scenario,
    d: &DependencyConfig,
    who: &str,
    calls: impl Fn(&FleetConfig) -> bool,
) {
    let Some(capacity) = d.capacity() else { return };
    if d.queue_limit.is_some() || d.drop_expired {
        return;
    }
    let peak = offered_peak_where(scn, &calls);
    if peak <= capacity {
        return;
    }
    // Attribute it to the fleet offering the most (the first of equals).
    let mut top: Option<(usize, f64)> = None;
    let mut callers = 0;
    for (i, f) in scn.fleets.iter().enumerate() {
        if !calls(f) {
            continue;
        }
        callers += 1;
        if let Some(r) = fleet_load(f, scn.duration).counted_rate() {
            if top.is_none_or(|(_, best)| r > best) {
                top = Some((i, r));
            }
        }
    }
    let Some((fi, rate)) = top else { return };
    let f = &scn.fleets[fi];
    let offered = if callers == 1 {
        format!("the fleet offers up to {} requests/s", fmt_num(peak))
    } else {
        format!(
            "the fleets offer up to {} requests/s together (this one {}/s)",
            fmt_num(peak),
            fmt_num(rate)
        )
    };
    found.push(
        fi,
        f,
        None,
        OVERLOAD_WITHOUT_SHEDDING,
        format!(
            "{offered} against a capacity of {} attempts/s ({}%) and {who} sheds nothing (unlimited queue, no drop_expired), so its queue and latency grow without bound while the overload lasts",
            fmt_num(capacity),
            fmt_num(peak / capacity * 100.0)
        ),
    );
}

fn fmt_attempts(n: Attempts) -> String {
    fmt_count(n.bound())
}

fn fmt_retries(n: Attempts) -> String {
    match n.limit() {
        None => "unlimited".to_string(),
        Some(n) => (n - 1).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lint_ids_are_unique_kebab_case_and_described() {
        for (i, (id, about)) in LINTS.iter().enumerate() {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
            assert!(!about.is_empty() && !about.ends_with('.'), "{id}");
            assert!(LINTS[i + 1..].iter().all(|(o, _)| o != id), "{id} twice");
            assert_ne!(*id, "all");
        }
    }

    #[test]
    fn deny_all_and_repeats_resolve_once_in_table_order() {
        let got = resolve_deny(&[
            TOO_MANY_ATTEMPTS.into(),
            "all".into(),
            TOO_MANY_ATTEMPTS.into(),
        ])
        .unwrap();
        assert_eq!(got, LINTS.map(|(id, _)| id).to_vec());
        let err = resolve_deny(&["too-many".into()]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown lint \"too-many\""), "{msg}");
        assert!(msg.contains(OVERLOAD_WITHOUT_SHEDDING), "{msg}");
    }
}
