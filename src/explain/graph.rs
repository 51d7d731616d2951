//! The service graph in numbers: each service's capacity and its calls (each a stack of
//! retry layers, explained like a fleet's), and the worst-case attempts at every
//! service per logical request of a fleet.
//!
//! A logical request enters the fleet's `target` through the fleet's layers; every
//! attempt a service serves makes each of its calls, and a call makes up to the product
//! of its layers' `max_attempts` attempts at each callee (a fan-out calls every callee
//! through its own copy of the layers). So along one path from the target the attempts
//! multiply, and a service reached by several paths sees their sum:
//!
//! ```text
//! fleet ×4 ─▶ frontend ─×4─▶ backend ─×4─▶ db        frontend 4 → backend 16 → db 64
//! ```
//!
//! These are bounds (every attempt fails, every call is made), not predictions.

use crate::model::config::{FleetConfig, Join, OnFailure, Scenario};

use super::{
    backoff_per_call, explain_dependency, explain_layers, rejection_class, sustained_attempts,
    worst_case_attempts, Bound, Callee, DependencyExplanation, LayerExplanation,
};

/// Most paths a fleet's explanation lists (their count is always given).
pub(crate) const MAX_PATHS: usize = 32;

/// One service of the graph in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceExplanation {
    /// Service name.
    pub name: String,
    /// Its capacity (servers, queue, service time, rejections).
    pub capacity: DependencyExplanation,
    /// Whether a thread is held for the whole request, downstream calls included.
    pub hold_threads: bool,
    /// How a failed request is answered.
    pub on_failure: OnFailure,
    /// Whether a capacity rejection is answered `overloaded`.
    pub overloaded_status: bool,
    /// Its calls, in order.
    pub calls: Vec<CallExplanation>,
}

impl ServiceExplanation {
    /// Whether the service can answer `overloaded`: `on_failure = "overloaded"` or
    /// `overloaded_status = true`.
    pub fn answers_overloaded(&self) -> bool {
        self.on_failure == OnFailure::Overloaded || self.overloaded_status
    }
}

/// One call of a service in numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct CallExplanation {
    /// The callees (more than one: a fan-out).
    pub to: Vec<String>,
    /// When a fan-out succeeds.
    pub join: Join,
    /// Whether the callees still going are cancelled once the join is decided.
    pub cancel_rest: bool,
    /// Whether the remaining deadline travels with the call's attempts.
    pub propagate_deadline: bool,
    /// The call's layers, outermost first.
    pub layers: Vec<LayerExplanation>,
    /// Product of the layers' `max_attempts`: attempts at each callee per call when
    /// every attempt fails.
    pub worst_case_attempts: Bound,
    /// Attempts per call once every budget is spent in a sustained total failure;
    /// `None` without budgets.
    pub sustained_attempts: Option<f64>,
    /// The longest total backoff of one call across its layers.
    pub backoff_per_call: Bound,
}

/// The worst-case attempts at one service per logical request of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAttempts {
    /// Service name.
    pub service: String,
    /// Attempts per logical request when every attempt fails, summed over the paths.
    pub attempts: Bound,
    /// How many paths from the fleet reach it.
    pub paths: Bound,
}

/// One service on one path, with the worst-case attempts along that path alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// Service name.
    pub service: String,
    /// The product of `max_attempts` from the fleet's layers to this service.
    pub attempts: Bound,
}

/// Explains every service of the scenario, in file order.
pub(crate) fn explain_services(scn: &Scenario) -> Vec<ServiceExplanation> {
    let capacities: Vec<DependencyExplanation> = scn
        .services
        .iter()
        .map(|s| explain_dependency(&s.capacity, rejection_class(s.overloaded_status)))
        .collect();
    scn.services
        .iter()
        .zip(&capacities)
        .map(|(s, capacity)| ServiceExplanation {
            name: s.name.clone(),
            capacity: capacity.clone(),
            hold_threads: s.hold_threads,
            on_failure: s.on_failure,
            overloaded_status: s.overloaded_status,
            calls: s
                .calls
                .iter()
                .map(|c| {
                    let callees: Vec<Callee> =
                        c.to.iter()
                            .filter_map(|&k| {
                                let k = usize::from(k);
                                Some(Callee {
                                    explained: capacities.get(k)?,
                                    config: &scn.services.get(k)?.capacity,
                                    overloaded_status: scn.services[k].overloaded_status,
                                })
                            })
                            .collect();
                    let layers = explain_layers(&c.layers, &callees);
                    CallExplanation {
                        to: c.to.iter().map(|&k| name(scn, usize::from(k))).collect(),
                        join: c.join,
                        cancel_rest: c.cancel_rest,
                        propagate_deadline: c.propagate_deadline,
                        worst_case_attempts: worst_case_attempts(&c.layers),
                        sustained_attempts: sustained_attempts(&layers),
                        backoff_per_call: backoff_per_call(&layers),
                        layers,
                    }
                })
                .collect(),
        })
        .collect()
}

