//! The text of a service graph: each service with its capacity and its calls drawn as
//! arrows `frontend ─▶ backend` with their layers (rendered as a fleet's are), and per
//! fleet the worst-case attempts at every service as a chain.

use std::fmt::Write;

use crate::model::config::{Join, OnFailure};

use super::graph::{CallExplanation, Hop, ServiceExplanation};
use super::render::{
    attempts, attempts_noun, fmt_count, fmt_num, fmt_time, plural, render_dependency, render_layer,
};
use super::{Bound, Explanation, FleetExplanation};

/// A worst-case count as the chain prints it: unlimited attempts (or more than `u64`)
/// is "unlimited".
fn count(b: Bound) -> String {
    match b {
        Bound::Finite(n) => n.to_string(),
        Bound::Unbounded => "unlimited".to_string(),
    }
}

/// The services in file order, then which one the whole-run columns describe.
pub(super) fn render_services(o: &mut String, e: &Explanation) {
    for s in &e.services {
        render_service(o, s);
    }
    let who = match e.fleets.first() {
        Some(f) => format!("the one fleet '{}' calls", f.name),
        None => "the first service".to_string(),
    };
    let cap = match e.dependency.capacity {
        Some(c) => format!("capacity {} attempts/s", fmt_num(c)),
        None => "no capacity limit".to_string(),
    };
    let _ = writeln!(
        o,
        "the dependency (the whole-run columns and the load below) is service '{}', {who}: {cap}",
        e.dependency_service
    );
}

fn render_service(o: &mut String, s: &ServiceExplanation) {
    render_dependency(o, &format!("service '{}'", s.name), &s.capacity);
    let threads = if s.hold_threads {
        "holds a thread for the whole request, its calls and their backoff included"
    } else {
        "holds a thread only for its own work (asynchronous calls)"
    };
    let failure = match s.on_failure {
        OnFailure::Error => "error",
        OnFailure::Overloaded => "overloaded",
    };
    let rejection = if !s.capacity.can_reject {
        String::new()
    } else if s.overloaded_status {
        "; a capacity rejection is answered overloaded".to_string()
    } else {
        format!(
            "; a capacity rejection is answered rejected ({})",
            s.capacity.reject_status
        )
    };
    let _ = writeln!(
        o,
        "  {threads}; a failed request is answered {failure}{rejection}"
    );
    if s.calls.is_empty() {
        o.push_str("  calls nobody\n");
    }
    for c in &s.calls {
        render_call(o, &s.name, c);
    }
}

fn render_call(o: &mut String, from: &str, c: &CallExplanation) {
    let mut notes = Vec::new();
    if c.to.len() > 1 {
        let join = match c.join {
            Join::All => "join all (every callee must succeed)".to_string(),
            Join::Any => "join any (one success is enough)".to_string(),
            Join::Quorum(k) => format!("join quorum {k} of {}", c.to.len()),
        };
        let rest = if c.cancel_rest {
            "the rest cancelled once the join is decided"
        } else {
            "the rest left running once the join is decided"
        };
        notes.push(format!("fan-out, {join}, {rest}"));
    }
    notes.push(
        if c.propagate_deadline {
            "remaining deadline propagated"
        } else {
            "deadline not propagated"
        }
        .to_string(),
    );
    let _ = writeln!(o, "  {from} ─▶ {}: {}", c.to.join(", "), notes.join("; "));
    let per = if c.to.len() > 1 {
        "per call at each callee"
    } else {
        "per call"
    };
    if c.layers.is_empty() {
        let _ = writeln!(o, "    no retry layers: 1 attempt {per}");
        return;
    }
    // The fleet's layer text, two spaces deeper.
    let mut inner = String::from("  layers, top first:\n");
    for l in &c.layers {
        render_layer(&mut inner, l, "per call");
    }
    for line in inner.lines() {
        let _ = writeln!(o, "  {line}");
    }
    let total = fmt_count(c.worst_case_attempts);
    if c.layers.len() == 1 {
        let _ = writeln!(o, "    {} {per} (worst case)", attempts_noun(&total));
    } else {
        let factors: Vec<String> = c.layers.iter().map(|l| attempts(l.max_attempts)).collect();
        let _ = writeln!(
            o,
            "    {} = {} {per} (worst case)",
            factors.join(" × "),
            attempts_noun(&total)
        );
    }
    if let Some(s) = c.sustained_attempts {
        let _ = writeln!(
            o,
            "    once the budgets are spent in a sustained total failure: {} {per}",
            attempts_noun(&fmt_num(s))
        );
    }
    let wait = match c.backoff_per_call {
        Bound::Finite(n) => format!("at most {} in all", fmt_time(n)),
        Bound::Unbounded => "without bound".to_string(),
    };
    let _ = writeln!(o, "    backoff: a call can wait {wait} across its layers");
}

fn chain(hops: &[Hop]) -> String {
    hops.iter()
        .map(|h| format!("{} {}", h.service, count(h.attempts)))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The fleet's target and deadline propagation, then its worst-case attempts at every
/// service: one chain when the graph below it is a chain, else each path and, when a
/// service is reached by more than one path (or paths are left out), the sums.
pub(super) fn render_fleet_graph(o: &mut String, f: &FleetExplanation) {
    let _ = writeln!(
        o,
        "  calls service '{}', {}",
        f.target,
        if f.propagate_deadline {
            "remaining deadline propagated"
        } else {
            "deadline not propagated"
        }
    );
    let linear = f.path_count == Bound::Finite(1)
        && f.paths.len() == 1
        && f.paths[0].len() == f.per_service.len();
    if linear {
        let _ = writeln!(
            o,
            "  worst case per request of fleet '{}': {}",
            f.name,
            chain(&f.paths[0])
        );
        return;
    }
    let _ = writeln!(
        o,
        "  worst case per request of fleet '{}', {}:",
        f.name,
        match f.path_count {
            Bound::Finite(n) => plural(n, "path", "paths"),
            Bound::Unbounded => "more paths than can be counted".to_string(),
        }
    );
    for p in &f.paths {
        let _ = writeln!(o, "    {}", chain(p));
    }
    let listed = Bound::Finite(f.paths.len() as u64);
    if f.path_count != listed {
        let more = match f.path_count {
            Bound::Finite(n) => (n - f.paths.len() as u64).to_string(),
            Bound::Unbounded => "many".to_string(),
        };
        let _ = writeln!(o, "    … and {more} more");
    }
    if f.path_count != listed || f.per_service.iter().any(|s| s.paths != Bound::Finite(1)) {
        let sums: Vec<String> = f
            .per_service
            .iter()
            .map(|s| {
                if s.paths == Bound::Finite(1) {
                    format!("{} {}", s.service, count(s.attempts))
                } else {
                    format!(
                        "{} {} (over {} paths)",
                        s.service,
                        count(s.attempts),
                        count(s.paths)
                    )
                }
            })
            .collect();
        let _ = writeln!(o, "    in all: {}", sums.join(", "));
    }
}
