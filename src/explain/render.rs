//! The human text of an [`Explanation`]: the dependency, then each fleet, then the lints.

use std::fmt::Write;

use crate::engine::Nanos;
use crate::model::config::Attempts;
use crate::model::outcome::Class;

use super::{Bound, DependencyExplanation, Explanation, FleetExplanation, LayerExplanation, Load};

pub(crate) use crate::model::text::{
    fmt_count, fmt_duration, fmt_num, fmt_time, fmt_time_f, fmt_total, plural, quoted_list,
};

pub(super) fn attempts(n: Attempts) -> String {
    n.to_string()
}

/// "1 attempt", "3 attempts", "unlimited attempts", "unbounded attempts".
pub(super) fn attempts_noun(count: &str) -> String {
    if count == "1" {
        "1 attempt".to_string()
    } else {
        format!("{count} attempts")
    }
}

fn versus_deadline(deadline: Option<Nanos>) -> String {
    match deadline {
        Some(d) => format!("against the deadline of {}", fmt_time(d)),
        None => "with no deadline".to_string(),
    }
}

impl Explanation {
    /// The explanation as text: the dependency's capacity, then per fleet the offered
    /// load, the layer stack with its worst-case attempts, budget caps and backoff
    /// against the deadline, then the lints. Deterministic.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let against = if self.graph {
            format!(
                "a graph of {}",
                plural(self.services.len() as u64, "service", "services")
            )
        } else {
            "one dependency".to_string()
        };
        let _ = writeln!(
            o,
            "scenario '{}': {} against {against}, {} of arrivals",
            self.name,
            plural(self.fleets.len() as u64, "fleet", "fleets"),
            fmt_time(self.duration)
        );
        o.push('\n');
        if self.graph {
            super::render_graph::render_services(&mut o, self);
        } else {
            render_dependency(&mut o, "dependency", &self.dependency);
        }
        if let Some(c) = self.dependency.capacity {
            let _ = writeln!(
                o,
                "offered load (open and burst fleets, first attempts): {} requests/s on average, {}/s at peak = {}% of capacity",
                fmt_num(self.offered_mean),
                fmt_num(self.offered_peak),
                fmt_num(self.offered_peak / c * 100.0)
            );
        } else {
            let _ = writeln!(
                o,
                "offered load (open and burst fleets, first attempts): {} requests/s on average, {}/s at peak",
                fmt_num(self.offered_mean),
                fmt_num(self.offered_peak)
            );
        }
        for f in &self.fleets {
            o.push('\n');
            if self.graph {
                let dep = self
                    .services
                    .iter()
                    .find(|s| s.name == f.target)
                    .map_or(&self.dependency, |s| &s.capacity);
                let at = format!("'{}'", f.target);
                render_fleet(&mut o, f, dep, &at);
                super::render_graph::render_fleet_graph(&mut o, f);
            } else {
                render_fleet(&mut o, f, &self.dependency, "the dependency");
            }
        }
        o.push('\n');
        if self.lints.is_empty() {
            o.push_str("lints: none\n");
        } else {
            let _ = writeln!(o, "lints: {}", self.lints.len());
            for l in &self.lints {
                let _ = writeln!(o, "  {l}");
            }
        }
        o
    }
}

/// The capacity of one service, `label` naming it (`dependency`, `service 'db'`).
pub(super) fn render_dependency(o: &mut String, label: &str, d: &DependencyExplanation) {
    let mean = fmt_time_f(d.mean_service_ns);
    match (d.servers, d.capacity) {
        (Some(s), Some(c)) => {
            let _ = writeln!(
                o,
                "{label}: {} / mean service time {mean} = capacity {} attempts/s",
                plural(u64::from(s), "server", "servers"),
                fmt_num(c)
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "{label}: unlimited servers, mean service time {mean}: no capacity limit"
            );
        }
    }
    if let Some(m) = &d.measured_service {
        let _ = writeln!(o, "  service time {m}");
    }
    if let Some(cc) = d.congested_capacity {
        let _ = writeln!(
            o,
            "  per_concurrent {}: with every server busy an attempt takes longer, and capacity falls to {} attempts/s",
            fmt_time(d.per_concurrent),
            fmt_num(cc)
        );
    }
    let queue = match d.queue_limit {
        Some(q) => format!("queue limit {q}"),
        None => "unlimited queue".to_string(),
    };
    let reject = if d.can_reject {
        match d.retry_after {
            Some(ra) => format!(
                "; a full queue rejects with {} and Retry-After {}",
                d.reject_status,
                fmt_time(ra)
            ),
            None => format!(
                "; a full queue rejects with {}, no Retry-After",
                d.reject_status
            ),
        }
    } else if d.sheds.iter().any(|s| *s != "drop_expired") {
        "; the queue never rejects".to_string()
    } else {
        "; never rejects".to_string()
    };
    let shed = match d.sheds.as_slice() {
        [] => "sheds nothing".to_string(),
        [one] => format!("sheds load: {one}"),
        [init @ .., last] => format!("sheds load: {} and {last}", init.join(", ")),
    };
    let _ = writeln!(o, "  {queue}{reject}; {shed}");
    if let Some(l) = &d.concurrency_limit {
        let _ = writeln!(
            o,
            "  concurrency_limit, first on arrival (in flight = in service + queued; refusals are rate_limited): {l}"
        );
    }
    if let Some(a) = &d.admission {
        let _ = writeln!(o, "  admission, before the queue: {a}");
    }
    if let Some(s) = &d.shed_by_criticality {
        let _ = writeln!(o, "  {s}");
    }
    if let Some(q) = &d.queue_policy {
        let _ = writeln!(o, "  queue_policy: {q}");
    }
    if d.reject_cost > 0 {
        let _ = writeln!(
            o,
            "  reject_cost {}: each rejection (by the limiter or a full queue) holds a server that long, ahead of the queue, before its answer leaves",
            fmt_time(d.reject_cost)
        );
    }
}

