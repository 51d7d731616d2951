//! Request traces: exact spans of scenarios whose attempt sequence is known, the
//! uniform sample, and that tracing changes no other output.

use crate::metrics::ordinal::End;
use crate::metrics::trace::{self, Budget, Fate, SpanKind, TraceLog, NO_SPAN};
use crate::model::outcome::Class;
use crate::run::{simulate, simulate_traced};

use crate::tests::common;

const MS: u64 = 1_000_000;

/// 20 requests (one each 500 ms) at a dependency that always fails after 10 ms; two
/// layers, 3 × 2 attempts, fixed backoffs of 100 ms (outer) and 30 ms (inner), a hop of
/// 1 ms each way below the inner layer.
const DEAD: &str = r#"
duration = "10s"
drain = "5s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "10ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 2 }
[[fleets.layers]]
name = "outer"
max_attempts = 3
backoff = { kind = "fixed", delay = "100ms" }
[[fleets.layers]]
name = "inner"
max_attempts = 2
backoff = { kind = "fixed", delay = "30ms" }
hop_latency = "1ms"
"#;

fn traced(text: &str, sets: &[&str], picks: Vec<u64>) -> TraceLog {
    let l = common::scenario(text, sets);
    simulate_traced(&l.scenario, l.scenario.seed, picks, 9).2
}

/// The exact spans of one request: its call, 3 outer attempts, each with 2 inner
/// attempts at the service, with the waits between them.
#[test]
fn a_dead_dependency_with_fixed_backoff_gives_exactly_the_expected_spans() {
    let log = traced(DEAD, &[], vec![3]);
    assert_eq!(log.population, 20);
    assert_eq!(log.requests.len(), 1);
    let r = &log.requests[0];
    assert_eq!(r.ordinal, 3);
    // Constant arrivals at 2/s: the 4th request arrives at 1.5 s (the first at 0).
    let t0 = log.spans[r.root as usize].send;
    assert_eq!(r.arrival, t0);
    assert_eq!(r.outcome, Some(Class::Error));

    // (kind, parent, depth, attempt, send, arrive, start, end, outcome, done, wait, reason)
    let mut want = Vec::new();
    // One inner attempt: sent at `t`, 1 ms hop, served 10 ms, answer 1 ms back.
    let mut t = t0;
    want.push((
        SpanKind::Call,
        NO_SPAN,
        0u8,
        1u32,
        t,
        Some(t),
        None,
        None,
        0,
        0,
    ));
    let mut outer_end = 0;
    for k in 1..=3u32 {
        let wait = if k == 1 { 0 } else { 100 * MS };
        t += wait;
        let outer_send = t;
        want.push((SpanKind::Attempt, 0, 1, k, t, Some(t), None, None, wait, 0));
        for j in 1..=2u32 {
            let w = if j == 1 { 0 } else { 30 * MS };
            t += w;
            want.push((
                SpanKind::Attempt,
                1,
                2,
                j,
                t,
                Some(t + MS),
                Some(t + MS),
                Some(t + 12 * MS),
                w,
                0,
            ));
            t += 12 * MS;
        }
        let _ = outer_send;
        outer_end = t;
    }
    let spans: Vec<_> = log.spans.iter().collect();
    assert_eq!(spans.len(), 1 + 3 + 6, "{spans:#?}");
    // Parents: the call, then each outer attempt holds its two inner ones.
    let mut outer = 0;
    for (i, s) in spans.iter().enumerate() {
        let w = want[i];
        assert_eq!(s.kind, w.0, "span {i}");
        assert_eq!(s.depth, w.2, "span {i}");
        assert_eq!(s.attempt, w.3, "span {i}");
        assert_eq!(s.send, w.4, "span {i}");
        assert_eq!(s.arrive, w.5, "span {i}");
        assert_eq!(s.start, w.6, "span {i}");
        assert_eq!(s.wait, w.8, "span {i}");
        match s.depth {
            0 => assert_eq!(s.parent, NO_SPAN),
            1 => {
                assert_eq!(s.parent, 0);
                outer = i as u32;
                assert_eq!(
                    s.wait_reason,
                    if s.attempt > 1 {
                        trace::wait::BACKOFF
                    } else {
                        0
                    }
                );
            }
            _ => {
                assert_eq!(s.parent, outer, "span {i}");
                // The inner attempt's outcome reaches the inner layer after the hop
                // back; the service was done 1 ms before.
                assert_eq!(s.end, w.7, "span {i}");
                assert_eq!(s.done, w.7.map(|e| e - MS), "span {i}");
                assert_eq!(s.outcome, Some(End::Class(Class::Error)));
                assert_eq!(s.fate, Some(Fate::Answered(Class::Error)));
            }
        }
        assert_eq!(s.budget, None);
        assert_eq!(s.breaker, 0);
    }
    // The outer attempts (the inner layer's calls) end when the inner layer gives up.
    let outers: Vec<_> = spans.iter().filter(|s| s.depth == 1).collect();
    for s in &outers {
        assert_eq!(s.outcome, Some(End::Class(Class::Error)));
        assert_eq!(s.end, s.done);
    }
    assert_eq!(outers[2].end, Some(outer_end));
    let root = spans[0];
    assert_eq!(root.end, Some(outer_end));
    assert_eq!(r.end, Some(outer_end));
    assert_eq!(root.fate, Some(Fate::Answered(Class::Error)));
}

