//! Lints: the retry anti-patterns of the background texts, found in a validated
//! scenario. Each has a stable id (kebab-case; `--deny ID` turns it into an error), the
//! fleet it concerns, the layer where that is relevant, and one sentence of why.
//!
//! A layer *retries* when `max_attempts > 1` and `retry_on` is not empty. "Below" a
//! layer means the layers after it in `[[fleets.layers]]` (nearer the dependency).
//!
//! Every lint is one [`Rule`] of the table [`LINTS`]: its id, why it matters, exactly
//! when it fires, and the check that finds it. `retrysim lints` prints the table (with
//! `--markdown`, the book's lints page, which a test checks against it). A lint of
//! one mechanism is defined with it (`lint/queue.rs`, `lint/guards.rs`, `lint/hedge.rs`,
//! `lint/tiers.rs`, `lint/limit.rs`) and registered by its line in [`LINTS`].
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

pub(crate) mod admission;
pub(crate) mod criticality;
pub(crate) mod guards;
pub(crate) mod hedge;
pub(crate) mod limit;
pub(crate) mod queue;
pub(crate) mod tiers;

pub(crate) use queue::handler_worst_case;

use super::render::{fmt_count, fmt_duration, fmt_num, fmt_time, fmt_total, quoted_list};
use super::{backoff_total, fleet_load, offered_peak_where, rejection_class, retries, Bound};

/// A fleet has "many clients" from this many clients (or burst requests) on.
pub(crate) const MANY_CLIENTS: u64 = 10;
/// More attempts per call than this is too many.
pub(crate) const MAX_ATTEMPTS: u32 = 5;

/// One lint: its id, why it matters, exactly when it fires, and its check.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    /// Stable id, kebab-case (`--deny ID`).
    pub id: &'static str,
    /// One sentence of what it means and why it matters.
    pub why: &'static str,
    /// Exactly when it fires.
    pub fires_when: &'static str,
    /// Pushes every instance of it in a scenario.
    pub(crate) check: fn(&mut Found, &Scenario),
}

/// The header of the lint table as `retrysim lints` prints it.
pub(crate) const LINTS_HEADER: [&str; 3] = ["id", "why", "fires_when"];

/// Every lint, in report order: a new lint is a [`Rule`] beside its check and one line
/// here.
pub(crate) const LINTS: [Rule; 19] = [
    MULTI_LAYER_RETRIES_WITHOUT_BUDGET,
    UNJITTERED_BACKOFF_MANY_CLIENTS,
    RETRIES_AMBIGUOUS_WRITES,
    RETRIES_BREAKER_OPEN,
    IGNORES_RETRY_AFTER,
    BACKOFF_EXCEEDS_DEADLINE,
    TIMEOUTS_EXCEED_DEADLINE,
    TOO_MANY_ATTEMPTS,
    NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE,
    OVERLOAD_WITHOUT_SHEDDING,
    tiers::RETRIES_AT_SEVERAL_TIERS,
    tiers::RETRIES_OVERLOADED,
    queue::VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME,
    queue::DOUBLE_RETRY_LOOP,
    guards::POOL_HELD_DURING_BACKOFF,
    hedge::HEDGES_WRITES,
    admission::COMPUTED_RETRY_AFTER_UNJITTERED,
    criticality::RETRIES_AT_FIRST_ATTEMPT_CRITICALITY,
    limit::RETRIES_ADAPTIVE_LIMIT_WITHOUT_BUDGET,
];

/// Retries at two or more layers without a budget.
pub(crate) const MULTI_LAYER_RETRIES_WITHOUT_BUDGET: Rule = Rule {
    id: "multi-layer-retries-without-budget",
    why: "two or more layers of a fleet retry without a retry budget, so their attempts multiply (3 layers of 3 = 27 per request)",
    fires_when: "two or more layers of the fleet retry and have no `budget` (one lint per fleet)",
    check: multi_layer_without_budget,
};

/// Unjittered backoff in a fleet of many clients.
pub(crate) const UNJITTERED_BACKOFF_MANY_CLIENTS: Rule = Rule {
    id: "unjittered-backoff-many-clients",
    why: "a fleet of many clients (or a burst) backs off on a fixed or unjittered exponential schedule, so clients that failed together retry together",
    fires_when: "a retrying layer's waits are deterministic and positive (`fixed` with a delay > 0, or `exponential` with `jitter = \"none\"` and a first wait > 0, or a library kind without jitter: `polly` without `jitter`, `resilience4j` without `randomization_factor`, `aws_legacy` with a fixed `base`) and the fleet has many clients: `clients` ≥ 10, or a burst of at least 10 requests",
    check: unjittered,
};

