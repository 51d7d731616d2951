//! The server time a tier spends on rejections (`reject_cost`, issue 41), measured:
//! `timeseries.csv`'s and `services.csv`'s `rejecting` and `reject_busy_fraction`
//! against Little's law (rejections/s × cost) and against the capacity they leave.

use crate::export::csv::{services_rows, timeseries_rows_laid};
use crate::metrics::columns::{REJECT_GROUP, SERVICES_COLUMNS, SERVICE_GROUP, TIMESERIES_COLUMNS};
use crate::run::RunResult;

use crate::tests::common::{col, run};

/// One fleet of constant arrivals at `rate`/s, one attempt each, against 10 servers
/// with `dep` appended to the dependency's table.
fn scenario(rate: u32, dep: &str) -> String {
    format!(
        r#"
duration = "60s"
drain = "2s"
bucket = "1s"
[dependency]
servers = 10
{dep}
[[fleets]]
name = "web"
arrival = {{ kind = "constant", rate = {rate} }}
[[fleets.layers]]
name = "client"
max_attempts = 1
"#
    )
}

/// Column `name` of CSV rows under `header`, one value per row (empty fields as NaN).
fn csv_column(rows: &str, header: &[&str], name: &str) -> Vec<f64> {
    let i = header.iter().position(|h| *h == name).expect(name);
    rows.lines()
        .map(|l| l.split(',').nth(i).unwrap().parse().unwrap_or(f64::NAN))
        .collect()
}

/// `timeseries.csv`'s `rejecting`, bucket by bucket, as a folder writes it.
fn rejecting(r: &RunResult) -> Vec<f64> {
    let rows = timeseries_rows_laid(r, Some(10), &[(&REJECT_GROUP, true)]);
    let mut header: Vec<&str> = TIMESERIES_COLUMNS.to_vec();
    header.push("rejecting");
    csv_column(&rows, &header, "rejecting")
}

/// Below saturation every rejection starts at once, so the rejecting servers are
/// exactly rejections/s × cost: 200/s against a window of 100/s rejects 100 a second
/// (the second half of each), each holding a server 20 ms: 2 servers, of 10, in every
/// bucket after the first (whose last rejections run 15 ms into the next: the first
/// bucket alone has no such spill from before it).
#[test]
fn below_saturation_the_rejecting_servers_are_exactly_rejections_per_second_times_the_cost() {
    let r = run(
        &scenario(
            200,
            r#"service_time = "50ms"
reject_cost = "20ms"
admission = { kind = "fixed_window", limit = 100, window = "1s" }"#,
        ),
        &[],
    );
    let adm = r.metrics.admission.as_ref().unwrap();
    assert!(adm.limited_series.iter().all(|&n| n == 100));
    let series = rejecting(&r);
    assert_eq!(series.len(), 60);
    for (i, x) in series.iter().enumerate().skip(1) {
        assert!((x - 2.0).abs() < 1e-9, "bucket {i}: {x}");
    }
    assert!(series[0] < 2.0 && series[0] > 1.9, "{}", series[0]);
    // The whole-run column: the series' mean over 10 servers.
    let mean = series.iter().sum::<f64>() / 60.0;
    assert!((col(&r, "reject_busy_fraction") - mean / 10.0).abs() < 1e-6);
    // The work: 100/s × 50 ms = 5 servers, untouched by the rejections.
    assert_eq!(r.metrics.totals.served, 6000);
}