fn name(scn: &Scenario, i: usize) -> String {
    scn.services
        .get(i)
        .map_or_else(String::new, |s| s.name.clone())
}

/// The callees of service `s`: (call index, callee index), in call order.
fn edges(scn: &Scenario, s: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    scn.services[s]
        .calls
        .iter()
        .enumerate()
        .flat_map(|(j, c)| c.to.iter().map(move |&k| (j, usize::from(k))))
        .filter(|&(_, k)| k < scn.services.len())
}

/// The services in an order where every caller comes before its callees (file order
/// among independent ones). The graph is acyclic (validation refuses cycles).
pub(crate) fn topological(scn: &Scenario) -> Vec<usize> {
    fn visit(scn: &Scenario, s: usize, done: &mut [bool], post: &mut Vec<usize>) {
        done[s] = true;
        let next: Vec<usize> = edges(scn, s).map(|(_, k)| k).collect();
        for k in next.into_iter().rev() {
            if !done[k] {
                visit(scn, k, done, post);
            }
        }
        post.push(s);
    }
    let n = scn.services.len();
    let mut done = vec![false; n];
    let mut post = Vec::with_capacity(n);
    for s in (0..n).rev() {
        if !done[s] {
            visit(scn, s, &mut done, &mut post);
        }
    }
    post.reverse();
    post
}

/// The worst-case attempts of one fleet at every service it reaches.
pub(crate) struct Reach {
    pub(crate) per_service: Vec<ServiceAttempts>,
    pub(crate) paths: Vec<Vec<Hop>>,
    pub(crate) path_count: Bound,
}

/// One step of a path: the service reached, the stack of layers that called it
/// (`None`: the fleet's layers; `Some((s, j))`: call `j` of service `s`), and the
/// product of `max_attempts` from the fleet to it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub(crate) service: usize,
    pub(crate) stack: Option<(usize, usize)>,
    pub(crate) attempts: Bound,
}

/// The paths of fleet `f` from its target to a service that calls nobody, the first
/// `limit` of them in call order, and how many there are in all.
pub(crate) fn paths(scn: &Scenario, f: &FleetConfig, limit: usize) -> (Vec<Vec<Step>>, Bound) {
    let t = usize::from(f.target);
    if t >= scn.services.len() {
        return (Vec::new(), Bound::Finite(0));
    }
    // Paths from each service down to a leaf, callees first.
    let mut below = vec![Bound::Finite(0); scn.services.len()];
    for &s in topological(scn).iter().rev() {
        let mut n = Bound::Finite(0);
        let mut any = false;
        for (_, k) in edges(scn, s) {
            any = true;
            n = n + below[k];
        }
        below[s] = if any { n } else { Bound::Finite(1) };
    }
    let mut out = Vec::new();
    let mut path = vec![Step {
        service: t,
        stack: None,
        attempts: worst_case_attempts(&f.layers),
    }];
    walk(scn, &mut path, &mut out, limit);
    (out, below[t])
}

fn walk(scn: &Scenario, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    let last = path[path.len() - 1];
    let mut leaf = true;
    for (j, k) in edges(scn, last.service) {
        leaf = false;
        let call = &scn.services[last.service].calls[j];
        path.push(Step {
            service: k,
            stack: Some((last.service, j)),
            attempts: last.attempts * worst_case_attempts(&call.layers),
        });
        walk(scn, path, out, limit);
        path.pop();
        if out.len() >= limit {
            return;
        }
    }
    if leaf {
        out.push(path.clone());
    }
}

/// The worst-case attempts of fleet `f` at every service, summed over paths (one pass
/// in topological order, so a DAG with many paths costs nothing more).
pub(crate) fn reach(scn: &Scenario, f: &FleetConfig) -> Reach {
    let n = scn.services.len();
    let t = usize::from(f.target);
    let mut attempts = vec![Bound::Finite(0); n];
    let mut count = vec![Bound::Finite(0); n];
    if t < n {
        attempts[t] = worst_case_attempts(&f.layers);
        count[t] = Bound::Finite(1);
    }
    let order = topological(scn);
    for &s in &order {
        if count[s] == Bound::Finite(0) {
            continue;
        }
        for (j, k) in edges(scn, s) {
            let per_call = worst_case_attempts(&scn.services[s].calls[j].layers);
            attempts[k] = attempts[k] + attempts[s] * per_call;
            count[k] = count[k] + count[s];
        }
    }
    let per_service = order
        .iter()
        .filter(|&&s| count[s] != Bound::Finite(0))
        .map(|&s| ServiceAttempts {
            service: name(scn, s),
            attempts: attempts[s],
            paths: count[s],
        })
        .collect();
    let (steps, path_count) = paths(scn, f, MAX_PATHS);
    Reach {
        per_service,
        paths: steps
            .iter()
            .map(|p| {
                p.iter()
                    .map(|st| Hop {
                        service: name(scn, st.service),
                        attempts: st.attempts,
                    })
                    .collect()
            })
            .collect(),
        path_count,
    }
}
