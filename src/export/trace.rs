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
use std::io::Write;

use serde::ser::{Error as _, SerializeMap};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::engine::Nanos;
use crate::metrics::columns::TRACES_COLUMNS;
use crate::metrics::ordinal::End;
use crate::metrics::trace::{breaker, wait, Budget, SpanKind, TraceLog, NO_SPAN};
use crate::model::outcome::Class;

/// The file name of the Chrome trace.
pub(crate) const TRACE_JSON_FILE: &str = "trace.json";

/// The category (`cat`) of the outage windows' events in `trace.json` (the swimlane
/// chart reads them back).
pub(crate) const OUTAGE_CATEGORY: &str = "outage";

/// Nanoseconds in a second.
#[cfg(test)]
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
pub(crate) fn secs(ns: Nanos) -> String {
    exact(ns, 9)
}

/// A time in microseconds, exactly (`trace.json`'s `ts` and `dur`): `12345.678`.
pub(crate) fn micros(ns: Nanos) -> String {
    exact(ns, 3)
}

/// Reads a time [`secs`] wrote (digits, then optionally `.` and one to nine digits)
/// back to nanoseconds; `None` for anything else or past `u64::MAX` ns.
#[cfg(test)]
pub(crate) fn parse_secs(text: &str) -> Option<Nanos> {
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
pub(crate) enum Val {
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
pub(crate) fn row(log: &TraceLog, i: usize) -> [Val; TRACES_COLUMNS.len()] {
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
pub(crate) fn order(log: &TraceLog) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..log.spans.len()).collect();
    idx.sort_by_key(|&i| {
        let r = log.spans[i].request as usize;
        (log.requests.get(r).map_or(u64::MAX, |r| r.ordinal), i)
    });
    idx
}

/// `traces.csv`: the header of [`TRACES_COLUMNS`], then one row per span, ordered by
/// request ordinal, then span index.
#[cfg(test)]
pub(crate) fn render_csv(log: &TraceLog) -> String {
    let mut out = Vec::new();
    // Writing into memory cannot fail, and every field written is UTF-8.
    let _ = write_csv(log, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `traces.csv` (see [`render_csv`]) to `w` a row at a time, every field
/// through the formula guard of [`super::csv::Records`].
pub(crate) fn write_csv<W: Write + ?Sized>(log: &TraceLog, w: &mut W) -> std::io::Result<()> {
    let mut w = super::csv::Records::to(w);
    w.write(TRACES_COLUMNS)?;
    for i in order(log) {
        w.write(row(log, i).iter().map(Val::text))?;
    }
    w.flush()
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

/// `trace.json`: the Chrome trace event format (see the module docs), as text.
#[cfg(test)]
pub(crate) fn render_json(log: &TraceLog) -> String {
    let mut out = Vec::new();
    // Writing into memory cannot fail, and every byte written is UTF-8.
    let _ = write_json(log, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// The refusals a span's instants show, in the order they are written.
const REFUSALS: [&str; 5] = [
    "retry budget refused",
    "rate limiter refused",
    "breaker rejected (inside)",
    "breaker rejected (outside)",
    "deadline refused retry",
];

/// What an event of a span shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shows {
    /// The maker's slice, `send` to `end`.
    Maker,
    /// An instant at `send`: refusal [`REFUSALS`]`[k]`.
    Refusal(u8),
    /// The wait at the service, `arrive` to `start`.
    Queue,
    /// The service, `start` to `done`.
    Serve,
}

/// An event of a span, as little as places it on the timeline: its name and `args` are
/// made from the span as it is written, so memory holds 40 bytes an event, not its
/// text.
#[derive(Debug, Clone, Copy)]
struct Slot {
    span: u32,
    shows: Shows,
    /// Lane within its (process, request); an instant's is its maker's.
    lane: u32,
    pid: u64,
    ts: Nanos,
    dur: Nanos,
}

/// The events of the spans of `log` in file order, lanes not yet known.
fn slots(log: &TraceLog, pids: &Pids) -> Vec<Slot> {
    let run_end = log.end;
    let mut out = Vec::new();
    for i in order(log) {
        let s = &log.spans[i];
        let Some(req) = log.requests.get(s.request as usize) else {
            continue;
        };
        let span = i as u32;
        let pid = maker_pid(log, pids, i, usize::from(req.fleet));
        let stop = s.end.unwrap_or(run_end).max(s.send);
        let slot = |shows, pid, ts, dur| Slot {
            span,
            shows,
            lane: 0,
            pid,
            ts,
            dur,
        };
        out.push(slot(Shows::Maker, pid, s.send, stop - s.send));
        let refused = [
            s.budget == Some(Budget::Refused),
            s.budget == Some(Budget::LimiterRefused),
            s.breaker & breaker::INSIDE_REJECTED != 0,
            s.breaker & breaker::OUTSIDE_REJECTED != 0,
            // Refused before it left (never arrived, ended as it was made) because the
            // backoff would pass the deadline or the layer's total_timeout.
            s.kind != SpanKind::Call
                && s.arrive.is_none()
                && s.end == Some(s.send)
                && s.outcome == Some(End::Class(Class::DeadlineExceeded)),
        ];
        for (k, _) in refused.iter().enumerate().filter(|(_, r)| **r) {
            out.push(slot(Shows::Refusal(k as u8), pid, s.send, 0));
        }
        if !log.at_service(s) {
            continue;
        }
        let Some(arrive) = s.arrive else { continue };
        let stack = log.stacks.get(usize::from(s.stack));
        let spid = pids.service(stack.map_or("", |st| st.service.as_str()));
        let finish = s.done.unwrap_or(run_end);
        let queued_until = s.start.unwrap_or(finish);
        if queued_until > arrive {
            out.push(slot(Shows::Queue, spid, arrive, queued_until - arrive));
        }
        if let Some(start) = s.start {
            out.push(slot(Shows::Serve, spid, start, finish.max(start) - start));
        }
    }
    out
}

/// Packs the slices of each (process, request) into lanes (see [`pack`]), sets each
/// slot's lane (an instant takes its maker's), and returns each (process, request
/// index, lanes used), by process then request.
fn place(log: &TraceLog, slots: &mut [Slot]) -> Vec<(u64, u32, usize)> {
    let request = |s: &Slot| log.spans[s.span as usize].request;
    let mut sliced: Vec<u32> = (0..slots.len() as u32)
        .filter(|&e| !matches!(slots[e as usize].shows, Shows::Refusal(_)))
        .collect();
    // Stable: each group keeps its events in file order.
    sliced.sort_by_key(|&e| {
        let s = &slots[e as usize];
        (s.pid, request(s))
    });
    let mut groups = Vec::new();
    let mut rest = &sliced[..];
    while let Some(&head) = rest.first() {
        let key = |e: u32| (slots[e as usize].pid, request(&slots[e as usize]));
        let k = key(head);
        let n = rest.iter().take_while(|&&e| key(e) == k).count();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        let slices: Vec<(Nanos, Nanos)> = group
            .iter()
            .map(|&e| {
                let s = &slots[e as usize];
                (s.ts, s.ts + s.dur)
            })
            .collect();
        let lanes = pack(&slices);
        let used = lanes.iter().copied().max().map_or(0, |m| m + 1);
        for (&e, lane) in group.iter().zip(lanes) {
            slots[e as usize].lane = lane as u32;
        }
        let first = &slots[group[0] as usize];
        groups.push((first.pid, request(first), used));
    }
    let mut maker_lane = 0;
    for s in slots.iter_mut() {
        match s.shows {
            Shows::Maker => maker_lane = s.lane,
            Shows::Refusal(_) => s.lane = maker_lane,
            _ => {}
        }
    }
    groups
}

/// The trace event of a slot; `stride` spaces a request's lanes apart in `tid`.
fn event_of(log: &TraceLog, slot: &Slot, stride: u128) -> Event {
    let i = slot.span as usize;
    let s = &log.spans[i];
    let req = &log.requests[s.request as usize];
    let tid = u128::from(req.ordinal) + u128::from(slot.lane) * stride;
    let layer = log.layer_name(s).unwrap_or("");
    let event = |name: String, cat, args| Event {
        name,
        cat: Some(cat),
        ph: "X",
        ts: slot.ts,
        dur: Some(slot.dur),
        s: None,
        pid: slot.pid,
        tid,
        args,
    };
    match slot.shows {
        Shows::Maker => {
            let service = log
                .stacks
                .get(usize::from(s.stack))
                .map_or("", |st| st.service.as_str());
            let name = match s.kind {
                SpanKind::Call => format!("call {service}"),
                SpanKind::Attempt => format!("{layer} attempt {}", s.attempt),
                SpanKind::Hedge => format!("{layer} hedge {}", s.attempt),
            };
            let args = Args(TRACES_COLUMNS.iter().copied().zip(row(log, i)).collect());
            event(name.trim_start().to_string(), s.kind.name(), args)
        }
        Shows::Refusal(k) => Event {
            name: REFUSALS[usize::from(k)].to_string(),
            cat: Some("refusal"),
            ph: "i",
            ts: slot.ts,
            dur: None,
            s: Some("t"),
            pid: slot.pid,
            tid,
            args: Args(vec![
                ("request", Val::Int(req.ordinal)),
                ("span", Val::Int(i as u64)),
                ("layer", Val::name(layer)),
                ("attempt", Val::Int(u64::from(s.attempt))),
            ]),
        },
        Shows::Queue | Shows::Serve => {
            let name = if slot.shows == Shows::Queue {
                "queue"
            } else {
                "serve"
            };
            let args = Args(vec![
                ("request", Val::Int(req.ordinal)),
                ("span", Val::Int(i as u64)),
                ("attempt", Val::Int(u64::from(s.attempt))),
                ("fate", s.fate.map_or(Val::Null, |f| Val::name(f.name()))),
            ]);
            event(name.to_string(), name, args)
        }
    }
}

/// The events of a `traceEvents` array being written, comma-separated, one a line.
struct Events<'a, W: Write + ?Sized> {
    w: &'a mut W,
    any: bool,
}

impl<W: Write + ?Sized> Events<'_, W> {
    fn push(&mut self, e: &Event) -> std::io::Result<()> {
        self.w.write_all(if self.any { b",\n" } else { b"\n" })?;
        self.any = true;
        serde_json::to_writer(&mut *self.w, e)?;
        Ok(())
    }
}

/// Writes `trace.json` (see the module docs) to `w` as it goes: the events are made
/// and written one at a time, so memory holds a few words an event, never the text.
/// Write `w` through a buffer (an [`AtomicFile`](crate::export::AtomicFile) is one).
pub(crate) fn write_json<W: Write + ?Sized>(log: &TraceLog, w: &mut W) -> std::io::Result<()> {
    let pids = Pids::of(log);
    let mut slots = slots(log, &pids);
    let groups = place(log, &mut slots);
    let mut stride: u128 = 10;
    let max_ordinal = log.requests.iter().map(|r| r.ordinal).max().unwrap_or(0);
    while stride <= u128::from(max_ordinal) {
        stride *= 10;
    }
    // Outage windows, packed into lanes of their own.
    let windows: Vec<(Nanos, Nanos)> = log
        .windows
        .iter()
        .map(|w| (w.start, w.end.max(w.start)))
        .collect();
    let wlanes = pack(&windows);

    w.write_all(b"{\"traceEvents\":[")?;
    let mut out = Events { w, any: false };
    // Metadata: process names and order, thread names and order.
    let mut processes: Vec<(u64, String)> = Vec::new();
    for (k, f) in log.fleets.iter().enumerate() {
        processes.push((pids.fleet(k), format!("fleet {f}")));
    }
    for sv in &pids.services {
        processes.push((pids.service(sv), format!("service {sv}")));
    }
    if !log.windows.is_empty() {
        processes.push((pids.outages(), "outages".to_string()));
    }
    for (pid, name) in processes {
        out.push(&meta("process_name", pid, 0, "name", Val::Text(name)))?;
        out.push(&meta(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            Val::Int(pid),
        ))?;
    }
    let mut rank: BTreeMap<u64, u64> = BTreeMap::new();
    for &(pid, r, used) in &groups {
        let ordinal = log.requests[r as usize].ordinal;
        for lane in 0..used {
            let tid = u128::from(ordinal) + lane as u128 * stride;
            let name = match lane {
                0 => format!("request {ordinal}"),
                k => format!("request {ordinal} · lane {}", k + 1),
            };
            let n = rank.entry(pid).or_insert(0);
            out.push(&meta("thread_name", pid, tid, "name", Val::Text(name)))?;
            out.push(&meta(
                "thread_sort_index",
                pid,
                tid,
                "sort_index",
                Val::Int(*n),
            ))?;
            *n += 1;
        }
    }
    let lanes_used = wlanes.iter().copied().max().map_or(0, |m| m + 1);
    for lane in 0..lanes_used {
        let name = match lane {
            0 => "outages".to_string(),
            k => format!("outages · lane {}", k + 1),
        };
        let pid = pids.outages();
        out.push(&meta(
            "thread_name",
            pid,
            lane as u128,
            "name",
            Val::Text(name),
        ))?;
        out.push(&meta(
            "thread_sort_index",
            pid,
            lane as u128,
            "sort_index",
            Val::Int(lane as u64),
        ))?;
    }
    for (w, lane) in log.windows.iter().zip(&wlanes) {
        let (a, b) = (w.start, w.end.max(w.start));
        out.push(&Event {
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
        })?;
    }
    for slot in &slots {
        out.push(&event_of(log, slot, stride))?;
    }
    let any = out.any;
    if any {
        w.write_all(b"\n")?;
    }
    let other = Args(vec![
        ("seed", Val::Int(log.seed)),
        ("sample_seed", Val::Int(log.sample_seed)),
        ("population", Val::Int(log.population)),
        ("requests", Val::Int(log.requests.len() as u64)),
        ("spans", Val::Int(log.spans.len() as u64)),
        ("end", Val::Secs(log.end)),
        ("truncated", Val::Bool(log.truncated)),
    ]);
    w.write_all(b"],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":")?;
    serde_json::to_writer(&mut *w, &other)?;
    w.write_all(b"}\n")?;
    w.flush()
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

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn secs_example() {
        use crate::export::trace::{parse_secs, secs};
        assert_eq!(secs(12_345_678_900), "12.3456789");
        assert_eq!(secs(3_000_000_000), "3");
        assert_eq!(secs(1), "0.000000001");
        assert_eq!(parse_secs(&secs(u64::MAX)), Some(u64::MAX));
    }

    #[test]
    fn parse_secs_example() {
        use crate::export::trace::parse_secs;
        assert_eq!(parse_secs("12.3456789"), Some(12_345_678_900));
        assert_eq!(parse_secs("0.5"), Some(500_000_000));
        assert_eq!(parse_secs("1e3"), None);
        assert_eq!(parse_secs("0.0000000001"), None);
    }
}