/// Every span of every traced request hangs off its request's root and keeps its
/// times in order; the sample is exactly the drawn ordinals.
fn well_formed(log: &TraceLog) {
    for (i, s) in log.spans.iter().enumerate() {
        let r = &log.requests[s.request as usize];
        if s.parent == NO_SPAN {
            assert_eq!(r.root, i as u32);
        } else {
            assert!((s.parent as usize) < i, "a parent precedes its child");
            assert_eq!(log.spans[s.parent as usize].request, s.request);
        }
        assert!(s.send >= r.arrival);
        for t in [s.arrive, s.start, s.end, s.done].into_iter().flatten() {
            assert!(t >= s.send && t <= log.end, "span {i}: {s:?}");
        }
        if let (Some(a), Some(b)) = (s.arrive, s.start) {
            assert!(a <= b);
        }
    }
}

#[test]
fn the_sample_is_uniform_exact_and_does_not_change_the_run() {
    let l = common::scenario(DEAD, &["duration=100s", "fleets.0.arrival.rate=50"]);
    let scn = &l.scenario;
    let (plain, _) = simulate(scn, scn.seed);
    let picks = trace::sample(5, plain.totals.logical, 40);
    let (m, _, log) = simulate_traced(scn, scn.seed, picks.clone(), 5);
    assert_eq!(
        format!("{plain:?}"),
        format!("{m:?}"),
        "tracing changed the run"
    );
    let got: Vec<u64> = log.requests.iter().map(|r| r.ordinal).collect();
    assert_eq!(got, picks);
    assert_eq!(log.population, 5000);
    well_formed(&log);
    // 40 of 5000 drawn uniformly: the mean ordinal is near 2500 (sd of the mean about
    // 5000 / sqrt(12 × 40) = 228; 5 sd is 1140).
    let mean = got.iter().sum::<u64>() as f64 / 40.0;
    assert!((mean - 2500.0).abs() < 1140.0, "mean ordinal {mean}");
    // Each request: its root, 3 outer and 6 inner attempts.
    assert_eq!(log.spans.len(), 40 * 10);
}

#[test]
fn budget_refusals_are_spans_with_their_decisions() {
    // A budget that allows few retries.
    let text = r#"
duration = "20s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "5ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
name = "l"
max_attempts = 4
backoff = { kind = "fixed", delay = "10ms" }
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
"#;
    let l = common::scenario(text, &[]);
    let scn = &l.scenario;
    let (plain, _) = simulate(scn, scn.seed);
    let picks: Vec<u64> = (0..plain.totals.logical).collect();
    let (_, _, log) = simulate_traced(scn, scn.seed, picks, 1);
    well_formed(&log);
    let refused: Vec<_> = log
        .spans
        .iter()
        .filter(|s| s.budget == Some(Budget::Refused))
        .collect();
    let granted = log
        .spans
        .iter()
        .filter(|s| s.budget == Some(Budget::Granted))
        .count() as u64;
    assert!(!refused.is_empty());
    for s in &refused {
        assert_eq!(s.outcome, Some(End::Class(Class::BudgetExhausted)));
        assert_eq!((s.arrive, s.done), (None, None));
        assert!(s.attempt >= 2);
    }
    // The counts agree with the run's own: every retry sent was granted, every refusal
    // is one budget_exhausted.
    let t = &plain.totals;
    assert_eq!(granted, t.layer_calls[0] - t.logical, "granted retries");
    assert_eq!(
        refused.len() as u64,
        t.outcomes[Class::BudgetExhausted as usize]
    );
}