/// Saturated, rejections compete with the work for the servers: 200/s against a
/// token bucket of 150/s (15 per 100 ms), 10 servers at 100 ms behind a queue of 50,
/// each rejection (the limiter's 50/s and the full queue's) costing 20 ms. The queue
/// never empties, so every server is always busy: work + rejecting = 10. With free
/// rejections the work gets all 10 servers (100/s); here the steady state solves
/// `0.1·served + 0.02·(50 + 150 − served) = 10`: 75/s served, 125/s rejected, 2.5
/// servers rejecting and 7.5 working, s − r·c = 10 − 125 × 0.02.
///
/// Tolerances: measured over [5 s, 60 s) (55 s), the counts are taken at arrival or at
/// the answer while the areas accrue in between; what straddles the two ends is at
/// most the 10 servers' work in progress (1 server-second) and the rejections waiting
/// for a server (at most 100 ms of them, 0.25 server-seconds) at each end:
/// 2.5 server-seconds of 550, under 0.05 servers.
#[test]
fn saturated_a_tier_rejecting_at_rate_r_has_s_minus_r_c_servers_left_for_work() {
    let tier = |cost: &str| {
        format!(
            r#"service_time = "100ms"
queue_limit = 50
reject_cost = "{cost}"
admission = {{ kind = "token_bucket", max_tokens = 15, tokens_per_fill = 15, fill_interval = "100ms" }}"#
        )
    };
    let r = run(&scenario(200, &tier("20ms")), &[]);
    let b = &r.metrics.buckets[5..];
    let adm = r.metrics.admission.as_ref().unwrap();
    let secs = b.len() as f64;
    let served = b.iter().map(|b| b.served).sum::<u64>() as f64 / secs;
    let full = b.iter().map(|b| b.blocked).sum::<u64>();
    let limited: u64 = adm.limited_series[5..].iter().sum();
    let rate = (full + limited) as f64 / secs;
    let (s, svc, c) = (10.0, 0.1, 0.02);
    let rejecting = rejecting(&r)[5..].iter().sum::<f64>() / secs;
    let tol = 0.05;
    // Little's law: the servers busy rejecting are r·c.
    assert!(
        (rejecting - rate * c).abs() < tol,
        "rejecting {rejecting:.4} vs r·c = {:.4} (r = {rate:.2}/s)",
        rate * c
    );
    // The work gets what the rejections leave: s − r·c servers, (s − r·c)/svc a second.
    let work = served * svc;
    assert!(
        (work - (s - rate * c)).abs() < tol,
        "work servers {work:.4} vs s − r·c = {:.4}",
        s - rate * c
    );
    // And the steady state solved above.
    assert!((rate - 125.0).abs() < 1.0, "{rate}");
    assert!((served - 75.0).abs() < 1.0, "{served}");
    assert!((rejecting - 2.5).abs() < tol, "{rejecting}");
    let f = col(&r, "reject_busy_fraction");
    assert!((f - 0.25).abs() < 0.01, "{f}");

    // Free rejections take no server: all 10 do the work, 100/s, and the columns of
    // rejection cost are not written.
    let free = run(&scenario(200, &tier("0s")), &[]);
    let served: u64 = free.metrics.buckets[5..].iter().map(|b| b.served).sum();
    assert_eq!(served, 55 * 100);
    assert!(free.summary.get("reject_busy_fraction").is_none());
    assert!(free.metrics.reject_busy.is_none());
}

/// A service graph: `services.csv`'s `rejecting` per tier (0 for a tier whose
/// rejections are free) and `service_<name>_reject_busy_fraction` for the tiers with a
/// cost; the whole-run column describes the tier the fleets call.
#[test]
fn a_graph_tier_with_a_reject_cost_has_its_rejecting_servers_in_services_csv() {
    let text = r#"
duration = "30s"
bucket = "1s"
[[services]]
name = "api"
servers = 100
service_time = "1ms"
[[services.calls]]
to = "db"
[[services.calls.layers]]
max_attempts = 1
[[services]]
name = "db"
servers = 10
service_time = "10ms"
reject_cost = "10ms"
admission = { kind = "fixed_window", limit = 100, window = "1s" }
[[fleets]]
name = "web"
target = "api"
arrival = { kind = "constant", rate = 250 }
[[fleets.layers]]
max_attempts = 1
"#;
    let r = run(text, &[]);
    // db rejects 150/s at 10 ms each: 1.5 of its 10 servers.
    let f = col(&r, "service_db_reject_busy_fraction");
    assert!((f - 0.15).abs() < 0.005, "{f}");
    assert!(r.summary.get("service_api_reject_busy_fraction").is_none());
    assert_eq!(col(&r, "reject_busy_fraction"), 0.0, "api rejects nothing");
    let names = ["api".to_string(), "db".to_string()];
    let file = SERVICE_GROUP.file.as_ref().unwrap();
    let rows = services_rows(&r, &names, &[file]);
    let rejecting = csv_column(&rows, &SERVICES_COLUMNS, "rejecting");
    assert_eq!(rejecting.len(), 60);
    let (api, db): (Vec<_>, Vec<_>) = rejecting.chunks(2).map(|p| (p[0], p[1])).unzip();
    assert!(api.iter().all(|&x| x == 0.0), "{api:?}");
    assert!(db[1..].iter().all(|&x| (x - 1.5).abs() < 1e-9), "{db:?}");
}
