//! The lints of a service graph: retries at several tiers of one path, and layers that
//! retry a callee's `overloaded` answers.

use crate::model::config::{
    CallConfig, FleetConfig, LayerConfig, OnFailure, Scenario, ServiceConfig,
};
use crate::model::outcome::Class;

use super::super::graph::{paths, Step};
use super::super::render::fmt_count;
use super::super::{retries, Bound};
use super::{Found, Rule};

/// Retries at more than one tier of a service graph's path, not all budgeted.
pub(crate) const RETRIES_AT_SEVERAL_TIERS: Rule = Rule {
    id: "retries-at-several-tiers",
    why: "more than one tier on a path of a service graph retries, not every one with a budget, so the attempts multiply tier by tier (4 × 4 × 4 = 64 at the database)",
    fires_when: "on a path of a service graph from a fleet to a service that calls nobody, more than one tier retries (a tier is the fleet's layers, or one call's layers; it retries when one of its layers does) and at least one retrying tier has a layer without a `budget`. One lint per fleet, naming the path with the largest product",
    check: several_tiers,
};

/// A layer retries a callee's `overloaded` answers.
pub(crate) const RETRIES_OVERLOADED: Rule = Rule {
    id: "retries-overloaded",
    why: "a layer retries a callee's overloaded answers, which mean \"overloaded; don't retry\", so tiers above the one that rejected retry too",
    fires_when: "a retrying fleet or call layer has `overloaded` in `retry_on` and a callee can answer overloaded (`on_failure = \"overloaded\"` or `overloaded_status = true`). A call's lint names the first fleet whose requests reach it; a call no fleet reaches is not linted",
    check: overloaded,
};

/// Most paths of one fleet examined for `retries-at-several-tiers`.
const MAX_LINTED_PATHS: usize = 4096;

/// The layers of the stack that called `step`'s service, and the stack's name.
fn stack<'a>(scn: &'a Scenario, f: &'a FleetConfig, step: &Step) -> (&'a [LayerConfig], String) {
    match step.stack {
        None => (&f.layers, format!("fleet '{}'", f.name)),
        Some((s, j)) => {
            let from = &scn.services[s];
            (&from.calls[j].layers, arrow(scn, s, step.service))
        }
    }
}

fn arrow(scn: &Scenario, from: usize, to: usize) -> String {
    format!("{} ─▶ {}", scn.services[from].name, scn.services[to].name)
}

/// A call as lints name it: `caller ─▶ callee` (a fan-out's callees joined by commas).
pub(super) fn call_label(scn: &Scenario, caller: &ServiceConfig, c: &CallConfig) -> String {
    let names: Vec<&str> =
        c.to.iter()
            .filter_map(|&k| scn.services.get(usize::from(k)))
            .map(|x| x.name.as_str())
            .collect();
    format!("{} ─▶ {}", caller.name, names.join(", "))
}

/// A path where several tiers retry: the path, its retrying tiers (name, attempts)
/// and the names of those without a budget.
type Offending<'a> = (&'a Vec<Step>, Vec<(String, String)>, Vec<String>);

