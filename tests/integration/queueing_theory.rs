//! With no retries and no outages the dependency is an M/M/c/K queue: blocking
//! probability, mean queue length and mean wait must match the closed forms, both as
//! read from the series and as the summary's queueing columns (`blocking_fraction`,
//! `p_wait`, `wait_mean_ms`, `wait_p99_ms`, `in_system_mean`, `carried_rate`,
//! `success_latency_mean_ms`); M/D/1 meets Pollaczek–Khinchine.

use crate::common;

use common::{col, run_rep};

/// Stationary distribution of M/M/c/K (K = c + queue slots).
fn mmck(lambda: f64, mu: f64, c: usize, k: usize) -> Vec<f64> {
    let a = lambda / mu;
    let mut p = vec![0.0; k + 1];
    p[0] = 1.0;
    for n in 1..=k {
        let servers = n.min(c) as f64;
        p[n] = p[n - 1] * a / servers;
    }
    let s: f64 = p.iter().sum();
    p.iter().map(|x| x / s).collect()
}

struct Theory {
    blocking: f64,
    lq: f64,
    /// Mean sojourn of admitted attempts.
    w: f64,
    utilisation: f64,
    /// P(an admitted attempt finds every server busy).
    p_wait: f64,
    /// Mean wait for a server of admitted attempts.
    wq: f64,
    /// Mean number in the system (queued or in service).
    l: f64,
    /// Attempts served per second.
    carried: f64,
}

fn theory(lambda: f64, mu: f64, c: usize, queue: usize) -> Theory {
    let k = c + queue;
    let p = mmck(lambda, mu, c, k);
    let blocking = p[k];
    let lq: f64 = p
        .iter()
        .enumerate()
        .skip(c)
        .map(|(n, x)| (n - c) as f64 * x)
        .sum();
    let lambda_eff = lambda * (1.0 - blocking);
    Theory {
        blocking,
        lq,
        w: lq / lambda_eff + 1.0 / mu,
        utilisation: lambda_eff / (c as f64 * mu),
        // Arrivals see time averages (PASTA); the admitted ones are those not at K.
        p_wait: p[c..k].iter().sum::<f64>() / (1.0 - blocking),
        wq: lq / lambda_eff,
        l: lq + lambda_eff / mu,
        carried: lambda_eff,
    }
}

fn scenario(rate: f64, servers: usize, queue: usize) -> String {
    format!(
        r#"
duration = "400s"
drain = "5s"
warmup = "0s"
[dependency]
servers = {servers}
queue_limit = {queue}
service_time = {{ kind = "exponential", mean = "10ms" }}
[[fleets]]
name = "q"
arrival = {{ kind = "poisson", rate = {rate} }}
"#
    )
}

/// Runs 4 replications (seeds differ) and checks each measured quantity against the
/// closed form within `z` standard errors of the replication mean plus a small relative
/// slack for the bias of a finite run. Each replication sees 400 s of arrivals (≥ 40k
/// requests), so the standard errors are well below 1%.
fn check(rate: f64, servers: usize, queue: usize) {
    let th = theory(rate, 100.0, servers, queue);
    let text = scenario(rate, servers, queue);
    let mut blocking = vec![];
    let mut lq = vec![];
    let mut w = vec![];
    let mut util = vec![];
    let mut cols: Vec<(&str, f64, f64, Vec<f64>)> = vec![
        ("blocking_fraction", th.blocking, 0.02, vec![]),
        ("success_latency_mean_ms", th.w * 1e3, 0.02, vec![]),
        ("wait_mean_ms", th.wq * 1e3, 0.04, vec![]),
        ("p_wait", th.p_wait, 0.02, vec![]),
        ("in_system_mean", th.l, 0.02, vec![]),
        ("carried_rate", th.carried, 0.01, vec![]),
    ];
    for rep in 0..4 {
        let r = run_rep(&text, &[], rep);
        let attempts = col(&r, "attempts");
        let rejected = col(&r, "rejected");
        blocking.push(rejected / attempts);
        let n = r.metrics.buckets.len() as f64;
        lq.push(
            r.metrics
                .buckets
                .iter()
                .map(|b| b.queue_area as f64 / 1e9)
                .sum::<f64>()
                / n,
        );
        util.push(
            r.metrics
                .buckets
                .iter()
                .map(|b| b.busy_area as f64 / 1e9)
                .sum::<f64>()
                / n
                / servers as f64,
        );
        // Latency of completions includes rejected requests at 0 ms: mean over all
        // completions = (1 - blocking) × W.
        let lat = col(&r, "latency_mean_ms") / 1000.0;
        w.push(lat / (1.0 - rejected / attempts));
        for (name, _, _, xs) in &mut cols {
            xs.push(col(&r, name));
        }
        // Exact counts: every arrival is admitted or blocked; only the full queue
        // rejects here; nothing fails, so every completion is a success.
        assert_eq!(col(&r, "admitted") + col(&r, "blocked"), attempts);
        assert_eq!(col(&r, "blocked"), rejected);
        assert!(col(&r, "waited") <= col(&r, "admitted"));
        assert_eq!(col(&r, "failed"), rejected);
    }
    let close = |name: &str, xs: &[f64], expect: f64, rel: f64| {
        let (m, se) = common::mean_se(xs);
        let tol = 5.0 * se + rel * expect.abs() + 1e-9;
        assert!(
            (m - expect).abs() <= tol,
            "{name} (rate {rate}, c {servers}, queue {queue}): measured {m:.6} ± {se:.6}, theory {expect:.6}, tolerance {tol:.6}"
        );
    };
    close("blocking", &blocking, th.blocking, 0.02);
    close("mean queue length", &lq, th.lq, 0.03);
    close("mean sojourn", &w, th.w, 0.02);
    close("utilisation", &util, th.utilisation, 0.01);
    for (name, expect, rel, xs) in &cols {
        close(name, xs, *expect, *rel);
    }
}