/// One fleet; `at` names the service it calls in the worst-case line.
fn render_fleet(o: &mut String, f: &FleetExplanation, dep: &DependencyExplanation, at: &str) {
    let deadline = match f.deadline {
        Some(d) => format!("deadline {}", fmt_time(d)),
        None => "no deadline".to_string(),
    };
    let writes = if f.writes > 0.0 {
        format!(
            ", {}% non-idempotent writes {}",
            fmt_num(f.writes * 100.0),
            if f.idempotency_keys {
                "with idempotency keys"
            } else {
                "without idempotency keys"
            }
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "fleet '{}': {} arrivals, {}, {deadline}{writes}",
        f.name,
        f.arrival,
        plural(f.clients, "client", "clients")
    );
    if let Some(c) = f.criticality {
        let _ = writeln!(o, "  {}", c.describe_fleet());
    }
    if let Some(q) = &f.queue {
        for line in q.lines() {
            let _ = writeln!(o, "  {line}");
        }
    }
    render_load(o, f, dep);
    if f.layers.is_empty() {
        let bound = match f.deadline {
            Some(_) => "bounded in time by the deadline",
            None => "unbounded in time without a deadline",
        };
        let _ = writeln!(o, "  no retry layers: 1 attempt per request, {bound}");
        return;
    }
    o.push_str("  layers, top first:\n");
    for l in &f.layers {
        render_layer(o, l, &versus_deadline(f.deadline));
    }
    for line in f.guards.lines() {
        let _ = writeln!(o, "  {line}");
    }
    let factors: Vec<String> = f
        .layers
        .iter()
        .map(|l| match l.hedging {
            Some(h) => h.max_attempts.to_string(),
            None => attempts(l.max_attempts),
        })
        .collect();
    let total = fmt_count(f.worst_case_attempts);
    if f.layers.len() == 1 {
        let _ = writeln!(o, "  {} per request (worst case)", attempts_noun(&total));
    } else {
        let _ = writeln!(
            o,
            "  {} = {} per request (worst case)",
            factors.join(" × "),
            attempts_noun(&total)
        );
    }
    if let (Some(rate), Some(c)) = (f.load.counted_rate(), dep.capacity) {
        match f.worst_case_attempts {
            Bound::Finite(n) => {
                let inbound = n as f64 * rate;
                let _ = writeln!(
                    o,
                    "  if every attempt fails: {n} × {}/s = {} attempts/s at {at}, {}% of capacity",
                    fmt_num(rate),
                    fmt_num(inbound),
                    fmt_num(inbound / c * 100.0)
                );
            }
            Bound::Unbounded => {
                let _ = writeln!(
                    o,
                    "  if every attempt fails: no bound on the attempts at {at}"
                );
            }
        }
    }
    if let Some(s) = f.sustained_attempts {
        let factors: Vec<String> = f
            .layers
            .iter()
            .map(|l| match &l.budget {
                Some(b) => fmt_num(b.sustained_attempts(l.max_attempts)),
                None => attempts(l.max_attempts),
            })
            .collect();
        let product = if factors.len() == 1 {
            String::new()
        } else {
            format!("{} = ", factors.join(" × "))
        };
        let _ = writeln!(
            o,
            "  once the budgets are spent in a sustained total failure: {product}{} per request",
            attempts_noun(&fmt_num(s))
        );
    }
    let wait = match f.backoff_per_request {
        Bound::Finite(n) => format!("at most {} in all", fmt_time(n)),
        Bound::Unbounded => "without bound".to_string(),
    };
    let _ = writeln!(
        o,
        "  backoff: a request can wait {wait} across its layers, {}",
        versus_deadline(f.deadline)
    );
}

fn render_load(o: &mut String, f: &FleetExplanation, dep: &DependencyExplanation) {
    let util = |rate: f64| match dep.capacity {
        Some(c) => format!(
            " against a capacity of {} attempts/s: {}% utilisation",
            fmt_num(c),
            fmt_num(rate / c * 100.0)
        ),
        None => String::new(),
    };
    if let Some(text) = &f.recorded {
        let _ = writeln!(o, "  {text}");
    }
    match f.load {
        Load::Open { mean, peak } => {
            if f.load_profile {
                let _ = writeln!(
                    o,
                    "  offered load: {} requests/s on average, {}/s at peak{}{}",
                    fmt_num(mean),
                    fmt_num(peak),
                    util(peak),
                    if dep.capacity.is_some() {
                        " at peak"
                    } else {
                        ""
                    }
                );
            } else {
                let _ = writeln!(
                    o,
                    "  offered load: {} requests/s{}",
                    fmt_num(peak),
                    util(peak)
                );
            }
        }
        Load::Burst { count, at, mean } => {
            let work = match dep.capacity {
                Some(c) if c > 0.0 => {
                    format!(", {}s of work at full capacity", fmt_num(count as f64 / c))
                }
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "  offered load: a burst of {count} requests at {}{work}; {} requests/s averaged over the run{}",
                fmt_time(at),
                fmt_num(mean),
                util(mean)
            );
        }
        Load::Closed { clients, max_rate } => {
            let rate = match max_rate {
                Some(r) => format!(", at most {clients} / mean think time = {}/s", fmt_num(r)),
                None => String::new(),
            };
            let _ = writeln!(
                o,
                "  offered load: closed loop, at most {clients} requests in flight{rate} (self-limiting)"
            );
            if let Some(m) = &f.measured_think {
                let _ = writeln!(o, "  think time {m}");
            }
        }
    }
}

/// One layer; `versus` ends its timeout and backoff lines ("against the deadline of 2s").
pub(super) fn render_layer(o: &mut String, l: &LayerExplanation, versus: &str) {
    let mut classes: Vec<&str> = Class::FAILURES
        .iter()
        .filter(|c| l.retry_on.contains(**c))
        .map(|c| c.name())
        .collect();
    if l.retry_on.has_rejected_5xx() && !l.retry_on.contains(Class::Rejected) {
        classes.insert(0, "rejected_5xx (503, not 429)");
    }
    let retry = if !l.retries {
        "no retries".to_string()
    } else {
        format!("retries {}", classes.join(", "))
    };
    let _ = writeln!(
        o,
        "    {}: {}, {retry}",
        l.name,
        attempts_noun(&attempts(l.max_attempts))
    );
    render_presets(o, l);
    if let Some(m) = &l.measured_hop {
        let _ = writeln!(o, "      hop latency {m}");
    }
    if let Some(h) = l.hedging {
        let _ = writeln!(o, "      {}", h.describe());
    }
    if let Some(c) = l.retry_criticality {
        let _ = writeln!(o, "      {}", c.describe_retries());
    }
    match (l.attempt_timeout, l.timeouts_total) {
        (Some(t), Some(total)) => {
            let _ = writeln!(
                o,
                "      attempt timeout {}: {} × {} = {}, {}",
                fmt_time(t),
                attempts(l.max_attempts),
                fmt_time(t),
                fmt_duration(total),
                versus
            );
        }
        _ => o.push_str("      no attempt timeout\n"),
    }
    if let Some(t) = l.total_timeout {
        let _ = writeln!(
            o,
            "      total timeout {}: a call ends then, attempts and backoff included, {versus}",
            fmt_time(t),
        );
    }
    if l.retries {
        render_backoff(o, l, versus);
    }
    if let Some(lim) = &l.limiter {
        let _ = writeln!(
            o,
            "      limiter ({}): {}",
            plural(l.instances, "instance", "instances"),
            lim.describe()
        );
    }
    if let Some(c) = &l.concurrency_limit {
        let _ = writeln!(
            o,
            "      concurrency_limit ({}): {}",
            plural(l.instances, "instance", "instances"),
            crate::model::concurrency::client::describe(c)
        );
    }
    if let Some(b) = &l.budget {
        let _ = writeln!(
            o,
            "      budget ({}): {}",
            plural(l.instances, "instance", "instances"),
            b.describe(l.instances)
        );
    }
    if let Some(b) = &l.breaker {
        let _ = writeln!(
            o,
            "      breaker ({}): {}",
            plural(l.instances, "instance", "instances"),
            b.describe()
        );
    }
}

fn render_backoff(o: &mut String, l: &LayerExplanation, versus: &str) {
    let mut waits: Vec<String> = l.first_waits.iter().map(|w| fmt_time(*w)).collect();
    let more = l
        .max_attempts
        .limit()
        .is_none_or(|n| u64::from(n) > waits.len() as u64 + 1);
    if more {
        waits.push("…".to_string());
    }
    let _ = writeln!(
        o,
        "      backoff {}: waits at most {}: {}, {versus}",
        l.backoff.describe(),
        waits.join(", "),
        fmt_total(l.backoff_total),
    );
    if let (Some(ra), Some(total)) = (l.retry_after, l.backoff_total_with_retry_after) {
        let _ = writeln!(
            o,
            "      after a rejection it waits at least the Retry-After of {}: {}",
            fmt_time(ra),
            match total {
                Bound::Finite(n) => format!("up to {} in all", fmt_time(n)),
                Bound::Unbounded => "without bound".to_string(),
            }
        );
    }
}

/// The preset lines of a layer: what its named preset, or its parts' presets, resolve to.
fn render_presets(o: &mut String, l: &LayerExplanation) {
    if let Some(name) = &l.preset {
        let mut parts = vec![match l.capped_from {
            Some(from) => format!(
                "max_attempts {} (capped from {})",
                attempts(l.max_attempts),
                attempts(from)
            ),
            None => format!("max_attempts {}", attempts(l.max_attempts)),
        }];
        parts.push(format!("backoff {}", l.backoff.short()));
        if let Some(b) = &l.budget {
            parts.push(format!("budget {}", b.short()));
        }
        if let Some(b) = &l.breaker {
            parts.push(format!("breaker {}", b.short()));
        }
        if let Some(lim) = &l.limiter {
            parts.push(format!("limiter {}", lim.short()));
        }
        if let Some(t) = l.total_timeout {
            parts.push(format!("total timeout {}", fmt_time(t)));
        }
        let _ = writeln!(o, "      preset {name} → {}", parts.join(", "));
    } else if let Some(from) = l.capped_from {
        let _ = writeln!(
            o,
            "      max_attempts {} capped from {} by max_attempts_cap",
            attempts(l.max_attempts),
            attempts(from)
        );
    }
    let p = &l.part_presets;
    if let Some(name) = &p.backoff {
        let _ = writeln!(o, "      backoff preset {name} → {}", l.backoff.short());
    }
    if let (Some(name), Some(b)) = (&p.budget, &l.budget) {
        let _ = writeln!(o, "      budget preset {name} → {}", b.short());
    }
    if let (Some(name), Some(b)) = (&p.breaker, &l.breaker) {
        let _ = writeln!(o, "      breaker preset {name} → {}", b.short());
    }
    if let (Some(name), Some(lim)) = (&p.limiter, &l.limiter) {
        let _ = writeln!(o, "      limiter preset {name} → {}", lim.short());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_drop_needless_decimals() {
        assert_eq!(fmt_num(27.0), "27");
        assert_eq!(fmt_num(1.2), "1.2");
        assert_eq!(fmt_num(3.6000000001), "3.6");
        assert_eq!(fmt_num(10.85), "10.8");
        assert_eq!(fmt_num(526.3), "526");
        assert_eq!(fmt_num(0.1), "0.1");
        assert_eq!(fmt_num(f64::INFINITY), "unbounded");
        assert_eq!(fmt_num(-0.0001), "0");
    }

    #[test]
    fn durations_use_the_largest_unit_that_reads_well() {
        assert_eq!(fmt_time(0), "0s");
        assert_eq!(fmt_time(7), "7ns");
        assert_eq!(fmt_time(250_000_000), "250ms");
        assert_eq!(fmt_time(3_500_000_000), "3.5s");
        assert_eq!(fmt_time(60_000_000_000), "60s");
        assert_eq!(fmt_time(9_000_000_000_000), "2.5h");
        assert_eq!(fmt_time_f(16_320_511.0), "16.3ms");
        assert_eq!(fmt_time(u64::MAX), "5124096h");
        assert_eq!(fmt_total(Bound::Unbounded), "without bound");
        assert_eq!(quoted_list(&["a", "b", "c"]), "'a', 'b' and 'c'");
        assert_eq!(quoted_list(&["a"]), "'a'");
    }
}
