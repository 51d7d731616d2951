//! The request traces as files: `traces.csv` has exactly the expected rows for a
//! hand-made trace log (two requests, a retry, an orphan, a budget refusal, a
//! downstream call of a service graph), its times read back to the very nanosecond,
//! and `trace.json` is the Chrome trace event format: every event has the fields its
//! phase requires, durations are not negative, and one thread's slices nest.

use std::collections::{BTreeMap, BTreeSet};

use crate::export::trace::{parse_secs, render_csv, render_json, OUTAGE_CATEGORY};
use crate::metrics::columns::TRACES_COLUMNS;
use crate::metrics::ordinal::End;
use crate::metrics::trace::{
    breaker, wait, Budget, Fate, Span, SpanKind, StackNames, TraceLog, TraceWindow, TracedRequest,
    NO_SPAN,
};
use crate::model::outcome::Class;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// A span with nothing decided yet.
fn span(request: u32, parent: u32, kind: SpanKind, stack: u16, depth: u8, send: u64) -> Span {
    Span::new(request, parent, kind, (stack, depth), 1, send)
}

/// Fills a span's arrival, service start, end (with its outcome) and done (with its
/// fate, the same class).
fn went(mut s: Span, arrive: u64, start: Option<u64>, end: u64, class: Class, done: u64) -> Span {
    s.arrive = Some(arrive);
    s.start = start;
    s.end = Some(end);
    s.outcome = Some(End::Class(class));
    s.done = Some(done);
    s.fate = Some(Fate::Answered(class));
    s
}

/// Request 7 calls `api` through layer `client`; its first attempt times out at 1 s
/// while `api` still serves it (to 1.3 s, an orphan) and calls `db` through `pool`;
/// the retry at 1.1 s (after a backoff and a Retry-After) succeeds at 3 s. Request 12
/// fails once and its retry is refused by the budget. Two outages overlap.
pub(super) fn log() -> TraceLog {
    use SpanKind::{Attempt, Call};
    let mut spans = vec![
        went(
            span(0, NO_SPAN, Call, 0, 0, 500 * MS),
            500 * MS,
            None,
            3 * S,
            Class::Success,
            3 * S,
        ),
        went(
            span(0, 0, Attempt, 0, 1, 500 * MS),
            501 * MS,
            Some(600 * MS),
            S,
            Class::Timeout,
            1300 * MS,
        ),
        went(
            span(0, 1, Call, 1, 0, 610 * MS),
            610 * MS,
            None,
            1200 * MS,
            Class::Success,
            1200 * MS,
        ),
        went(
            span(0, 2, Attempt, 1, 1, 610 * MS),
            611 * MS + 1,
            Some(611 * MS + 1),
            1200 * MS,
            Class::Success,
            1200 * MS,
        ),
        went(
            span(1, NO_SPAN, Call, 0, 0, 1050 * MS),
            1050 * MS,
            None,
            1350 * MS,
            Class::Error,
            1350 * MS,
        ),
        went(
            span(1, 4, Attempt, 0, 1, 1050 * MS),
            1051 * MS,
            Some(1052 * MS),
            1300 * MS,
            Class::Error,
            1300 * MS,
        ),
        went(
            span(0, 0, Attempt, 0, 1, 1100 * MS),
            1101 * MS,
            Some(1500 * MS),
            3 * S,
            Class::Success,
            3 * S,
        ),
        span(1, 4, Attempt, 0, 1, 1350 * MS),
    ];
    // The timeout's end is not the fate's class: the service answered, too late.
    spans[1].fate = Some(Fate::Answered(Class::Success));
    spans[1].breaker = breaker::INSIDE_ADMITTED;
    spans[5].breaker = breaker::INSIDE_ADMITTED;
    spans[6].attempt = 2;
    spans[6].wait = 100 * MS;
    spans[6].wait_reason = wait::BACKOFF | wait::RETRY_AFTER;
    spans[6].budget = Some(Budget::Granted);
    spans[6].breaker = breaker::INSIDE_ADMITTED;
    let refused = &mut spans[7];
    refused.attempt = 2;
    refused.end = Some(1350 * MS);
    refused.outcome = Some(End::Class(Class::BudgetExhausted));
    refused.wait = 50 * MS;
    refused.wait_reason = wait::BACKOFF;
    refused.budget = Some(Budget::Refused);
    let stack = |caller: &str, service: &str, layer: &str| StackNames {
        caller: caller.into(),
        service: service.into(),
        layers: vec![layer.into()],
    };
    TraceLog {
        seed: 42,
        sample_seed: 9_000_000_000_000_000_001,
        population: 100,
        fleets: vec!["web".into()],
        services: vec!["api".into(), "db".into()],
        stacks: vec![stack("web", "api", "client"), stack("api", "db", "pool")],
        windows: vec![
            TraceWindow {
                start: S,
                end: 3 * S,
                service: Some("db".into()),
            },
            TraceWindow {
                start: 2500 * MS,
                end: 4 * S,
                service: None,
            },
        ],
        requests: vec![
            TracedRequest {
                ordinal: 7,
                fleet: 0,
                client: 3,
                arrival: 500 * MS,
                end: Some(3 * S),
                outcome: Some(Class::Success),
                root: 0,
            },
            TracedRequest {
                ordinal: 12,
                fleet: 0,
                client: 0,
                arrival: 1050 * MS,
                end: Some(1350 * MS),
                outcome: Some(Class::Error),
                root: 4,
            },
        ],
        spans,
        end: 10 * S,
        truncated: false,
    }
}