#[test]
fn light_load_matches_mmck() {
    // ρ = 0.5 on 2 servers, 10 waiting places.
    check(100.0, 2, 10);
}

#[test]
fn near_saturation_matches_mmck() {
    // ρ = 0.95 on 10 servers, 20 waiting places.
    check(950.0, 10, 20);
}

#[test]
fn overload_matches_mmck() {
    // ρ = 1.6 on 5 servers, 10 waiting places: heavy blocking.
    check(800.0, 5, 10);
}

#[test]
fn unlimited_queue_matches_erlang_c() {
    // M/M/c with c = 4, ρ = 0.8: Erlang C waiting probability and mean wait.
    let (lambda, mu, c) = (320.0f64, 100.0f64, 4usize);
    let a = lambda / mu;
    let rho = a / c as f64;
    let mut sum = 0.0;
    let mut term = 1.0;
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let last = term * a / c as f64 / (1.0 - rho);
    let erlang_c = last / (sum + last);
    let wq = erlang_c / (c as f64 * mu - lambda);
    let text = format!(
        r#"
duration = "400s"
[dependency]
servers = {c}
queue_limit = "unlimited"
service_time = {{ kind = "exponential", mean = "10ms" }}
[[fleets]]
name = "q"
arrival = {{ kind = "poisson", rate = {lambda} }}
"#
    );
    let mut ws = vec![];
    let mut ls = vec![];
    let (mut pw, mut wm, mut w99) = (vec![], vec![], vec![]);
    for rep in 0..4 {
        let r = run_rep(&text, &[], rep);
        pw.push(col(&r, "p_wait"));
        wm.push(col(&r, "wait_mean_ms") / 1000.0);
        w99.push(col(&r, "wait_p99_ms") / 1000.0);
        ws.push(col(&r, "latency_mean_ms") / 1000.0 - 1.0 / mu);
        let n = r.metrics.buckets.len() as f64;
        ls.push(
            r.metrics
                .buckets
                .iter()
                .map(|b| b.queue_area as f64 / 1e9)
                .sum::<f64>()
                / n,
        );
    }
    let (w, se) = common::mean_se(&ws);
    assert!(
        (w - wq).abs() < 5.0 * se + 0.03 * wq,
        "Wq {w} ± {se} vs Erlang C {wq}"
    );
    // Little's law for the queue: Lq = λ Wq.
    let (l, se_l) = common::mean_se(&ls);
    assert!(
        (l - lambda * w).abs() < 5.0 * se_l + 0.02 * l,
        "Lq {l} vs λWq {}",
        lambda * w
    );
    // The dependency's own wait columns: P(wait) is Erlang C, the mean wait Wq, and
    // P(Wq > t) = C·exp(−(cμ − λ)t), so the 99th percentile is ln(100·C)/(cμ − λ).
    let p99 = (100.0 * erlang_c).ln() / (c as f64 * mu - lambda);
    for (name, xs, expect, rel) in [
        ("p_wait", &pw, erlang_c, 0.02),
        ("wait_mean_ms", &wm, wq, 0.03),
        ("wait_p99_ms", &w99, p99, 0.03),
    ] {
        let (m, se) = common::mean_se(xs);
        assert!(
            (m - expect).abs() < 5.0 * se + rel * expect,
            "{name}: {m} ± {se} vs Erlang C {expect}"
        );
    }
}

#[test]
fn deterministic_service_matches_pollaczek_khinchine() {
    // M/D/1 at ρ = 0.7: Wq = ρ / (2μ(1 − ρ)), P(wait) = ρ.
    let (lambda, mu) = (70.0f64, 100.0f64);
    let rho = lambda / mu;
    let wq = rho / (2.0 * mu * (1.0 - rho));
    let text = format!(
        r#"
duration = "400s"
[dependency]
servers = 1
queue_limit = "unlimited"
service_time = {{ kind = "deterministic", value = "10ms" }}
[[fleets]]
name = "q"
arrival = {{ kind = "poisson", rate = {lambda} }}
"#
    );
    let (mut w, mut p, mut l) = (vec![], vec![], vec![]);
    for rep in 0..4 {
        let r = run_rep(&text, &[], rep);
        w.push(col(&r, "wait_mean_ms") / 1000.0);
        p.push(col(&r, "p_wait"));
        l.push(col(&r, "in_system_mean"));
        // Service is exactly 10 ms: success latency = wait + 10 ms, request by request.
        let gap = col(&r, "success_latency_mean_ms") - col(&r, "wait_mean_ms");
        assert!((gap - 10.0).abs() < 1e-6, "sojourn − wait = {gap} ms");
    }
    for (name, xs, expect, rel) in [
        ("wait_mean_ms", &w, wq, 0.03),
        ("p_wait", &p, rho, 0.01),
        // L = λ(Wq + 1/μ) (Little).
        ("in_system_mean", &l, lambda * (wq + 1.0 / mu), 0.02),
    ] {
        let (m, se) = common::mean_se(xs);
        assert!(
            (m - expect).abs() < 5.0 * se + rel * expect,
            "{name}: {m} ± {se} vs M/D/1 {expect}"
        );
    }
}
