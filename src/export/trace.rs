//! The request traces of a run ([`TraceLog`]) as files: `traces.csv`, one row per span,
//! and `trace.json`, the Chrome trace event format that Perfetto and `chrome://tracing`
//! open as a timeline.
//!
//! Times are integer nanoseconds in the model and are written exactly: `traces.csv` in
//! seconds ([`secs`]: the integer part, then up to nine decimals, trailing zeros
//! dropped), `trace.json` in microseconds (`ts`, `dur`: up to three decimals), so
//! [`parse_secs`] of a cell gives back the very nanosecond.
//!
//! `trace.json` is one JSON object: `traceEvents`, `displayTimeUnit` (`ms`) and
//! `otherData` (the run's `seed`, the `sample_seed`, the `population` sampled from, the
//! traced `requests`, the `spans`, the run's `end` in seconds, and `truncated`: whether
//! the log hit its cap on spans). Processes: one per fleet
//! (the client side, `fleet <name>`), one per service (`service <name>`), and
//! `outages`. Threads: one per traced request (`request <ordinal>`, `tid` = the
//! ordinal); where a request's slices on one process overlap without nesting (an
//! orphan still served while its retry queues, hedged copies, a downstream call that
//! outlives its attempt), the later ones go on further threads of that request
//! (`request <ordinal> · lane <k>`, `tid` = ordinal + (k - 1) × a power of ten above
//! every ordinal), since a viewer nests the slices of one thread.
//!
//! Events, per span in `traces.csv`'s order:
//! - an `X` slice on the maker's process (the fleet, or the service whose attempt made
//!   a downstream call) from `send` to `end` (to the run's end when the maker never
//!   learned), named `call <service>`, `<layer> attempt <k>` or `<layer> hedge <k>`,
//!   category its `kind`, with every `traces.csv` field in `args`;
//! - for an attempt at a service, `X` slices on the service's process: `queue` from
//!   `arrive` to `start` (when it waited), `serve` from `start` to `done` (to the run's
//!   end when still going);
//! - an instant (`i`, thread scope) at `send` for each refusal: `retry budget refused`,
//!   `rate limiter refused`, `breaker rejected (inside)`, `breaker rejected (outside)`,
//!   `deadline refused retry` (its backoff would pass the deadline).
//!
//! Each outage window is an `X` slice of category [`OUTAGE_CATEGORY`] on `outages`; and
//! `M` events name and order the processes and threads. The bytes depend on the log
//! alone.

use std::collections::BTreeMap;

use serde::ser::{Error as _, SerializeMap};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::engine::Nanos;
use crate::metrics::columns::TRACES_COLUMNS;
use crate::metrics::ordinal::End;
use crate::metrics::trace::{breaker, wait, Budget, SpanKind, TraceLog, NO_SPAN};
use crate::model::outcome::Class;

/// The file name of the Chrome trace.
pub const TRACE_JSON_FILE: &str = "trace.json";

/// The category (`cat`) of the outage windows' events in `trace.json` (the swimlane
/// chart reads them back).
pub const OUTAGE_CATEGORY: &str = "outage";

/// Nanoseconds in a second.
const SECOND: Nanos = crate::engine::time::SECOND;

/// `ns` as exact decimal text in units of `10^digits` nanoseconds: the integer part,
/// then the remainder's `digits` decimals with trailing zeros dropped.
fn exact(ns: Nanos, digits: u32) -> String {
    let unit = 10u64.pow(digits);
    let (whole, frac) = (ns / unit, ns % unit);
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:0width$}", width = digits as usize);
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// A time in seconds, exactly: `12.3456789`, `3` for whole seconds, `0.000000001`.
///
/// ```
/// use retrysim::export::trace::{parse_secs, secs};
/// assert_eq!(secs(12_345_678_900), "12.3456789");
/// assert_eq!(secs(3_000_000_000), "3");
/// assert_eq!(secs(1), "0.000000001");
/// assert_eq!(parse_secs(&secs(u64::MAX)), Some(u64::MAX));
/// ```
pub fn secs(ns: Nanos) -> String {
    exact(ns, 9)
}

/// A time in microseconds, exactly (`trace.json`'s `ts` and `dur`): `12345.678`.
pub fn micros(ns: Nanos) -> String {
    exact(ns, 3)
}