/// Retrying timed-out non-idempotent writes without keys.
pub(crate) const RETRIES_AMBIGUOUS_WRITES: Rule = Rule {
    id: "retries-ambiguous-writes",
    why: "a layer retries timed-out non-idempotent writes that carry no idempotency key, which can apply a write twice",
    fires_when: "the fleet has `writes` > 0 without `idempotency_keys`, and a retrying layer has `retry_ambiguous_writes = true` and `timeout` in `retry_on`, and a timeout can reach it (an `attempt_timeout` at this layer or below)",
    check: ambiguous_writes,
};

/// Retrying `breaker_open`.
pub(crate) const RETRIES_BREAKER_OPEN: Rule = Rule {
    id: "retries-breaker-open",
    why: "a layer retries breaker_open, spending attempts on a breaker that is refusing calls instead of failing fast",
    fires_when: "a retrying layer has `breaker_open` in `retry_on` and a breaker can produce it: its own breaker with `placement = \"inside\"`, or any breaker below it",
    check: breaker_open,
};

/// Ignoring Retry-After.
pub(crate) const IGNORES_RETRY_AFTER: Rule = Rule {
    id: "ignores-retry-after",
    why: "a layer retries the dependency's rejections without waiting the Retry-After they carry",
    fires_when: "a retrying layer has `respect_retry_after = false` and retries the rejections of what it calls (`rejected` in `retry_on`, or `rejected_5xx` with a `reject_status` other than 429; in a graph, `overloaded` when the service has `overloaded_status = true`), and that dependency or service can reject (finite `servers` and `queue_limit`) with a `retry_after`",
    check: ignores_retry_after,
};

/// A backoff schedule longer than the deadline.
pub(crate) const BACKOFF_EXCEEDS_DEADLINE: Rule = Rule {
    id: "backoff-exceeds-deadline",
    why: "a layer's longest backoff schedule is longer than the fleet's deadline, so its last retries end in deadline_exceeded",
    fires_when: "the fleet has a `deadline` and a retrying layer's backoff schedule (the largest wait after each failed attempt but the last, summed; Retry-After not counted) is longer than it; unlimited attempts with any positive wait count as unbounded",
    check: backoff_exceeds_deadline,
};

/// `attempt_timeout × max_attempts` longer than the deadline.
pub(crate) const TIMEOUTS_EXCEED_DEADLINE: Rule = Rule {
    id: "timeouts-exceed-deadline",
    why: "a layer's attempt_timeout × max_attempts is longer than the fleet's deadline, so the deadline, not max_attempts, bounds the attempts",
    fires_when: "the fleet has a `deadline` and a retrying layer's `attempt_timeout × max_attempts` is longer than it",
    check: timeouts_exceed_deadline,
};

/// More than [`MAX_ATTEMPTS`] attempts per call.
pub(crate) const TOO_MANY_ATTEMPTS: Rule = Rule {
    id: "too-many-attempts",
    why: "a layer makes more than 5 attempts per call, each one more load on a dependency that is already failing",
    fires_when: "a retrying layer's `max_attempts` is above 5 (or unlimited)",
    check: too_many_attempts,
};

/// Retries under a deadline with no attempt timeout.
pub(crate) const NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE: Rule = Rule {
    id: "no-attempt-timeout-under-deadline",
    why: "a retrying layer has no attempt timeout at or below it, so one hung attempt uses the whole deadline and the retries never happen",
    fires_when: "the fleet has a `deadline` and a retrying layer has no `attempt_timeout`, nor does any layer below it",
    check: no_attempt_timeout_under_deadline,
};

/// Offered load above capacity and no load shedding.
pub(crate) const OVERLOAD_WITHOUT_SHEDDING: Rule = Rule {
    id: "overload-without-shedding",
    why: "offered load exceeds the dependency's capacity and it sheds nothing (unlimited queue, no drop_expired), so queue and latency grow without bound",
    fires_when: "the dependency (in a graph, each service a fleet calls, against the fleets that call it) has finite servers, the highest total offered load of the open and burst fleets (first attempts; bursts at their mean rate over the run; closed loops are self-limiting and not counted) exceeds its capacity, and it sheds nothing: unlimited `queue_limit`, no `drop_expired`, no `concurrency_limit`, no `admission`, no CoDel `queue_policy` and no `shed_by_criticality` (a deadline alone does not shed: the abandoned attempts are still served). One lint, on the fleet with the largest offered load",
    check: overload_without_shedding,
};

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
    LINTS.map(|r| r.id).join(", ")
}

