//! The human text of an [`Explanation`]: the dependency, then each fleet, then the lints.

use std::fmt::Write;

use crate::engine::time::MILLISECOND;
use crate::engine::Nanos;
use crate::model::config::{AwsVersion, Backoff, EnvoyFormula, GrpcFormula, Jitter, PollyType};
use crate::model::outcome::Class;

use super::{
    Bound, BudgetCap, DependencyExplanation, Explanation, FleetExplanation, LayerExplanation, Load,
};

/// A number for people: integers without decimals, otherwise up to three significant
/// digits after the point for small values; "unbounded" when not finite.
pub(crate) fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "unbounded".to_string();
    }
    let s = if (x - x.round()).abs() < 1e-9 || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// A duration for people: `250ms`, `3.5s`, `16.3ms`, `2.5h` (rounded like [`fmt_num`]).
pub(crate) fn fmt_time_f(ns: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(3.6e12, "h"), (1e9, "s"), (1e6, "ms"), (1e3, "us")];
    if !ns.is_finite() {
        return "unbounded".to_string();
    }
    if ns <= 0.0 {
        return "0s".to_string();
    }
    for (size, unit) in UNITS {
        if ns >= size {
            return format!("{}{unit}", fmt_num(ns / size));
        }
    }
    format!("{}ns", fmt_num(ns))
}

/// A duration in nanoseconds for people (see [`fmt_time_f`]).
pub(crate) fn fmt_time(ns: Nanos) -> String {
    fmt_time_f(ns as f64)
}

/// "150ms in all", or "without bound".
pub(crate) fn fmt_total(b: Bound) -> String {
    match b {
        Bound::Finite(n) => format!("{} in all", fmt_time(n)),
        Bound::Unbounded => "without bound".to_string(),
    }
}

/// A count, or "unbounded".
pub(crate) fn fmt_count(b: Bound) -> String {
    match b {
        Bound::Finite(n) => n.to_string(),
        Bound::Unbounded => "unbounded".to_string(),
    }
}