/// A span's kind, outcome and fate names.
type Seen = (&'static str, Option<&'static str>, Option<&'static str>);

/// Every shipped scenario (graphs with fan-out, hedges, queue deliveries, breakers,
/// bulkheads, pools, OCC, outages), traced: the run is unchanged, every span is well
/// formed, and a traced request that completed ended as its root span says.
#[test]
fn every_shipped_scenario_traces_without_changing_its_run() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    let mut kinds: std::collections::BTreeSet<Seen> = std::collections::BTreeSet::new();
    for f in files {
        // From its path, so the data files it names are found beside it.
        let l = crate::scenario::load_file(Some(&f), &Default::default())
            .unwrap_or_else(|e| panic!("scenario does not load: {e}"));
        let scn = &l.scenario;
        let (plain, _) = simulate(scn, scn.seed);
        let picks = trace::sample(3, plain.totals.logical, 300);
        let (m, _, log) = simulate_traced(scn, scn.seed, picks.clone(), 3);
        let name = f.display();
        assert_eq!(
            format!("{plain:?}"),
            format!("{m:?}"),
            "{name}: tracing changed the run"
        );
        assert_eq!(log.requests.len(), picks.len(), "{name}");
        well_formed(&log);
        for (i, r) in log.requests.iter().enumerate() {
            if r.root == NO_SPAN {
                // A queue consumer's poison message: the handler fails before it
                // calls anything.
                assert_eq!(r.outcome, Some(Class::Error), "{name}: {r:?}");
                assert!(log.spans.iter().all(|s| s.request as usize != i));
                continue;
            }
            let root = &log.spans[r.root as usize];
            if let Some(c) = r.outcome {
                assert_eq!(root.outcome, Some(End::Class(c)), "{name}: {r:?}");
                assert_eq!(root.end, r.end, "{name}");
            }
        }
        for s in &log.spans {
            kinds.insert((
                s.kind.name(),
                s.outcome.map(End::name),
                s.fate.map(Fate::name),
            ));
        }
    }
    let seen = |f: &dyn Fn(&Seen) -> bool| kinds.iter().any(f);
    assert!(seen(&|k| k.0 == "hedge"), "no hedge copy traced: {kinds:?}");
    assert!(
        seen(&|k| k.1 == Some("cancelled")),
        "no cancellation traced"
    );
    assert!(
        seen(&|k| k.1 == Some("timeout") && k.2 == Some("success")),
        "no orphan traced"
    );
    assert!(
        seen(&|k| k.1 == Some("breaker_open")),
        "no open breaker traced"
    );
}

/// A service graph traced whole: every attempt that reached a service is a span at
/// it, as many as the run counted at the fleet's service.
#[test]
fn a_fully_traced_run_has_a_span_for_every_attempt_at_the_dependency() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/retry_one_layer.toml"),
    )
    .unwrap();
    let l = common::scenario(&text, &["duration=20s"]);
    let scn = &l.scenario;
    let (plain, _) = simulate(scn, scn.seed);
    let all: Vec<u64> = (0..plain.totals.logical).collect();
    let (_, _, log) = simulate_traced(scn, scn.seed, all, 1);
    let at_dependency = log
        .spans
        .iter()
        .filter(|s| s.stack == 0 && log.at_service(s) && s.arrive.is_some())
        .count() as u64;
    assert_eq!(at_dependency, plain.totals.attempts);
    let layer0 = log
        .spans
        .iter()
        .filter(|s| s.stack == 0 && s.depth == 1 && s.kind != SpanKind::Call)
        .count();
    assert_eq!(layer0 as u64, plain.totals.layer_calls[0] + refusals(&log));
}

/// Attempts refused before they left (no arrival, no service).
fn refusals(log: &TraceLog) -> u64 {
    log.spans
        .iter()
        .filter(|s| s.stack == 0 && s.depth == 1 && s.arrive.is_none() && s.end == Some(s.send))
        .count() as u64
}

/// A trace that would outgrow its cap on spans (1,111 spans a request here: 10 × 10
/// × 10 attempts) stops recording at the cap and says so; the spans it kept are whole
/// requests' trees down to the cut, well formed.
#[test]
fn a_trace_past_its_span_cap_is_cut_and_marked() {
    let text = r#"
duration = "10s"
[dependency]
servers = "unlimited"
service_time = "1ms"
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 100 }
[[fleets.layers]]
name = "a"
max_attempts = 10
[[fleets.layers]]
name = "b"
max_attempts = 10
[[fleets.layers]]
name = "c"
max_attempts = 10
"#;
    let all: Vec<u64> = (0..1000).collect();
    let log = traced(text, &[], all);
    assert!(log.truncated);
    assert_eq!(log.spans.len(), 1_000_000);
    well_formed(&log);
    let json: serde_json::Value =
        serde_json::from_str(&crate::export::trace::render_json(&log)).unwrap();
    assert_eq!(
        json["otherData"]["truncated"],
        serde_json::Value::Bool(true)
    );
    let small = traced(text, &[], (0..10).collect());
    assert!(!small.truncated);
    assert_eq!(small.spans.len(), 10 * 1111);
}