/// Resolves `--deny` arguments to lint ids (`all` = every lint), in [`LINTS`] order,
/// without duplicates.
pub(crate) fn resolve_deny(args: &[String]) -> Result<Vec<&'static str>, UnknownLint> {
    let mut denied = [false; LINTS.len()];
    for a in args {
        let a = a.trim();
        if a == "all" {
            denied = [true; LINTS.len()];
        } else {
            match LINTS.iter().position(|r| r.id == a) {
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
        .map(|(r, _)| r.id)
        .collect())
}

/// A call of a service graph: (service index, call index).
type CallAt = (usize, usize);

/// Where a lint sorts: fleet index, call, layer index, rule index.
type SortKey = (usize, Option<CallAt>, Option<usize>, usize);

/// The lints found in a scenario so far, with their sort keys.
#[derive(Debug)]
pub(crate) struct Found {
    out: Vec<(SortKey, Lint)>,
}

impl Found {
    /// Lint `rule` at fleet `fi` (`f`), at its layer `li` or fleet-wide.
    pub(crate) fn push(
        &mut self,
        fi: usize,
        f: &FleetConfig,
        li: Option<usize>,
        rule: &Rule,
        message: String,
    ) {
        let layer = li.map(|i| f.layers[i].name.clone());
        self.push_at(fi, f, None, li, layer, rule, message);
    }

    /// Lint `rule` at `call` (with `layer` its layer's name) or at the fleet's own
    /// layer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_at(
        &mut self,
        fi: usize,
        f: &FleetConfig,
        call: Option<(CallAt, String)>,
        li: Option<usize>,
        layer: Option<String>,
        rule: &Rule,
        message: String,
    ) {
        let id = rule.id;
        let rule = LINTS.iter().position(|r| r.id == id).unwrap_or(LINTS.len());
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
pub(crate) fn lints(scn: &Scenario) -> Vec<Lint> {
    let mut found = Found { out: Vec::new() };
    for rule in &LINTS {
        (rule.check)(&mut found, scn);
    }
    let mut out = found.out;
    out.sort_by_key(|(key, _)| *key);
    out.into_iter().map(|(_, l)| l).collect()
}

/// Every retrying layer of every fleet: fleet index, fleet, layer index, layer.
fn retrying_layers(
    scn: &Scenario,
) -> impl Iterator<Item = (usize, &FleetConfig, usize, &LayerConfig)> {
    scn.fleets.iter().enumerate().flat_map(|(fi, f)| {
        f.layers
            .iter()
            .enumerate()
            .filter(|(_, l)| retries(l))
            .map(move |(li, l)| (fi, f, li, l))
    })
}

fn too_many_attempts(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        if l.max_attempts.limit().is_none_or(|n| n > MAX_ATTEMPTS) {
            let n = match l.max_attempts.limit() {
                None => "unlimited attempts per call".to_string(),
                Some(n) => format!("up to {n} attempts per call"),
            };
            found.push(
                fi,
                f,
                Some(li),
                &TOO_MANY_ATTEMPTS,
                format!(
                    "it makes {n} (more than {MAX_ATTEMPTS}), and every one is more load on a dependency that is already failing"
                ),
            );
        }
    }
}

fn multi_layer_without_budget(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        let bare: Vec<&LayerConfig> = f
            .layers
            .iter()
            .filter(|l| retries(l) && l.budget.is_none())
            .collect();
        if bare.len() < 2 {
            continue;
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
            &MULTI_LAYER_RETRIES_WITHOUT_BUDGET,
            format!(
                "layers {} all retry with no retry budget, so their attempts multiply to {} = {} dependency attempts per request when the dependency fails; let one layer own the retries or give each a budget",
                quoted_list(&names),
                factors.join(" × "),
                fmt_count(product)
            ),
        );
    }
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

fn unjittered(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let Some(what) = l.backoff.unjittered(l.max_attempts) else {
            continue;
        };
        let Some(who) = many_clients(f) else { continue };
        found.push(
            fi,
            f,
            Some(li),
            &UNJITTERED_BACKOFF_MANY_CLIENTS,
            format!(
                "{who} fail together, and with {what} they retry together, in waves that land on the dependency while it recovers; use full jitter"
            ),
        );
    }
}

fn timeout_at_or_below(f: &FleetConfig, li: usize) -> bool {
    f.layers[li..].iter().any(|l| l.attempt_timeout.is_some())
}

fn ambiguous_writes(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
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
                &RETRIES_AMBIGUOUS_WRITES,
                format!(
                    "{}% of requests are non-idempotent writes without idempotency keys and this layer retries their timeouts (retry_ambiguous_writes = true), but a timed-out write may already be applied, so the retry can apply it twice",
                    fmt_num(f.writes * 100.0)
                ),
            );
        }
    }
}