/// `retries-at-several-tiers`: per fleet, the offending path with the largest product.
fn several_tiers(found: &mut Found, scn: &Scenario) {
    if !scn.graph {
        return;
    }
    for (fi, f) in scn.fleets.iter().enumerate() {
        let (all, _) = paths(scn, f, MAX_LINTED_PATHS);
        let mut worst: Option<Offending> = None;
        let mut offending = 0u64;
        for p in &all {
            let mut tiers = Vec::new();
            let mut bare = Vec::new();
            for step in p {
                let (layers, name) = stack(scn, f, step);
                let retrying: Vec<&LayerConfig> = layers.iter().filter(|l| retries(l)).collect();
                if retrying.is_empty() {
                    continue;
                }
                if retrying.iter().any(|l| l.budget.is_none()) {
                    bare.push(name.clone());
                }
                let n = layers
                    .iter()
                    .fold(Bound::Finite(1), |acc, l| acc * l.calls_below());
                tiers.push((name, fmt_count(n)));
            }
            if tiers.len() < 2 || bare.is_empty() {
                continue;
            }
            offending += 1;
            let total = p[p.len() - 1].attempts;
            if worst
                .as_ref()
                .is_none_or(|(w, ..)| total > w[w.len() - 1].attempts)
            {
                worst = Some((p, tiers, bare));
            }
        }
        let Some((p, tiers, bare)) = worst else {
            continue;
        };
        let route: Vec<&str> = p
            .iter()
            .map(|s| scn.services[s.service].name.as_str())
            .collect();
        let last = route[route.len() - 1];
        let factors: Vec<&str> = tiers.iter().map(|(_, n)| n.as_str()).collect();
        let names: Vec<String> = tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
        let others = match offending {
            1 => String::new(),
            n => format!(
                " ({} paths of this fleet do so; this one multiplies most)",
                n
            ),
        };
        found.push(
            fi,
            f,
            None,
            &RETRIES_AT_SEVERAL_TIERS,
            format!(
                "on the path {} → {}, {} tiers retry ({}), {}, so their attempts multiply to {} = {} attempts at '{last}' per request when it fails{others}; retry at one tier only (the one immediately above the failing service, answering overloaded above it), or give each retrying tier a budget",
                f.name,
                route.join(" → "),
                tiers.len(),
                names.join(", "),
                if bare.len() == tiers.len() {
                    "none with a retry budget".to_string()
                } else {
                    format!("{} without a retry budget", bare.join(", "))
                },
                factors.join(" × "),
                fmt_count(p[p.len() - 1].attempts),
            ),
        );
    }
}

/// Why `s` can answer overloaded, if it can.
fn answers_overloaded(s: &ServiceConfig) -> Option<&'static str> {
    if s.on_failure == OnFailure::Overloaded {
        Some("answers a failed request overloaded (on_failure = \"overloaded\")")
    } else if s.overloaded_status {
        Some("answers a capacity rejection overloaded (overloaded_status = true)")
    } else {
        None
    }
}

fn retries_overloaded(l: &LayerConfig) -> bool {
    retries(l) && l.retry_on.contains(Class::Overloaded)
}

fn message(callee: &str, why: &str) -> String {
    format!(
        "service '{callee}' {why}, which means \"overloaded; don't retry\", but this layer has overloaded in retry_on, so it retries into a tier that is already rejecting and the attempts multiply again; leave overloaded out of retry_on so only the layer immediately above the rejecting tier retries"
    )
}

/// Which services the fleet's requests reach.
pub(super) fn reached(scn: &Scenario, f: &FleetConfig) -> Vec<bool> {
    let mut seen = vec![false; scn.services.len()];
    let mut todo = vec![usize::from(f.target)];
    while let Some(s) = todo.pop() {
        if s >= seen.len() || seen[s] {
            continue;
        }
        seen[s] = true;
        for c in &scn.services[s].calls {
            todo.extend(c.to.iter().map(|&k| usize::from(k)));
        }
    }
    seen
}

/// `retries-overloaded`: fleet layers calling their target, and call layers calling
/// their callees, that retry overloaded answers a callee can give.
fn overloaded(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        let Some(t) = scn.services.get(usize::from(f.target)) else {
            continue;
        };
        let Some(why) = answers_overloaded(t) else {
            continue;
        };
        for (li, l) in f.layers.iter().enumerate() {
            if retries_overloaded(l) {
                found.push(fi, f, Some(li), &RETRIES_OVERLOADED, message(&t.name, why));
            }
        }
    }
    // Each call once, on the first fleet that reaches it.
    let reach: Vec<Vec<bool>> = scn.fleets.iter().map(|f| reached(scn, f)).collect();
    for (si, s) in scn.services.iter().enumerate() {
        let Some(fi) = reach.iter().position(|r| r.get(si) == Some(&true)) else {
            continue;
        };
        let f = &scn.fleets[fi];
        for (j, c) in s.calls.iter().enumerate() {
            let Some((callee, why)) = c.to.iter().find_map(|&k| {
                let callee = scn.services.get(usize::from(k))?;
                Some((callee, answers_overloaded(callee)?))
            }) else {
                continue;
            };
            let call = call_label(scn, s, c);
            for (li, l) in c.layers.iter().enumerate() {
                if retries_overloaded(l) {
                    found.push_at(
                        fi,
                        f,
                        Some(((si, j), call.clone())),
                        Some(li),
                        Some(l.name.clone()),
                        &RETRIES_OVERLOADED,
                        message(&callee.name, why),
                    );
                }
            }
        }
    }
}