/// Reads a time [`secs`] wrote (digits, then optionally `.` and one to nine digits)
/// back to nanoseconds; `None` for anything else or past `u64::MAX` ns.
///
/// ```
/// use retrysim::export::trace::parse_secs;
/// assert_eq!(parse_secs("12.3456789"), Some(12_345_678_900));
/// assert_eq!(parse_secs("0.5"), Some(500_000_000));
/// assert_eq!(parse_secs("1e3"), None);
/// assert_eq!(parse_secs("0.0000000001"), None);
/// ```
pub fn parse_secs(text: &str) -> Option<Nanos> {
    let (whole, frac) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) {
        return None;
    }
    let mut ns = whole.parse::<u64>().ok()?.checked_mul(SECOND)?;
    if let Some(f) = frac {
        if !digits(f) || f.len() > 9 {
            return None;
        }
        let scale = 10u64.pow(9 - f.len() as u32);
        ns = ns.checked_add(f.parse::<u64>().ok()? * scale)?;
    }
    Some(ns)
}

/// One field of a span's row, typed for the JSON `args` (the CSV writes its text).
#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// Nothing: an empty cell, `null`.
    Null,
    /// A whole number.
    Int(u64),
    /// A time, written in seconds by [`secs`].
    Secs(Nanos),
    /// A name.
    Text(String),
    /// A flag.
    Bool(bool),
}

impl Val {
    /// The CSV cell.
    fn text(&self) -> String {
        match self {
            Val::Null => String::new(),
            Val::Int(n) => n.to_string(),
            Val::Secs(t) => secs(*t),
            Val::Text(s) => s.clone(),
            Val::Bool(b) => b.to_string(),
        }
    }

    /// Text, or nothing when empty.
    fn name(s: impl Into<String>) -> Val {
        let s = s.into();
        if s.is_empty() {
            Val::Null
        } else {
            Val::Text(s)
        }
    }
}

impl Serialize for Val {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Val::Null => s.serialize_none(),
            Val::Int(n) => s.serialize_u64(*n),
            Val::Secs(t) => raw(secs(*t)).map_err(S::Error::custom)?.serialize(s),
            Val::Text(t) => s.serialize_str(t),
            Val::Bool(b) => s.serialize_bool(*b),
        }
    }
}

/// Number text (as [`secs`] and [`micros`] write it) as a JSON number.
fn raw(text: String) -> Result<Box<RawValue>, serde_json::Error> {
    RawValue::from_string(text)
}

/// The fields of span `i` of `log`, in [`TRACES_COLUMNS`] order.
fn row(log: &TraceLog, i: usize) -> [Val; TRACES_COLUMNS.len()] {
    let s = &log.spans[i];
    let req = log.requests.get(s.request as usize);
    let stack = log.stacks.get(usize::from(s.stack));
    let opt = |t: Option<Nanos>| t.map_or(Val::Null, Val::Secs);
    [
        req.map_or(Val::Null, |r| Val::Int(r.ordinal)),
        req.and_then(|r| log.fleets.get(usize::from(r.fleet)))
            .map_or(Val::Null, |f| Val::name(f.as_str())),
        req.map_or(Val::Null, |r| Val::Int(u64::from(r.client))),
        Val::Int(i as u64),
        if s.parent == NO_SPAN {
            Val::Null
        } else {
            Val::Int(u64::from(s.parent))
        },
        Val::Text(s.kind.name().to_string()),
        stack.map_or(Val::Null, |st| Val::name(st.caller.as_str())),
        stack.map_or(Val::Null, |st| Val::name(st.service.as_str())),
        log.layer_name(s).map_or(Val::Null, Val::name),
        Val::Int(u64::from(s.attempt)),
        Val::Secs(s.send),
        opt(s.arrive),
        opt(s.start),
        opt(s.end),
        s.outcome.map_or(Val::Null, |o| Val::name(o.name())),
        opt(s.done),
        s.fate.map_or(Val::Null, |f| Val::name(f.name())),
        Val::Secs(s.wait),
        Val::name(wait::names(s.wait_reason)),
        s.budget.map_or(Val::Null, |b| Val::name(b.name())),
        Val::name(breaker::names(s.breaker)),
    ]
}