fn breaker_open(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        if !l.retry_on.contains(Class::BreakerOpen) {
            continue;
        }
        let source = if l.breaker.is_some_and(|b| b.placement == Placement::Inside) {
            "its own breaker (inside the retry loop)".to_string()
        } else if let Some(below) = f.layers[li + 1..].iter().find(|b| b.breaker.is_some()) {
            format!("the breaker of layer '{}' below", below.name)
        } else {
            continue;
        };
        found.push(
            fi,
            f,
            Some(li),
            &RETRIES_BREAKER_OPEN,
            format!(
                "it retries breaker_open, so calls refused by {source} are tried again instead of failing fast, spending attempts and backoff on a breaker that is protecting the dependency"
            ),
        );
    }
}

fn ignores_retry_after(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
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
        let Some(ra) = d.retry_after else { continue };
        if l.respect_retry_after
            || !l.retry_on.retries(rejection_class(status), d.reject_status)
            || d.servers.is_none()
            || d.queue_limit.is_none()
        {
            continue;
        }
        found.push(
            fi,
            f,
            Some(li),
            &IGNORES_RETRY_AFTER,
            format!(
                "{who} rejects with Retry-After {} when its queue is full, but this layer has respect_retry_after = false and retries on its own schedule, into a dependency that asked for a pause",
                fmt_time(ra)
            ),
        );
    }
}

fn backoff_exceeds_deadline(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let Some(deadline) = f.deadline else { continue };
        let sched = backoff_total(&l.backoff, l.max_attempts, 0);
        if sched.exceeds(deadline) {
            found.push(
                fi,
                f,
                Some(li),
                &BACKOFF_EXCEEDS_DEADLINE,
                format!(
                    "its backoff schedule can wait {} over {} retries, longer than the deadline of {}, so its last retries can only end in deadline_exceeded",
                    fmt_total(sched),
                    fmt_retries(l.max_attempts),
                    fmt_time(deadline)
                ),
            );
        }
    }
}

fn timeouts_exceed_deadline(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let (Some(deadline), Some(t)) = (f.deadline, l.attempt_timeout) else {
            continue;
        };
        let total = Bound::Finite(t) * l.max_attempts.bound();
        if total.exceeds(deadline) {
            found.push(
                fi,
                f,
                Some(li),
                &TIMEOUTS_EXCEED_DEADLINE,
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
}

fn no_attempt_timeout_under_deadline(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, _) in retrying_layers(scn) {
        let Some(deadline) = f.deadline else { continue };
        if !timeout_at_or_below(f, li) {
            found.push(
                fi,
                f,
                Some(li),
                &NO_ATTEMPT_TIMEOUT_UNDER_DEADLINE,
                format!(
                    "neither this layer nor any below it has an attempt_timeout, so one hung attempt (a blackhole, a long queue) holds the call until the deadline of {} and its retries never happen",
                    fmt_time(deadline)
                ),
            );
        }
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
    if !d.shedders().is_empty() {
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
        &OVERLOAD_WITHOUT_SHEDDING,
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
        for (i, r) in LINTS.iter().enumerate() {
            let id = r.id;
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
            for text in [r.why, r.fires_when] {
                assert!(!text.is_empty() && !text.ends_with('.'), "{id}");
                assert!(!text.contains('\n') && !text.contains('|'), "{id}");
            }
            assert!(LINTS[i + 1..].iter().all(|o| o.id != id), "{id} twice");
            assert_ne!(id, "all");
        }
    }

    #[test]
    fn the_rules_say_the_thresholds_the_checks_use() {
        assert!(TOO_MANY_ATTEMPTS
            .fires_when
            .contains(&format!("above {MAX_ATTEMPTS} ")));
        assert!(TOO_MANY_ATTEMPTS
            .why
            .contains(&format!("more than {MAX_ATTEMPTS} ")));
        assert!(UNJITTERED_BACKOFF_MANY_CLIENTS
            .fires_when
            .contains(&format!(
                "`clients` ≥ {MANY_CLIENTS}, or a burst of at least {MANY_CLIENTS} "
            )));
    }

    #[test]
    fn deny_all_and_repeats_resolve_once_in_table_order() {
        let got = resolve_deny(&[
            TOO_MANY_ATTEMPTS.id.into(),
            "all".into(),
            TOO_MANY_ATTEMPTS.id.into(),
        ])
        .unwrap();
        assert_eq!(got, LINTS.map(|r| r.id).to_vec());
        let err = resolve_deny(&["too-many".into()]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown lint \"too-many\""), "{msg}");
        assert!(msg.contains(OVERLOAD_WITHOUT_SHEDDING.id), "{msg}");
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn resolve_deny_example() {
        use crate::explain::lint::{resolve_deny, LINTS, TOO_MANY_ATTEMPTS};
        assert_eq!(
            resolve_deny(&["too-many-attempts".into()]).unwrap(),
            vec![TOO_MANY_ATTEMPTS.id]
        );
        assert_eq!(resolve_deny(&["all".into()]).unwrap().len(), LINTS.len());
        assert!(resolve_deny(&["no-such-lint".into()]).is_err());
    }
}