const EXPECTED_CSV: &str = "\
request,fleet,client,span,parent,kind,caller,service,layer,attempt,send,arrive,start,end,outcome,done,fate,wait,wait_reason,budget,breaker
7,web,3,0,,call,web,api,,1,0.5,0.5,,3,success,3,success,0,,,
7,web,3,1,0,attempt,web,api,client,1,0.5,0.501,0.6,1,timeout,1.3,success,0,,,inside:admitted
7,web,3,2,1,call,api,db,,1,0.61,0.61,,1.2,success,1.2,success,0,,,
7,web,3,3,2,attempt,api,db,pool,1,0.61,0.611000001,0.611000001,1.2,success,1.2,success,0,,,
7,web,3,6,0,attempt,web,api,client,2,1.1,1.101,1.5,3,success,3,success,0.1,backoff+retry_after,granted,inside:admitted
12,web,0,4,,call,web,api,,1,1.05,1.05,,1.35,error,1.35,error,0,,,
12,web,0,5,4,attempt,web,api,client,1,1.05,1.051,1.052,1.3,error,1.3,error,0,,,inside:admitted
12,web,0,7,4,attempt,web,api,client,2,1.35,,,1.35,budget_exhausted,,,0.05,backoff,refused,
";

#[test]
fn traces_csv_has_one_row_per_span_by_request_then_span() {
    let csv = render_csv(&log());
    assert_eq!(csv, EXPECTED_CSV);
    assert_eq!(
        csv.lines().next().unwrap(),
        TRACES_COLUMNS.join(","),
        "the header is the catalog's"
    );
    assert_eq!(
        render_csv(&TraceLog::default()),
        format!("{}\n", TRACES_COLUMNS.join(","))
    );
}

#[test]
fn every_time_in_traces_csv_reads_back_to_its_nanosecond() {
    let log = log();
    let csv = render_csv(&log);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let s = &log.spans[rec[col("span")].parse::<usize>().unwrap()];
        let t = |name: &str| {
            let cell = &rec[col(name)];
            (!cell.is_empty()).then(|| parse_secs(cell).unwrap_or_else(|| panic!("{cell}")))
        };
        assert_eq!(t("send"), Some(s.send));
        assert_eq!(t("arrive"), s.arrive);
        assert_eq!(t("start"), s.start);
        assert_eq!(t("end"), s.end);
        assert_eq!(t("done"), s.done);
        assert_eq!(t("wait"), Some(s.wait));
        rows += 1;
    }
    assert_eq!(rows, log.spans.len());
    // Any time at all, not only these.
    for ns in [0, 1, 999_999_999, S, 123_456_789_012_345, u64::MAX] {
        let text = crate::export::trace::secs(ns);
        assert_eq!(parse_secs(&text), Some(ns), "{text}");
    }
}