/// A duration as scenario files write it, or "unbounded".
pub(crate) fn fmt_duration(b: Bound) -> String {
    match b {
        Bound::Finite(n) => fmt_time(n),
        Bound::Unbounded => "unbounded".to_string(),
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
pub(crate) fn quoted_list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        n => format!("{} and {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

fn attempts(n: u32) -> String {
    if n == u32::MAX {
        "unlimited".to_string()
    } else {
        n.to_string()
    }
}

/// "1 attempt", "3 attempts", "unlimited attempts", "unbounded attempts".
fn attempts_noun(count: &str) -> String {
    if count == "1" {
        "1 attempt".to_string()
    } else {
        format!("{count} attempts")
    }
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
        let _ = writeln!(
            o,
            "scenario '{}': {} against one dependency, {} of arrivals",
            self.name,
            plural(self.fleets.len() as u64, "fleet", "fleets"),
            fmt_time(self.duration)
        );
        o.push('\n');
        render_dependency(&mut o, &self.dependency);
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
            render_fleet(&mut o, f, &self.dependency);
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

fn render_dependency(o: &mut String, d: &DependencyExplanation) {
    let mean = fmt_time_f(d.mean_service_ns);
    match (d.servers, d.capacity) {
        (Some(s), Some(c)) => {
            let _ = writeln!(
                o,
                "dependency: {} / mean service time {mean} = capacity {} attempts/s",
                plural(u64::from(s), "server", "servers"),
                fmt_num(c)
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "dependency: unlimited servers, mean service time {mean}: no capacity limit"
            );
        }
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
    } else {
        "; never rejects".to_string()
    };
    let shed = match (d.queue_limit.is_some(), d.drop_expired) {
        (true, true) => "sheds load: finite queue and drop_expired",
        (true, false) => "sheds load: finite queue",
        (false, true) => "sheds load: drop_expired",
        (false, false) => "sheds nothing",
    };
    let _ = writeln!(o, "  {queue}{reject}; {shed}");
}

fn render_fleet(o: &mut String, f: &FleetExplanation, dep: &DependencyExplanation) {
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
        render_layer(o, l, f.deadline);
    }
    let factors: Vec<String> = f.layers.iter().map(|l| attempts(l.max_attempts)).collect();
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
                    "  if every attempt fails: {n} × {}/s = {} attempts/s at the dependency, {}% of capacity",
                    fmt_num(rate),
                    fmt_num(inbound),
                    fmt_num(inbound / c * 100.0)
                );
            }
            Bound::Unbounded => {
                o.push_str(
                    "  if every attempt fails: no bound on the attempts at the dependency\n",
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
        }
    }
}

fn render_layer(o: &mut String, l: &LayerExplanation, deadline: Option<Nanos>) {
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
    match (l.attempt_timeout, l.timeouts_total) {
        (Some(t), Some(total)) => {
            let _ = writeln!(
                o,
                "      attempt timeout {}: {} × {} = {}, {}",
                fmt_time(t),
                attempts(l.max_attempts),
                fmt_time(t),
                fmt_duration(total),
                versus_deadline(deadline)
            );
        }
        _ => o.push_str("      no attempt timeout\n"),
    }
    if let Some(t) = l.total_timeout {
        let _ = writeln!(
            o,
            "      total timeout {}: a call ends then, attempts and backoff included, {}",
            fmt_time(t),
            versus_deadline(deadline)
        );
    }
    if l.retries {
        render_backoff(o, l, deadline);
    }
    if let Some(lim) = &l.limiter {
        let _ = writeln!(
            o,
            "      limiter ({}): {}",
            plural(l.instances, "instance", "instances"),
            lim.describe()
        );
    }
    if let Some(b) = &l.budget {
        let _ = writeln!(
            o,
            "      budget ({}): {}",
            plural(l.instances, "instance", "instances"),
            budget_text(b, l.instances)
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

/// The backoff in words, e.g. `exponential from 50ms, ×2, capped at 1s, full jitter`.
pub(crate) fn backoff_kind(b: &Backoff) -> String {
    match *b {
        Backoff::None => "none (retries at once)".to_string(),
        Backoff::Fixed(d) => format!("fixed {}", fmt_time(d)),
        Backoff::Exponential {
            base,
            cap,
            multiplier,
            jitter,
        } => {
            let cap = if cap == u64::MAX {
                "no cap".to_string()
            } else {
                format!("capped at {}", fmt_time(cap))
            };
            let jitter = match jitter {
                Jitter::None => "no jitter",
                Jitter::Full => "full jitter",
                Jitter::Equal => "equal jitter",
                Jitter::Decorrelated => "decorrelated jitter",
            };
            format!(
                "exponential from {}, ×{}, {cap}, {jitter}",
                fmt_time(base),
                fmt_num(multiplier)
            )
        }
        Backoff::Grpc {
            initial,
            max,
            multiplier,
            formula: GrpcFormula::Current,
        } => format!(
            "gRPC (gRFC A6 since 2024): interval × uniform [0.8, 1.2), interval from {} ×{} up to {} (the jitter comes after the cap: waits up to 1.2 × {}); a server pushback (Retry-After) is the wait and resets the interval",
            fmt_time(initial),
            fmt_num(multiplier),
            fmt_time(max),
            fmt_time(max)
        ),
        Backoff::Grpc {
            initial,
            max,
            multiplier,
            formula: GrpcFormula::Pre2024,
        } => format!(
            "gRPC pre-2024 full jitter: uniform in [0, interval), interval from {} ×{} up to {}; a server pushback (Retry-After) is the wait and resets the interval",
            fmt_time(initial),
            fmt_num(multiplier),
            fmt_time(max)
        ),
        Backoff::Envoy {
            base_ms,
            max_ms,
            formula: EnvoyFormula::Current,
        } => format!(
            "Envoy full jitter: uniform whole ms in [0, interval), interval from {} doubling up to {}",
            fmt_time(base_ms * MILLISECOND),
            fmt_time(max_ms * MILLISECOND)
        ),
        Backoff::Envoy {
            base_ms,
            max_ms,
            formula: EnvoyFormula::Documented,
        } => format!(
            "Envoy (documented formula): uniform whole ms in [0, (2^N − 1)·{}), capped at {}",
            fmt_time(base_ms * MILLISECOND),
            fmt_time(max_ms * MILLISECOND)
        ),
        Backoff::Polly {
            delay_ticks,
            backoff_type,
            jitter,
            max_delay_ticks,
        } => {
            let d = fmt_time(delay_ticks * 100);
            let shape = match (backoff_type, jitter) {
                (PollyType::Constant, false) => format!("constant {d}"),
                (PollyType::Constant, true) => format!("constant {d} ±25% jitter"),
                (PollyType::Linear, false) => format!("linear (k+1)·{d}"),
                (PollyType::Linear, true) => format!("linear (k+1)·{d} ±25% jitter"),
                (PollyType::Exponential, false) => format!("exponential 2^k·{d}"),
                (PollyType::Exponential, true) => {
                    format!("exponential from {d} with DecorrelatedJitterBackoffV2")
                }
            };
            match max_delay_ticks {
                Some(m) => format!("Polly {shape}, capped at {}", fmt_time(m * 100)),
                None => format!("Polly {shape}"),
            }
        }
        Backoff::Resilience4j {
            initial_ms,
            multiplier,
            randomization,
            max_ms,
        } => {
            let i = fmt_time(initial_ms * MILLISECOND);
            let mut t = if multiplier == 1.0 {
                format!("Resilience4j fixed {i}")
            } else {
                format!("Resilience4j exponential from {i} ×{}", fmt_num(multiplier))
            };
            if randomization > 0.0 {
                t.push_str(&format!(", randomized ±{}%", fmt_num(randomization * 100.0)));
            }
            if let Some(m) = max_ms {
                t.push_str(&format!(", capped at {}", fmt_time(m * MILLISECOND)));
            }
            t
        }
        Backoff::AwsLegacy { base, growth } => match base {
            None => format!("AWS legacy: rand × {}^(n−1) s, no cap", fmt_num(growth)),
            Some(b) => format!(
                "AWS legacy: {} × {}^(n−1), no cap, no jitter",
                fmt_time(b),
                fmt_num(growth)
            ),
        },
        Backoff::AwsStandard {
            version: AwsVersion::V2_0,
            max_backoff,
            ..
        } => format!(
            "AWS standard: rand × min(2^(n−1) s, {})",
            fmt_time(max_backoff)
        ),
        Backoff::AwsStandard {
            version: AwsVersion::V2_1,
            max_backoff,
            dynamodb,
        } => format!(
            "AWS standard 2.1: rand × min(scale × 2^(n−1), {}), scale 1s after throttling, {} otherwise; a Retry-After is honoured within [t, t + 5s]",
            fmt_time(max_backoff),
            if dynamodb { "25ms" } else { "50ms" }
        ),
        Backoff::Finagle { start, max } => format!(
            "Finagle decorrelated jitter: {}, then uniform in [previous, 3 × previous) up to {}",
            fmt_time(start),
            fmt_time(max)
        ),
        Backoff::Tower { min, max, jitter } => format!(
            "tower exponential from {} ×2, plus up to {}% jitter, {}",
            fmt_time(min),
            fmt_num(jitter * 100.0),
            match max {
                Some(m) => format!("capped at {}", fmt_time(m)),
                None => "no cap".to_string(),
            }
        ),
    }
}

fn render_backoff(o: &mut String, l: &LayerExplanation, deadline: Option<Nanos>) {
    let mut waits: Vec<String> = l.first_waits.iter().map(|w| fmt_time(*w)).collect();
    let more = l.max_attempts == u32::MAX || u64::from(l.max_attempts) > waits.len() as u64 + 1;
    if more {
        waits.push("…".to_string());
    }
    let _ = writeln!(
        o,
        "      backoff {}: waits at most {}: {}, {}",
        backoff_kind(&l.backoff),
        waits.join(", "),
        fmt_total(l.backoff_total),
        versus_deadline(deadline)
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

/// " (N across the I instances)" when there is more than one instance.
fn across(per_instance: Bound, instances: u64) -> String {
    if instances <= 1 {
        return String::new();
    }
    format!(
        " ({} across the {instances} instances)",
        fmt_count(per_instance * Bound::Finite(instances))
    )
}

fn budget_text(b: &BudgetCap, instances: u64) -> String {
    match *b {
        BudgetCap::TokenBucket {
            max_tokens,
            token_ratio,
            retries_at_total_failure,
        } => format!(
            "token bucket of {} tokens, {} back per success; when every attempt fails a full bucket allows at most ceil({}/2) − 1 = {} retries per instance{}, then none until successes refill it; over any period, retries ≤ {}/2 + {} × successes per instance",
            fmt_num(max_tokens),
            fmt_num(token_ratio),
            fmt_num(max_tokens),
            retries_at_total_failure,
            across(Bound::Finite(retries_at_total_failure), instances),
            fmt_num(max_tokens),
            fmt_num(token_ratio)
        ),
        BudgetCap::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            retries,
            retries_after_timeouts,
        } => format!(
            "AWS standard quota of {capacity}, a retry costs {retry_cost} ({timeout_cost} after a timeout); when every attempt fails it allows at most floor({capacity}/{retry_cost}) = {} retries per instance{} (floor({capacity}/{timeout_cost}) = {} after timeouts), then none until successes refund it",
            fmt_count(retries),
            across(retries, instances),
            fmt_count(retries_after_timeouts)
        ),
        BudgetCap::Ratio {
            fraction,
            min_per_sec,
            window,
            floor_per_window,
        } => format!(
            "ratio: in any {w} window, retries ≤ {}% of calls + {}/s × {w} (= {}) per instance; in a long outage that is about {} attempts per call, beyond that floor",
            fmt_num(fraction * 100.0),
            fmt_num(min_per_sec),
            fmt_num(floor_per_window),
            fmt_num(1.0 + fraction),
            w = fmt_time(window),
        ),
        BudgetCap::AwsThrottling {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost,
            retries,
            retries_after_throttling,
        } => format!(
            "AWS standard quota of {capacity}, a retry costs {retry_cost} ({timeout_cost} after a timeout, {throttling_cost} after a throttling error); when every attempt fails it allows at most floor({capacity}/{retry_cost}) = {} retries per instance{} (floor({capacity}/{throttling_cost}) = {} after throttling errors), then none until successes refund it",
            fmt_count(retries),
            across(retries, instances),
            fmt_count(retries_after_throttling)
        ),
        BudgetCap::Leaky {
            library,
            ttl,
            min_per_sec,
            percent,
            deposit,
            withdraw,
            reserve,
            deposit_on_success,
        } => format!(
            "{library} retry budget: each {} deposits {deposit} for {}, a retry withdraws {withdraw} (a reserve of {min_per_sec}/s × {} × {withdraw} = {reserve}); {}% configured, {}% effective ({deposit}/{withdraw}); in a long outage that is {} attempts per call, beyond the reserve",
            if deposit_on_success { "success" } else { "call" },
            fmt_time(ttl),
            fmt_time(ttl / 1_000_000_000 * 1_000_000_000),
            fmt_num(percent),
            fmt_num(if withdraw > 0 { deposit as f64 / withdraw as f64 * 100.0 } else { 0.0 }),
            if deposit_on_success {
                "1".to_string()
            } else {
                fmt_num(1.0 + deposit as f64 / withdraw.max(1) as f64)
            }
        ),
        BudgetCap::Envoy {
            percent,
            min_concurrency,
            count_backoff,
        } => format!(
            "Envoy retry budget: retries in flight < max({}% of the attempts in flight, {min_concurrency}) per instance, a bound on concurrency, not on the retry rate; {}",
            fmt_num(percent),
            if count_backoff {
                "retries waiting in backoff count as pending requests"
            } else {
                "as shipped, a retry waiting in backoff counts as a retry but not as a request (Envoy issue #30205)"
            }
        ),
        BudgetCap::EnvoyMaxRetries { max_retries } => format!(
            "Envoy circuit breaker max_retries (as shipped, no retry budget configured): fewer than {max_retries} retries in flight at once per instance{}, a bound on concurrency, not on the retry rate",
            across(Bound::Finite(u64::from(max_retries)), instances)
        ),
        BudgetCap::Resilience4j {
            window_s,
            max_retry_ratio,
            min_sample_size,
        } => format!(
            "Resilience4j retry budget (pull request #2373, an unreleased proposal): over the last {window_s}s, in 1s slices from the budget's creation, a failure is refused (budget_exhausted, and not recorded) while more than {}% of the recorded outcomes failed, once more than {min_sample_size} are recorded; an allowed failure is recorded when its backoff ends (not on the last attempt), a success twice; so in a long outage the refusals leave the window and retries come back in bursts of about {min_sample_size} per instance once a window",
            fmt_num(max_retry_ratio)
        ),
        BudgetCap::FailureRatio { max_ratio, window } => format!(
            "Brooker retry circuit breaker: per instance, {}, each failed attempt is counted first, then its retry is refused while failures / first tries > {}; first tries are never gated, and a fresh instance never retries its first failure; when every attempt fails that is about {} attempts per call",
            match window {
                None => "cumulative since the start".to_string(),
                Some(w) => format!("over the last {} (10 slices)", fmt_time(w)),
            },
            fmt_num(max_ratio),
            fmt_num(b.sustained_attempts(u32::MAX))
        ),
        BudgetCap::Sre { fraction, window } => format!(
            "SRE retry budget: retry only while retries are below {}% of the requests over {} per instance (about {} attempts per call at most)",
            fmt_num(fraction * 100.0),
            fmt_time(window),
            fmt_num(b.sustained_attempts(u32::MAX))
        ),
    }
}

/// A short form of a backoff, for the preset line.
fn short_backoff(b: &Backoff) -> String {
    match *b {
        Backoff::None => "none".to_string(),
        Backoff::Fixed(d) => format!("fixed {}", fmt_time(d)),
        Backoff::Exponential {
            base,
            cap,
            multiplier,
            jitter,
        } => {
            let j = match jitter {
                Jitter::None => "no jitter",
                Jitter::Full => "full jitter",
                Jitter::Equal => "equal jitter",
                Jitter::Decorrelated => "decorrelated jitter",
            };
            let cap = if cap == u64::MAX {
                String::new()
            } else {
                format!(" up to {}", fmt_time(cap))
            };
            format!("{j} {}×{}{cap}", fmt_time(base), fmt_num(multiplier))
        }
        Backoff::Grpc {
            initial,
            max,
            multiplier,
            formula,
        } => format!(
            "{} {}×{} up to {} with pushback",
            match formula {
                GrpcFormula::Current => "×U[0.8, 1.2)",
                GrpcFormula::Pre2024 => "full jitter",
            },
            fmt_time(initial),
            fmt_num(multiplier),
            fmt_time(max)
        ),
        Backoff::Envoy {
            base_ms,
            max_ms,
            formula,
        } => match formula {
            EnvoyFormula::Current => format!(
                "U[0, {}·2^(N−1)) up to {}",
                fmt_time(base_ms * MILLISECOND),
                fmt_time(max_ms * MILLISECOND)
            ),
            EnvoyFormula::Documented => format!(
                "U[0, (2^N − 1)·{}) up to {}",
                fmt_time(base_ms * MILLISECOND),
                fmt_time(max_ms * MILLISECOND)
            ),
        },
        Backoff::AwsStandard {
            version: AwsVersion::V2_0,
            max_backoff,
            ..
        } => format!("rand × min(2^(n−1) s, {})", fmt_time(max_backoff)),
        Backoff::AwsStandard {
            version: AwsVersion::V2_1,
            max_backoff,
            dynamodb,
        } => format!(
            "rand × min({}·2^(n−1), {}) (1s·2^(n−1) after throttling)",
            if dynamodb { "25ms" } else { "50ms" },
            fmt_time(max_backoff)
        ),
        Backoff::Finagle { start, max } => format!(
            "decorrelated jitter {} up to {}",
            fmt_time(start),
            fmt_time(max)
        ),
        _ => backoff_kind(b),
    }
}

/// A short form of a budget, for the preset line.
fn short_budget(b: &BudgetCap) -> String {
    match *b {
        BudgetCap::TokenBucket {
            max_tokens,
            token_ratio,
            ..
        } => format!(
            "token bucket {} / {}",
            fmt_num(max_tokens),
            fmt_num(token_ratio)
        ),
        BudgetCap::Ratio {
            fraction,
            min_per_sec,
            window,
            ..
        } => format!(
            "ratio {}% + {}/s over {}",
            fmt_num(fraction * 100.0),
            fmt_num(min_per_sec),
            fmt_time(window)
        ),
        BudgetCap::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            ..
        } => format!("retry quota {capacity}, cost {retry_cost} ({timeout_cost} after a timeout)"),
        BudgetCap::AwsThrottling {
            capacity,
            retry_cost,
            throttling_cost,
            ..
        } => format!(
            "retry quota {capacity}, cost {retry_cost} ({throttling_cost} after throttling)"
        ),
        BudgetCap::Leaky {
            library,
            ttl,
            min_per_sec,
            percent,
            deposit,
            withdraw,
            deposit_on_success,
            ..
        } => format!(
            "{library} budget {}% (deposit {deposit}, withdraw {withdraw}) + {min_per_sec}/s, ttl {}, deposit per {}",
            fmt_num(percent),
            fmt_time(ttl),
            if deposit_on_success { "success" } else { "call" }
        ),
        BudgetCap::Envoy {
            percent,
            min_concurrency,
            ..
        } => format!(
            "concurrent retries < max({}% of requests in flight, {min_concurrency})",
            fmt_num(percent)
        ),
        BudgetCap::EnvoyMaxRetries { max_retries } => {
            format!("circuit breaker max_retries {max_retries} (concurrent retries)")
        }
        BudgetCap::Resilience4j {
            window_s,
            max_retry_ratio,
            min_sample_size,
        } => format!(
            "retry budget (PR #2373, unreleased): failure rate ≤ {}% over {window_s}s after {min_sample_size} records",
            fmt_num(max_retry_ratio)
        ),
        BudgetCap::FailureRatio { max_ratio, window } => format!(
            "retry breaker: failures / first tries ≤ {} {}",
            fmt_num(max_ratio),
            match window {
                None => "since the start".to_string(),
                Some(w) => format!("over {}", fmt_time(w)),
            }
        ),
        BudgetCap::Sre { fraction, window } => format!(
            "retries < {}% of requests over {}",
            fmt_num(fraction * 100.0),
            fmt_time(window)
        ),
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
        parts.push(format!("backoff {}", short_backoff(&l.backoff)));
        if let Some(b) = &l.budget {
            parts.push(format!("budget {}", short_budget(b)));
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
        let _ = writeln!(
            o,
            "      backoff preset {name} → {}",
            short_backoff(&l.backoff)
        );
    }
    if let (Some(name), Some(b)) = (&p.budget, &l.budget) {
        let _ = writeln!(o, "      budget preset {name} → {}", short_budget(b));
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