/// The spans of `log` in file order: by the ordinal of their request, then by index (a
/// span of no known request last).
fn order(log: &TraceLog) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..log.spans.len()).collect();
    idx.sort_by_key(|&i| {
        let r = log.spans[i].request as usize;
        (log.requests.get(r).map_or(u64::MAX, |r| r.ordinal), i)
    });
    idx
}

/// `traces.csv`: the header of [`TRACES_COLUMNS`], then one row per span, ordered by
/// request ordinal, then span index.
pub fn render_csv(log: &TraceLog) -> String {
    let mut w = super::csv::writer();
    let _ = w.write_record(TRACES_COLUMNS);
    for i in order(log) {
        let _ = w.write_record(row(log, i).iter().map(Val::text));
    }
    super::csv::text(w)
}

/// `args` of an event: named values, in order.
struct Args(Vec<(&'static str, Val)>);

impl Serialize for Args {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// One trace event. `tid` is filled in once the lanes are known.
struct Event {
    name: String,
    cat: Option<&'static str>,
    ph: &'static str,
    ts: Nanos,
    dur: Option<Nanos>,
    /// An instant's scope.
    s: Option<&'static str>,
    pid: u64,
    tid: u128,
    args: Args,
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 6
            + usize::from(self.cat.is_some())
            + usize::from(self.dur.is_some())
            + usize::from(self.s.is_some());
        let mut m = s.serialize_map(Some(n))?;
        m.serialize_entry("name", &self.name)?;
        if let Some(c) = self.cat {
            m.serialize_entry("cat", c)?;
        }
        m.serialize_entry("ph", self.ph)?;
        m.serialize_entry("ts", &raw(micros(self.ts)).map_err(S::Error::custom)?)?;
        if let Some(d) = self.dur {
            m.serialize_entry("dur", &raw(micros(d)).map_err(S::Error::custom)?)?;
        }
        if let Some(sc) = self.s {
            m.serialize_entry("s", sc)?;
        }
        m.serialize_entry("pid", &self.pid)?;
        m.serialize_entry("tid", &self.tid)?;
        m.serialize_entry("args", &self.args)?;
        m.end()
    }
}

/// The processes of a trace: fleets, services (those of the log, then any other a
/// stack names), outages.
struct Pids {
    fleets: usize,
    services: Vec<String>,
}

impl Pids {
    fn of(log: &TraceLog) -> Pids {
        let mut services = log.services.clone();
        for st in &log.stacks {
            if !services.contains(&st.service) {
                services.push(st.service.clone());
            }
        }
        Pids {
            fleets: log.fleets.len(),
            services,
        }
    }

    fn fleet(&self, k: usize) -> u64 {
        1 + k as u64
    }

    fn service(&self, name: &str) -> u64 {
        let k = self.services.iter().position(|s| s == name).unwrap_or(0);
        1 + (self.fleets + k) as u64
    }

    fn outages(&self) -> u64 {
        1 + (self.fleets + self.services.len()) as u64
    }
}

/// The lane of each slice `(start, end)`: in a lane, slices are disjoint or nested
/// (what a viewer draws on one thread). Greedy, by start, longer first.
fn pack(slices: &[(Nanos, Nanos)]) -> Vec<usize> {
    let mut by_start: Vec<usize> = (0..slices.len()).collect();
    by_start.sort_by_key(|&k| (slices[k].0, std::cmp::Reverse(slices[k].1), k));
    let mut lanes: Vec<Vec<Nanos>> = Vec::new();
    let mut out = vec![0; slices.len()];
    for k in by_start {
        let (a, b) = slices[k];
        let mut placed = None;
        for (j, open) in lanes.iter_mut().enumerate() {
            while open.last().is_some_and(|&e| e <= a) {
                open.pop();
            }
            if open.last().is_none_or(|&e| e >= b) {
                open.push(b);
                placed = Some(j);
                break;
            }
        }
        out[k] = placed.unwrap_or_else(|| {
            lanes.push(vec![b]);
            lanes.len() - 1
        });
    }
    out
}

/// A metadata event.
fn meta(name: &'static str, pid: u64, tid: u128, key: &'static str, v: Val) -> Event {
    Event {
        name: name.to_string(),
        cat: None,
        ph: "M",
        ts: 0,
        dur: None,
        s: None,
        pid,
        tid,
        args: Args(vec![(key, v)]),
    }
}

/// `trace.json`: the Chrome trace event format (see the module docs).
pub fn render_json(log: &TraceLog) -> String {
    let pids = Pids::of(log);
    let run_end = log.end;
    let columns = TRACES_COLUMNS;
    // Events of the spans, each with the (pid, request) whose lanes it is packed in.
    let mut events: Vec<Event> = Vec::new();
    let mut slot: Vec<Option<(u64, u32)>> = Vec::new();
    // The maker slice's event of each span (its instants share its thread).
    let mut maker_event: BTreeMap<usize, usize> = BTreeMap::new();
    let mut instants: Vec<(usize, usize)> = Vec::new();
    for i in order(log) {
        let s = &log.spans[i];
        let Some(req) = log.requests.get(s.request as usize) else {
            continue;
        };
        let stack = log.stacks.get(usize::from(s.stack));
        let service = stack.map_or("", |st| st.service.as_str());
        let layer = log.layer_name(s).unwrap_or("");
        let pid = maker_pid(log, &pids, i, usize::from(req.fleet));
        let fields = row(log, i);
        let name = match s.kind {
            SpanKind::Call => format!("call {service}"),
            SpanKind::Attempt => format!("{layer} attempt {}", s.attempt),
            SpanKind::Hedge => format!("{layer} hedge {}", s.attempt),
        };
        let stop = s.end.unwrap_or(run_end).max(s.send);
        maker_event.insert(i, events.len());
        events.push(Event {
            name: name.trim_start().to_string(),
            cat: Some(s.kind.name()),
            ph: "X",
            ts: s.send,
            dur: Some(stop - s.send),
            s: None,
            pid,
            tid: 0,
            args: Args(columns.iter().copied().zip(fields).collect()),
        });
        slot.push(Some((pid, s.request)));
        let refusals = [
            (s.budget == Some(Budget::Refused), "retry budget refused"),
            (
                s.budget == Some(Budget::LimiterRefused),
                "rate limiter refused",
            ),
            (
                s.breaker & breaker::INSIDE_REJECTED != 0,
                "breaker rejected (inside)",
            ),
            (
                s.breaker & breaker::OUTSIDE_REJECTED != 0,
                "breaker rejected (outside)",
            ),
            // Refused before it left (never arrived, ended as it was made) because the
            // backoff would pass the deadline or the layer's total_timeout.
            (
                s.kind != SpanKind::Call
                    && s.arrive.is_none()
                    && s.end == Some(s.send)
                    && s.outcome == Some(End::Class(Class::DeadlineExceeded)),
                "deadline refused retry",
            ),
        ];
        let short = |layer: &str| {
            Args(vec![
                ("request", Val::Int(req.ordinal)),
                ("span", Val::Int(i as u64)),
                ("layer", Val::name(layer)),
                ("attempt", Val::Int(u64::from(s.attempt))),
            ])
        };
        for (_, what) in refusals.iter().filter(|(r, _)| *r) {
            instants.push((events.len(), i));
            events.push(Event {
                name: what.to_string(),
                cat: Some("refusal"),
                ph: "i",
                ts: s.send,
                dur: None,
                s: Some("t"),
                pid,
                tid: 0,
                args: short(layer),
            });
            slot.push(None);
        }
        if !log.at_service(s) {
            continue;
        }
        let Some(arrive) = s.arrive else { continue };
        let spid = pids.service(service);
        let finish = s.done.unwrap_or(run_end);
        let served = |name: &str, a: Nanos, b: Nanos| Event {
            name: name.to_string(),
            cat: Some(if name == "queue" { "queue" } else { "serve" }),
            ph: "X",
            ts: a,
            dur: Some(b.max(a) - a),
            s: None,
            pid: spid,
            tid: 0,
            args: Args(vec![
                ("request", Val::Int(req.ordinal)),
                ("span", Val::Int(i as u64)),
                ("attempt", Val::Int(u64::from(s.attempt))),
                ("fate", s.fate.map_or(Val::Null, |f| Val::name(f.name()))),
            ]),
        };
        let queued_until = s.start.unwrap_or(finish);
        if queued_until > arrive {
            events.push(served("queue", arrive, queued_until));
            slot.push(Some((spid, s.request)));
        }
        if let Some(start) = s.start {
            events.push(served("serve", start, finish));
            slot.push(Some((spid, s.request)));
        }
    }

    // Threads: the lanes of each (process, request).
    let mut stride: u128 = 10;
    let max_ordinal = log.requests.iter().map(|r| r.ordinal).max().unwrap_or(0);
    while stride <= u128::from(max_ordinal) {
        stride *= 10;
    }
    let mut groups: BTreeMap<(u64, u32), Vec<usize>> = BTreeMap::new();
    for (e, sl) in slot.iter().enumerate() {
        if let Some(key) = sl {
            groups.entry(*key).or_default().push(e);
        }
    }
    // (pid, request index, lane) → tid, for the thread metadata.
    let mut threads: Vec<(u64, u32, usize, u128)> = Vec::new();
    for ((pid, r), list) in &groups {
        let slices: Vec<(Nanos, Nanos)> = list
            .iter()
            .map(|&e| {
                let ev = &events[e];
                (ev.ts, ev.ts + ev.dur.unwrap_or(0))
            })
            .collect();
        let lanes = pack(&slices);
        let ordinal = u128::from(log.requests[*r as usize].ordinal);
        let lanes_used = lanes.iter().copied().max().map_or(0, |m| m + 1);
        for lane in 0..lanes_used {
            threads.push((*pid, *r, lane, ordinal + lane as u128 * stride));
        }
        for (&e, lane) in list.iter().zip(lanes) {
            events[e].tid = ordinal + lane as u128 * stride;
        }
    }
    for (e, span) in instants {
        if let Some(&m) = maker_event.get(&span) {
            events[e].tid = events[m].tid;
        }
    }

    // Outage windows, packed into lanes of their own.
    let windows: Vec<(Nanos, Nanos)> = log
        .windows
        .iter()
        .map(|w| (w.start, w.end.max(w.start)))
        .collect();
    let wlanes = pack(&windows);
    let mut outages: Vec<Event> = Vec::new();
    for (w, lane) in log.windows.iter().zip(&wlanes) {
        let (a, b) = (w.start, w.end.max(w.start));
        outages.push(Event {
            name: match &w.service {
                Some(sv) => format!("outage at {sv}"),
                None => "outage".to_string(),
            },
            cat: Some(OUTAGE_CATEGORY),
            ph: "X",
            ts: a,
            dur: Some(b - a),
            s: None,
            pid: pids.outages(),
            tid: *lane as u128,
            args: Args(vec![
                ("service", w.service.as_deref().map_or(Val::Null, Val::name)),
                ("start", Val::Secs(a)),
                ("end", Val::Secs(b)),
            ]),
        });
    }

    // Metadata: process names and order, thread names and order.
    let mut head: Vec<Event> = Vec::new();
    let process = |head: &mut Vec<Event>, pid: u64, name: String| {
        head.push(meta("process_name", pid, 0, "name", Val::Text(name)));
        head.push(meta(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            Val::Int(pid),
        ));
    };
    for (k, f) in log.fleets.iter().enumerate() {
        process(&mut head, pids.fleet(k), format!("fleet {f}"));
    }
    for sv in &pids.services {
        process(&mut head, pids.service(sv), format!("service {sv}"));
    }
    if !log.windows.is_empty() {
        process(&mut head, pids.outages(), "outages".to_string());
    }
    let mut rank: BTreeMap<u64, u64> = BTreeMap::new();
    for (pid, r, lane, tid) in &threads {
        let ordinal = log.requests[*r as usize].ordinal;
        let name = match lane {
            0 => format!("request {ordinal}"),
            k => format!("request {ordinal} · lane {}", k + 1),
        };
        let n = rank.entry(*pid).or_insert(0);
        head.push(meta("thread_name", *pid, *tid, "name", Val::Text(name)));
        head.push(meta(
            "thread_sort_index",
            *pid,
            *tid,
            "sort_index",
            Val::Int(*n),
        ));
        *n += 1;
    }
    let lanes_used = wlanes.iter().copied().max().map_or(0, |m| m + 1);
    for lane in 0..lanes_used {
        let name = match lane {
            0 => "outages".to_string(),
            k => format!("outages · lane {}", k + 1),
        };
        let pid = pids.outages();
        head.push(meta(
            "thread_name",
            pid,
            lane as u128,
            "name",
            Val::Text(name),
        ));
        head.push(meta(
            "thread_sort_index",
            pid,
            lane as u128,
            "sort_index",
            Val::Int(lane as u64),
        ));
    }

    let lines: Vec<String> = head
        .iter()
        .chain(&outages)
        .chain(&events)
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect();
    let other = Args(vec![
        ("seed", Val::Int(log.seed)),
        ("sample_seed", Val::Int(log.sample_seed)),
        ("population", Val::Int(log.population)),
        ("requests", Val::Int(log.requests.len() as u64)),
        ("spans", Val::Int(log.spans.len() as u64)),
        ("end", Val::Secs(log.end)),
        ("truncated", Val::Bool(log.truncated)),
    ]);
    let other = serde_json::to_string(&other).unwrap_or_default();
    let events = if lines.is_empty() {
        String::new()
    } else {
        format!("\n{}\n", lines.join(",\n"))
    };
    format!("{{\"traceEvents\":[{events}],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{other}}}\n")
}

/// The process of span `i`'s maker: the service serving the nearest attempt at a
/// service above it (a downstream call and its attempts), else the request's fleet.
fn maker_pid(log: &TraceLog, pids: &Pids, i: usize, fleet: usize) -> u64 {
    let mut p = log.spans[i].parent;
    // Bounded: a parent chain is never longer than the spans.
    for _ in 0..log.spans.len() {
        let Some(sp) = log.spans.get(p as usize).filter(|_| p != NO_SPAN) else {
            break;
        };
        if log.at_service(sp) {
            let st = log.stacks.get(usize::from(sp.stack));
            return pids.service(st.map_or("", |st| st.service.as_str()));
        }
        p = sp.parent;
    }
    pids.fleet(fleet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::trace::{Span, StackNames, TracedRequest};

    #[test]
    fn lanes_hold_disjoint_or_nested_slices_only() {
        // [0,10] holds [1,3] and [5,9]; [2,6] overlaps both; [10,12] follows.
        let s = [(0, 10), (1, 3), (2, 6), (5, 9), (10, 12), (6, 6)];
        assert_eq!(pack(&s), vec![0, 0, 1, 0, 0, 0]);
        assert!(pack(&[]).is_empty());
    }

    #[test]
    fn times_are_exact_in_seconds_and_microseconds() {
        assert_eq!(secs(0), "0");
        assert_eq!(secs(1_500_000_000), "1.5");
        assert_eq!(micros(1_500_000_001), "1500000.001");
        assert_eq!(micros(2_000), "2");
        for bad in [
            "",
            ".5",
            "1.",
            "-1",
            "1.0000000001",
            "1,5",
            " 1",
            "99999999999",
        ] {
            assert_eq!(parse_secs(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_name_with_a_comma_or_quote_is_quoted_in_the_csv_and_escaped_in_the_json() {
        let log = TraceLog {
            fleets: vec!["a,b".into()],
            stacks: vec![StackNames {
                caller: "a,b".into(),
                service: "say \"x\"".into(),
                layers: vec![],
            }],
            requests: vec![TracedRequest {
                ordinal: 0,
                fleet: 0,
                client: 0,
                arrival: 0,
                end: None,
                outcome: None,
                root: 0,
            }],
            spans: vec![Span::new(0, NO_SPAN, SpanKind::Call, (0, 0), 1, 5)],
            end: 1_000,
            ..TraceLog::default()
        };
        let csv = render_csv(&log);
        assert_eq!(
            csv.lines().nth(1),
            Some("0,\"a,b\",0,0,,call,\"a,b\",\"say \"\"x\"\"\",,1,0.000000005,,,,,,,0,,,")
        );
        let v: serde_json::Value = serde_json::from_str(&render_json(&log)).unwrap();
        let call = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "X")
            .unwrap()
            .clone();
        assert_eq!(call["name"], "call say \"x\"");
        // Never ended: the slice runs to the end of the run.
        assert_eq!(call["dur"], 0.995);
    }
}