/// The events of `trace.json`, after checking each has the fields of its phase.
fn events(json: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(json).expect("trace.json parses");
    assert_eq!(v["displayTimeUnit"], "ms");
    let events = v["traceEvents"].as_array().expect("traceEvents").clone();
    for e in &events {
        for f in ["name", "ph", "ts", "pid", "tid"] {
            assert!(e.get(f).is_some(), "{f} missing: {e}");
        }
        assert!(e["name"].is_string() && e["ts"].is_number(), "{e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        match e["ph"].as_str().unwrap() {
            "X" => assert!(e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}"),
            "i" => assert!(
                ["g", "p", "t"].contains(&e["s"].as_str().unwrap_or("")),
                "{e}"
            ),
            "M" => assert!(
                e["args"]["name"].is_string() || e["args"]["sort_index"].is_u64(),
                "{e}"
            ),
            other => panic!("phase {other} is not one retrysim writes: {e}"),
        }
        if e["ph"] == "M" && e["name"].as_str().unwrap().ends_with("_name") {
            assert!(e["args"]["name"].is_string(), "{e}");
        }
    }
    events
}

#[test]
fn trace_json_is_the_chrome_trace_event_format() {
    let log = log();
    let json = render_json(&log);
    assert_eq!(json, render_json(&log), "the same log gives the same bytes");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["otherData"]["seed"], 42);
    assert_eq!(v["otherData"]["sample_seed"], 9_000_000_000_000_000_001u64);
    assert_eq!(v["otherData"]["population"], 100);
    let ev = events(&json);

    // Processes: the fleet, the services, the outages.
    let names: BTreeMap<u64, String> = ev
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pid = |n: &str| *names.iter().find(|(_, v)| *v == n).unwrap().0;
    assert_eq!(names.len(), 4, "{names:?}");
    let (web, api, db, outages) = (
        pid("fleet web"),
        pid("service api"),
        pid("service db"),
        pid("outages"),
    );

    // Every thread an event uses is named.
    let threads: BTreeSet<(u64, u64)> = ev
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
        .collect();
    for e in ev.iter().filter(|e| e["ph"] != "M") {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(threads.contains(&key), "unnamed thread {key:?}: {e}");
    }

    // A span on its maker's side carries every traces.csv field; times are exact µs.
    let x = |name: &str, p: u64| -> Vec<&serde_json::Value> {
        ev.iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name && e["pid"] == p)
            .collect()
    };
    let first = x("client attempt 1", web);
    assert_eq!(first.len(), 2, "one per request");
    let a = first
        .iter()
        .find(|e| e["tid"] == 7)
        .expect("request 7's first attempt");
    assert_eq!(a["cat"], "attempt");
    for c in TRACES_COLUMNS {
        assert!(a["args"].get(c).is_some(), "args lacks {c}: {a}");
    }
    assert_eq!(a["args"]["outcome"], "timeout");
    assert_eq!(a["args"]["fate"], "success");
    assert!(a["args"]["parent"].is_u64() && a["args"]["layer"] == "client");
    assert_eq!(
        (a["ts"].as_f64(), a["dur"].as_f64()),
        (Some(500_000.0), Some(500_000.0))
    );
    // The downstream call is made by the service that serves the attempt.
    assert_eq!(x("call db", api).len(), 1);
    assert_eq!(x("pool attempt 1", api).len(), 1);
    assert!(json.contains("\"ts\":611000.001"), "an exact fractional µs");

    // The orphan is served past its timeout while its retry queues: two threads of
    // request 7 at the service, each nested.
    let serve = x("serve", api);
    let queue = x("queue", api);
    assert_eq!(serve.len(), 3);
    let orphan = serve.iter().find(|e| e["ts"] == 600_000).unwrap();
    assert_eq!(orphan["dur"], 700_000, "served to done, not to the timeout");
    let retry_queue = queue.iter().find(|e| e["ts"] == 1_101_000).unwrap();
    assert_ne!(orphan["tid"], retry_queue["tid"]);
    let mut by_thread: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let (t, d) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        by_thread
            .entry((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
            .or_default()
            .push((t, t + d));
    }
    for (key, slices) in &by_thread {
        for (i, a) in slices.iter().enumerate() {
            for b in &slices[i + 1..] {
                let disjoint = a.1 <= b.0 || b.1 <= a.0;
                let nested = (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
                assert!(disjoint || nested, "{key:?}: {a:?} and {b:?} overlap");
            }
        }
    }

    // The refusal is an instant on the fleet's thread of request 12.
    let refusals: Vec<_> = ev.iter().filter(|e| e["ph"] == "i").collect();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0]["name"], "retry budget refused");
    assert_eq!(
        (refusals[0]["pid"].as_u64(), refusals[0]["tid"].as_u64()),
        (Some(web), Some(12))
    );
    assert_eq!(refusals[0]["ts"], 1_350_000);

    // Outage windows: overlapping, so on two threads.
    let outs: Vec<_> = ev.iter().filter(|e| e["cat"] == OUTAGE_CATEGORY).collect();
    assert_eq!(outs.len(), 2);
    assert!(outs.iter().all(|e| e["pid"] == outages && e["ph"] == "X"));
    assert_ne!(outs[0]["tid"], outs[1]["tid"]);
    assert_eq!(outs[0]["name"], "outage at db");
    assert_eq!(db, pid("service db"));

    // An empty log is a valid, empty trace.
    assert!(events(&render_json(&TraceLog::default())).is_empty());
}