/// `retrysim run --trace N` writes traces.csv and trace.json beside the same results
/// as without it, lists them in the manifest and columns.csv, and a run without it
/// in the same folder removes them.
#[test]
fn run_with_trace_writes_the_traces_and_leaves_the_rest_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let scn = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/default.toml");
    let scn = scn.to_str().unwrap();
    common::ok(d, &["run", scn, "--no-plots", "-q", "--out", "plain"]);
    common::ok(
        d,
        &[
            "run",
            scn,
            "--no-plots",
            "-q",
            "--out",
            "traced",
            "--trace",
            "30",
        ],
    );
    for f in [
        "summary.csv",
        "timeseries.csv",
        "herd.csv",
        "attempts_by_ordinal.csv",
    ] {
        assert_eq!(
            std::fs::read(d.join("plain").join(f)).unwrap(),
            std::fs::read(d.join("traced").join(f)).unwrap(),
            "{f} changed with --trace"
        );
    }
    let csv = std::fs::read_to_string(d.join("traced/traces.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let mut requests = std::collections::BTreeSet::new();
    for rec in rdr.records() {
        requests.insert(rec.unwrap()[0].to_string());
    }
    assert_eq!(requests.len(), 30);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("traced/trace.json")).unwrap()).unwrap();
    assert!(json["traceEvents"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
    let manifest = std::fs::read_to_string(d.join("traced/manifest.toml")).unwrap();
    assert!(manifest.contains("\"trace.json\"") && manifest.contains("\"traces.csv\""));
    assert!(manifest.contains("--set trace.sample=30"));
    let columns = std::fs::read_to_string(d.join("traced/columns.csv")).unwrap();
    assert!(columns.contains("traces.csv,wait_reason,"));
    let plain_columns = std::fs::read_to_string(d.join("plain/columns.csv")).unwrap();
    assert!(!plain_columns.contains("traces.csv"));
    // The same draw twice: the same bytes.
    common::ok(
        d,
        &[
            "run",
            scn,
            "--no-plots",
            "-q",
            "--out",
            "again",
            "--trace",
            "30",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("again/traces.csv")).unwrap(),
        csv.as_bytes()
    );
    // Rerun without tracing: the folder no longer holds traces.
    common::ok(d, &["run", scn, "--no-plots", "-q", "--out", "traced"]);
    assert!(!d.join("traced/traces.csv").exists());
    assert!(!d.join("traced/trace.json").exists());
}

#[test]
fn a_retry_refused_by_the_deadline_is_an_instant_in_trace_json_as_other_refusals() {
    // 5 ms attempts that always fail, 60 ms of backoff, a 100 ms deadline: the second
    // attempt ends at 70 ms, and its retry (at 130 ms) would pass the deadline.
    let text = r#"
duration = "2s"
[dependency]
servers = "unlimited"
service_time = { kind = "deterministic", value = "5ms" }
error_rate = 1.0
[[fleets]]
name = "f"
arrival = { kind = "constant", rate = 10 }
deadline = "100ms"
[[fleets.layers]]
name = "l"
max_attempts = 4
backoff = { kind = "fixed", delay = "60ms" }
"#;
    let log = traced(text, &[], (0..20).collect());
    well_formed(&log);
    let refused: Vec<usize> = (0..log.spans.len())
        .filter(|&i| {
            let s = &log.spans[i];
            s.outcome == Some(End::Class(Class::DeadlineExceeded))
                && s.arrive.is_none()
                && s.end == Some(s.send)
        })
        .collect();
    assert_eq!(refused.len(), 20, "one refused retry a request");
    for &i in &refused {
        assert_eq!(log.spans[i].attempt, 3);
    }
    let json: serde_json::Value =
        serde_json::from_str(&crate::export::trace::render_json(&log)).unwrap();
    let instants: Vec<&serde_json::Value> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i")
        .collect();
    assert_eq!(instants.len(), 20, "{instants:?}");
    for (e, &i) in instants.iter().zip(&refused) {
        assert_eq!(e["name"], "deadline refused retry");
        assert_eq!(e["cat"], "refusal");
        assert_eq!(e["args"]["span"], i as u64);
        assert_eq!(e["args"]["attempt"], 3);
    }
}