/// A writer that takes `room` bytes, then fails.
struct Full {
    room: usize,
    taken: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.taken >= self.room {
            return Err(std::io::Error::other("the disk is full"));
        }
        let n = buf.len().min(self.room - self.taken);
        self.taken += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Issue 38: the trace files are written to a stream, the same bytes as rendered, and
/// a failing stream is an error, not a file cut short.
#[test]
fn the_trace_files_stream_the_bytes_they_render_and_report_a_failed_write() {
    let log = log();
    let (mut json, mut csv) = (Vec::new(), Vec::new());
    crate::export::trace::write_json(&log, &mut json).unwrap();
    crate::export::trace::write_csv(&log, &mut csv).unwrap();
    assert_eq!(String::from_utf8(json.clone()).unwrap(), render_json(&log));
    assert_eq!(String::from_utf8(csv.clone()).unwrap(), render_csv(&log));
    for room in [0, 10, json.len() / 2] {
        let mut w = Full { room, taken: 0 };
        assert!(crate::export::trace::write_json(&log, &mut w).is_err());
    }
    let mut w = Full {
        room: csv.len() / 2,
        taken: 0,
    };
    assert!(crate::export::trace::write_csv(&log, &mut w).is_err());
}

/// Issue 38: a run traced to its cap of 1,000,000 spans (1,111 a request) writes
/// `trace.json` (about 540 MB) and `traces.csv` as streams, within 1 GiB of address
/// space; built in memory, `trace.json`'s text alone took 3.7 GB and aborted.
#[test]
fn a_trace_at_its_span_cap_is_written_in_bounded_memory() {
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
max_attempts = 10
[[fleets.layers]]
max_attempts = 10
[[fleets.layers]]
max_attempts = 10
"#;
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cap.toml"), text).unwrap();
    let args = [
        "run",
        "cap.toml",
        "--trace",
        "1000",
        "--no-plots",
        "-q",
        "--out",
        "t",
    ];
    let out = crate::tests::common::capped(d.path(), 1 << 10, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = d.path().join("t");
    let lines = |name: &str| {
        let f = std::fs::File::open(t.join(name)).unwrap();
        std::io::BufRead::lines(std::io::BufReader::new(f)).count()
    };
    assert_eq!(lines("traces.csv"), 1_000_001, "the header and every span");
    let json = t.join("trace.json");
    let len = std::fs::metadata(&json).unwrap().len();
    assert!(len > 400 << 20, "{len} bytes");
    let mut f = std::fs::File::open(&json).unwrap();
    let mut head = [0u8; 17];
    std::io::Read::read_exact(&mut f, &mut head).unwrap();
    assert_eq!(&head, b"{\"traceEvents\":[\n");
    std::io::Seek::seek(&mut f, std::io::SeekFrom::End(-40)).unwrap();
    let mut tail = String::new();
    std::io::Read::read_to_string(&mut f, &mut tail).unwrap();
    assert!(tail.ends_with(",\"truncated\":true}}\n"), "{tail}");
}
