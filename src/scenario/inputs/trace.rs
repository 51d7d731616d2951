//! A request trace replayed exactly: `arrival = { kind = "trace", file = "arrivals.csv",
//! time = "ts" }`, one CSV row per request, each sent at the time its row gives.
//!
//! The file is streamed, never held: at load it is read once through, in constant
//! memory, to check every row (times parse, are at least 0 and never go back; the
//! `client` and `write` cells parse) and to hash it for the manifest; each run then
//! opens it again and reads one row ahead of its clock. A run that reads the file to
//! its end checks its SHA-256 against the one checked; a run that stops reading earlier
//! (its duration is over) checks its size and modification time, so a file changed in
//! between stops the run with an error rather than replaying something else.
//!
//! Times are seconds (a number, up to nine decimals, read exactly to the nanosecond) or
//! RFC 3339 timestamps, placed relative to the first row: the first row arrives at 0,
//! and `speed` plays the trace faster. A row is at most [`MAX_ROW_BYTES`] long, and
//! a file at most [`MAX_TRACE_BYTES`].

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{field, hex, InputRecord};
use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::model::config::{ArrivalStream, Replayed, TraceSource};
use crate::model::field::{Ctx, R};
use crate::model::text::{fmt_num, fmt_time};
use crate::scenario::{ScenarioError, Source};

/// Largest trace file (4 GiB): it is streamed, so it may exceed what is read whole.
pub(crate) const MAX_TRACE_BYTES: u64 = 4 << 30;

/// Longest row of a trace, so a row (and the reader's memory) stays bounded.
pub(crate) const MAX_ROW_BYTES: u64 = 64 << 10;

/// The time column read when `time` is not written.
pub(crate) const DEFAULT_TIME_COLUMN: &str = "time";

/// Largest `speed`.
pub(crate) const MAX_SPEED: f64 = 1e6;

/// Row times kept to estimate the trace's rate over a window (for `explain`).
const MARKS: usize = 1024;

/// `arrival = { kind = "trace", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// The trace: a CSV file, one row per request, relative to the scenario file.
    pub file: String,
    /// The column of the arrival times: seconds, or RFC 3339 timestamps (default
    /// "time"); the first row arrives at 0.
    #[schemars(extend("default" = DEFAULT_TIME_COLUMN))]
    pub time: Option<String>,
    /// The column of the client sending each request: a whole number k is client k
    /// modulo `clients`; any other text is hashed to one (default: the clients in
    /// turn).
    pub client: Option<String>,
    /// The column marking writes, each cell 1, 0, true or false; without it writes
    /// are drawn with the fleet's `writes`.
    pub write: Option<String>,
    /// Clients the requests are spread over (default 1).
    #[schemars(extend("default" = 1))]
    pub clients: Option<u64>,
    /// Plays the trace faster: `speed` seconds of it per second of the run (default 1).
    #[schemars(extend("default" = 1.0))]
    pub speed: Option<f64>,
    /// What the check at load found, filled by [`check`] before validation.
    #[serde(skip)]
    #[schemars(skip)]
    pub checked: Option<Arc<Checked>>,
}

/// A trace file as the check at load found it: enough to open it again and know it is
/// the same file, and to estimate its rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The file, resolved.
    path: PathBuf,
    /// As written, and the key that names it (`fleets[0].arrival.file`).
    written: String,
    key: String,
    /// Size, SHA-256 and modification time when checked.
    bytes: u64,
    sha256: [u8; 32],
    modified: Option<SystemTime>,
    columns: Columns,
    /// Rows, and the first and last times (ns since the Unix epoch).
    rows: u64,
    first: i64,
    last: i64,
    /// The time (ns after the first) of every `stride`-th row, from the first.
    marks: Vec<i64>,
    stride: u64,
}

/// The columns read, by index, and their names.
#[derive(Debug, Clone, PartialEq)]
struct Columns {
    time: (usize, String),
    client: Option<(usize, String)>,
    write: Option<(usize, String)>,
}

/// One row read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    t: i64,
    client: Option<u64>,
    write: Option<bool>,
}

/// Reads the rows of a trace in order, the same at load and in a run.
struct Rows {
    rdr: csv::Reader<Tap>,
    rec: csv::StringRecord,
    columns: Columns,
    prev: Option<i64>,
}

impl Rows {
    /// Opens `path` (a regular file, within the cap) and reads its header; the
    /// columns are found by name at load (`names`) and given by [`Checked`] in a run.
    fn open(path: &Path, names: &ColumnNames) -> Result<(Rows, u64), String> {
        let (file, len) = crate::export::read::open(path)
            .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
        if len > MAX_TRACE_BYTES {
            return Err(format!(
                "cannot read '{}': the file holds {len} bytes, more than the {MAX_TRACE_BYTES} bytes (4 GiB) allowed for a trace",
                path.display()
            ));
        }
        if len == 0 {
            return Err("is empty".into());
        }
        let tap = Tap {
            file,
            hash: Sha256::new(),
            bytes: 0,
            cap: len.max(1),
            row: 0,
            line: 1,
            quoted: false,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(tap);
        let headers = rdr
            .headers()
            .map_err(|e| format!("its header: {}", csv_error(&e)))?
            .clone();
        let col = |name: &str, key: &str| -> Result<(usize, String), String> {
            let i = headers.iter().position(|h| h == name).ok_or_else(|| {
                format!(
                    "has no column \"{name}\" (`{key}`); its columns: {}",
                    headers
                        .iter()
                        .map(|h| format!("\"{h}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            Ok((i, name.to_string()))
        };
        let columns = Columns {
            time: col(&names.time, "time")?,
            client: names
                .client
                .as_deref()
                .map(|c| col(c, "client"))
                .transpose()?,
            write: names
                .write
                .as_deref()
                .map(|c| col(c, "write"))
                .transpose()?,
        };
        Ok((
            Rows {
                rdr,
                rec: csv::StringRecord::new(),
                columns,
                prev: None,
            },
            len,
        ))
    }

    /// The next row, `Ok(None)` at the end of the file.
    fn next(&mut self) -> Result<Option<Row>, String> {
        if !self
            .rdr
            .read_record(&mut self.rec)
            .map_err(|e| csv_error(&e))?
        {
            return Ok(None);
        }
        let line = self.rec.position().map_or(0, |p| p.line());
        let cell = |i: usize| self.rec.get(i).unwrap_or("");
        let (ti, tname) = &self.columns.time;
        let bad = |name: &str, why: String| format!("line {line}, column \"{name}\": {why}");
        let t = time_ns(cell(*ti)).map_err(|why| bad(tname, why))?;
        if let Some(prev) = self.prev {
            if t < prev {
                return Err(bad(
                    tname,
                    format!(
                        "times must not go back (found {} after {})",
                        cell(*ti),
                        secs(prev)
                    ),
                ));
            }
        }
        self.prev = Some(t);
        let client = match &self.columns.client {
            Some((i, name)) => Some(client_of(cell(*i)).map_err(|why| bad(name, why))?),
            None => None,
        };
        let write = match &self.columns.write {
            Some((i, name)) => Some(write_of(cell(*i)).map_err(|why| bad(name, why))?),
            None => None,
        };
        Ok(Some(Row { t, client, write }))
    }

    /// What was read: bytes and their SHA-256 so far.
    fn tap(&self) -> &Tap {
        self.rdr.get_ref()
    }
}

/// The column names as written.
struct ColumnNames {
    time: String,
    client: Option<String>,
    write: Option<String>,
}

/// The file under the CSV reader: hashes and counts the bytes read, refuses a row
/// longer than [`MAX_ROW_BYTES`] (a newline inside quotes does not end a row) and a
/// file that grew past its size when opened.
struct Tap {
    file: File,
    hash: Sha256,
    bytes: u64,
    cap: u64,
    /// Bytes of the row so far, the line it is on, and whether inside quotes.
    row: u64,
    line: u64,
    quoted: bool,
}

impl Read for Tap {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        let got = &buf[..n];
        self.hash.update(got);
        self.bytes += n as u64;
        if self.bytes > self.cap {
            return Err(std::io::Error::other(format!(
                "grew while it was read (past {} bytes)",
                self.cap
            )));
        }
        for &b in got {
            match b {
                b'"' => self.quoted = !self.quoted,
                b'\n' => {
                    self.line += 1;
                    if !self.quoted {
                        self.row = 0;
                        continue;
                    }
                }
                _ => {}
            }
            self.row += 1;
            if self.row > MAX_ROW_BYTES {
                return Err(std::io::Error::other(format!(
                    "line {}: a row is longer than the {MAX_ROW_BYTES} bytes allowed",
                    self.line
                )));
            }
        }
        Ok(n)
    }
}

/// A CSV error as a message: "line 3: ..." where the reader knows the line.
fn csv_error(e: &csv::Error) -> String {
    match (e.kind(), e.position()) {
        (csv::ErrorKind::Io(io), _) => io.to_string(),
        (_, Some(p)) => format!("line {}: {e}", p.line()),
        _ => e.to_string(),
    }
}

/// A time in ns since the Unix epoch: seconds written as digits (up to nine decimals
/// exact, more rounded), another number (`1e3`), or RFC 3339 (its fraction exact).
fn time_ns(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let too_far = || format!("is too far from 1970 (found {s})");
    let negative = || format!("must be at least 0 (found {s})");
    let (whole, frac) = if s.len() > 19 && s.as_bytes()[19] == b'.' && s.as_bytes()[4] == b'-' {
        // RFC 3339 with a fraction: the whole seconds through the series' parser.
        let n = s[20..].bytes().take_while(u8::is_ascii_digit).count();
        let whole = format!("{}{}", &s[..19], &s[20 + n..]);
        // A message quotes the time as written, not without its fraction.
        let secs = super::series::parse_time(&whole)
            .map_err(|_| super::series::parse_time(s).err().unwrap_or_default())?;
        (secs, &s[20..20 + n])
    } else if let Some((w, f)) = s.split_once('.').or(Some((s, ""))).filter(|(w, f)| {
        !w.is_empty()
            && w.bytes().all(|c| c.is_ascii_digit())
            && f.bytes().all(|c| c.is_ascii_digit())
    }) {
        (w.parse::<f64>().map_err(|_| too_far())?, f)
    } else {
        let v = super::series::parse_time(s)?;
        if v < 0.0 {
            return Err(negative());
        }
        if v.fract() == 0.0 && v < (i64::MAX / SECOND as i64) as f64 {
            // Whole seconds (RFC 3339 without a fraction): exact.
            return Ok(v as i64 * SECOND as i64);
        }
        let ns = (v * SECOND as f64).round();
        return if ns < i64::MAX as f64 {
            Ok(ns as i64)
        } else {
            Err(too_far())
        };
    };
    if whole < 0.0 {
        return Err(negative());
    }
    if whole >= (i64::MAX / SECOND as i64) as f64 {
        return Err(too_far());
    }
    let digits = frac.as_bytes();
    let mut ns: i64 = 0;
    for k in 0..9 {
        ns = ns * 10 + digits.get(k).map_or(0, |d| i64::from(d - b'0'));
    }
    if digits.get(9).is_some_and(|d| *d >= b'5') {
        ns += 1;
    }
    (whole as i64)
        .checked_mul(SECOND as i64)
        .and_then(|w| w.checked_add(ns))
        .ok_or_else(too_far)
}

/// ns since the epoch as seconds, for messages.
fn secs(t: i64) -> String {
    let (s, ns) = (t.div_euclid(1_000_000_000), t.rem_euclid(1_000_000_000));
    if ns == 0 {
        format!("{s}")
    } else {
        format!("{s}.{}", format!("{ns:09}").trim_end_matches('0'))
    }
}

/// A client cell: a whole number is itself; other text is hashed (FNV-1a, 64 bits).
fn client_of(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err("is empty: write the client (a whole number, or a name)".into());
    }
    if let Ok(k) = s.parse::<u64>() {
        return Ok(k);
    }
    Ok(s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }))
}

/// A write cell: 1, 0, true or false.
fn write_of(s: &str) -> Result<bool, String> {
    match s {
        "1" => Ok(true),
        "0" => Ok(false),
        _ if s.eq_ignore_ascii_case("true") => Ok(true),
        _ if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(format!(
            "must be 1, 0, true or false (found \"{}\")",
            s.chars().take(40).collect::<String>()
        )),
    }
}

/// Checks the trace `t` names at `key` (`fleets[0].arrival`), relative to `base`: reads
/// it through once in constant memory, and keeps what a run needs to replay it.
/// Returns its record for the manifest.
pub(crate) fn check(
    source: &Source,
    base: &Path,
    key: &str,
    t: &mut TraceFile,
) -> Result<InputRecord, ScenarioError> {
    let fkey = format!("{key}.file");
    let written = t.file.clone();
    if written.trim().is_empty() {
        return Err(field(source, fkey, "must name a file (found \"\")".into()));
    }
    let bad = |why: String| {
        let why = if why.starts_with("line ") {
            format!("at {why}")
        } else {
            why
        };
        if why.starts_with("cannot") {
            field(source, fkey.clone(), why)
        } else {
            field(source, fkey.clone(), format!("'{written}' {why}"))
        }
    };
    let path = base.join(&written);
    let names = ColumnNames {
        time: t
            .time
            .clone()
            .unwrap_or_else(|| DEFAULT_TIME_COLUMN.to_string()),
        client: t.client.clone(),
        write: t.write.clone(),
    };
    let (mut rows, len) = Rows::open(&path, &names).map_err(bad)?;
    let modified = rows.tap().file.metadata().and_then(|m| m.modified()).ok();
    let (mut n, mut first, mut last) = (0u64, 0i64, 0i64);
    let (mut marks, mut stride) = (Vec::with_capacity(MARKS), 1u64);
    while let Some(r) = rows.next().map_err(bad)? {
        if n == 0 {
            first = r.t;
        }
        if n.is_multiple_of(stride) {
            if marks.len() == MARKS {
                // Keep every other mark: the marks stay at most MARKS whatever the size.
                let kept: Vec<i64> = marks.iter().step_by(2).copied().collect();
                marks = kept;
                stride *= 2;
            }
            if n.is_multiple_of(stride) {
                marks.push(r.t - first);
            }
        }
        last = r.t;
        n += 1;
    }
    if n == 0 {
        return Err(bad("holds no rows".into()));
    }
    let tap = rows.tap();
    if tap.bytes != len {
        return Err(bad(format!(
            "changed while it was read ({len} bytes when opened, {} read)",
            tap.bytes
        )));
    }
    let sha256: [u8; 32] = tap.hash.clone().finalize().into();
    let record = InputRecord {
        key: fkey.clone(),
        file: written.clone(),
        bytes: len,
        sha256: hex(&sha256),
    };
    t.checked = Some(Arc::new(Checked {
        path,
        written,
        key: fkey,
        bytes: len,
        sha256,
        modified,
        columns: rows.columns.clone(),
        rows: n,
        first,
        last,
        marks,
        stride,
    }));
    Ok(record)
}

impl Checked {
    /// About how many rows come before `t` ns after the first (exact at the marks,
    /// linear between them).
    fn rows_before(&self, t: f64) -> f64 {
        let span = (self.last - self.first) as f64;
        if t > span {
            return self.rows as f64;
        }
        let k = self.marks.partition_point(|&m| (m as f64) < t);
        if k == 0 {
            return 0.0;
        }
        // Mark k - 1 (row (k - 1)·stride) is before t and mark k (or the last row) is
        // not: between one past the one and the other rows come before t.
        let t0 = self.marks[k - 1] as f64;
        let r0 = ((k as u64 - 1) * self.stride + 1) as f64;
        let (t1, r1) = match self.marks.get(k) {
            Some(&m) => (m as f64, (k as u64 * self.stride) as f64),
            None => (span, (self.rows - 1) as f64),
        };
        let frac = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
        (r0 + (r1 - r0).max(0.0) * frac).min(self.rows as f64)
    }
}

/// A checked trace, validated: the arrival source of its fleet.
#[derive(Debug)]
pub(crate) struct Trace {
    checked: Arc<Checked>,
    speed: f64,
}

impl TraceFile {
    /// The fleet's arrival source and clients, and what explain says of the trace;
    /// `p` is the arrival's field path, `duration` the run's.
    pub fn validate(
        &self,
        c: &Ctx,
        p: &str,
        duration: Nanos,
    ) -> R<(Arc<dyn TraceSource>, u64, String)> {
        let Some(checked) = &self.checked else {
            return c.err(format!("{p}.file"), "was not read");
        };
        let speed = c.finite(&format!("{p}.speed"), self.speed.unwrap_or(1.0))?;
        if speed <= 0.0 || speed > MAX_SPEED {
            return c.err(
                format!("{p}.speed"),
                format!("must be above 0 and at most {MAX_SPEED} (found {speed})"),
            );
        }
        let clients = self.clients.unwrap_or(1);
        if !(1..=10_000_000).contains(&clients) {
            return c.err(
                format!("{p}.clients"),
                format!("must be 1 to 10000000 (found {clients})"),
            );
        }
        let trace = Trace {
            checked: checked.clone(),
            speed,
        };
        let span = (checked.last - checked.first) as u64;
        let played = (span as f64 / speed).round() as Nanos;
        let in_run = checked.rows_before(duration as f64 * speed);
        let text = format!(
            "trace '{}': {} requests over {} of the run{}, mean {}/s{}",
            checked.written,
            checked.rows,
            fmt_time(played),
            if speed == 1.0 {
                String::new()
            } else {
                format!(" (played {}x faster)", fmt_num(speed))
            },
            fmt_num(if played == 0 {
                checked.rows as f64
            } else {
                checked.rows as f64 / (played as f64 / SECOND as f64)
            }),
            if played >= duration {
                format!(
                    "; the run's {} replays about {} of them",
                    fmt_time(duration),
                    in_run.round()
                )
            } else {
                String::new()
            }
        );
        Ok((Arc::new(trace), clients, text))
    }
}

impl TraceSource for Trace {
    fn open(&self) -> Result<Box<dyn ArrivalStream>, String> {
        let c = &self.checked;
        let names = ColumnNames {
            time: c.columns.time.1.clone(),
            client: c.columns.client.as_ref().map(|x| x.1.clone()),
            write: c.columns.write.as_ref().map(|x| x.1.clone()),
        };
        let (rows, len) = Rows::open(&c.path, &names).map_err(|e| self.failed(&e))?;
        if len != c.bytes || rows.columns != c.columns {
            return Err(self.changed(len));
        }
        Ok(Box::new(Stream {
            rows,
            trace: Trace {
                checked: c.clone(),
                speed: self.speed,
            },
        }))
    }

    fn mean_rate(&self, end: Nanos) -> f64 {
        if end == 0 {
            return 0.0;
        }
        self.checked.rows_before(end as f64 * self.speed) / (end as f64 / SECOND as f64)
    }
}

impl Trace {
    /// A run's failure to read the trace, naming it.
    fn failed(&self, why: &str) -> String {
        let c = &self.checked;
        let why = if why.starts_with("line ") {
            format!("at {why}")
        } else {
            why.to_string()
        };
        format!("file '{}' ({}) {why}", c.written, c.key)
    }

    /// The trace changed since it was checked (it is now `now` bytes).
    fn changed(&self, now: u64) -> String {
        let c = &self.checked;
        format!(
            "file '{}' ({}) changed since it was checked ({} bytes then, {now} now): run again on the file as it is now",
            c.written, c.key, c.bytes
        )
    }
}

/// A run's open trace: the reader (a fixed buffer) and nothing else of the file.
struct Stream {
    rows: Rows,
    trace: Trace,
}

impl ArrivalStream for Stream {
    fn next_arrival(&mut self) -> Result<Option<Replayed>, String> {
        let row = match self.rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => {
                let tap = self.rows.tap();
                let c = &self.trace.checked;
                let sha: [u8; 32] = tap.hash.clone().finalize().into();
                if tap.bytes != c.bytes || sha != c.sha256 {
                    return Err(self.trace.changed(tap.bytes));
                }
                return Ok(None);
            }
            Err(e) => return Err(self.trace.failed(&e)),
        };
        let c = &self.trace.checked;
        let rel = (row.t - c.first).max(0);
        let at = if self.trace.speed == 1.0 {
            rel as Nanos
        } else {
            (rel as f64 / self.trace.speed).round() as Nanos
        };
        Ok(Some(Replayed {
            at,
            client: row.client,
            write: row.write,
        }))
    }

    fn stop(&mut self) -> Result<(), String> {
        let c = &self.trace.checked;
        let meta = self
            .rows
            .tap()
            .file
            .metadata()
            .map_err(|e| self.trace.failed(&format!("cannot be read again: {e}")))?;
        if meta.len() != c.bytes || meta.modified().ok() != c.modified {
            return Err(self.trace.changed(meta.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_read_to_the_nanosecond() {
        assert_eq!(
            time_ns("1700000000.123456789"),
            Ok(1_700_000_000_123_456_789)
        );
        assert_eq!(time_ns("0.5"), Ok(500_000_000));
        assert_eq!(time_ns("12"), Ok(12_000_000_000));
        assert_eq!(time_ns("0.0000000016"), Ok(2));
        assert_eq!(
            time_ns("2023-11-14T22:13:20.000000001Z"),
            Ok(1_700_000_000_000_000_001)
        );
        assert_eq!(
            time_ns("2023-11-14T23:13:20+01:00"),
            Ok(1_700_000_000_000_000_000)
        );
        assert_eq!(time_ns("1e3"), Ok(1_000_000_000_000));
        assert!(time_ns("-1").unwrap_err().contains("at least 0"));
        assert!(time_ns("soon").unwrap_err().contains("RFC 3339"));
        assert!(time_ns("2023-11-14T22:13:20.5")
            .unwrap_err()
            .contains("(found \"2023-11-14T22:13:20.5\")"));
        assert!(time_ns("99999999999999").unwrap_err().contains("too far"));
    }

    #[test]
    fn clients_and_writes_parse() {
        assert_eq!(client_of("7"), Ok(7));
        assert_eq!(client_of("web-1"), client_of("web-1"));
        assert_ne!(client_of("web-1"), client_of("web-2"));
        assert!(client_of("").is_err());
        assert_eq!(write_of("TRUE"), Ok(true));
        assert_eq!(write_of("0"), Ok(false));
        assert!(write_of("maybe")
            .unwrap_err()
            .contains("1, 0, true or false"));
    }

    #[test]
    fn a_run_holds_one_row_of_a_long_trace() {
        // 200,000 rows: the stream's reader keeps its fixed buffer and one record, so
        // the bytes it holds do not grow with the rows read.
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.csv");
        let mut text = String::from("t,c\n");
        for k in 0..200_000u64 {
            text.push_str(&format!("{k},{}\n", k % 7));
        }
        std::fs::write(&path, &text).unwrap();
        let names = ColumnNames {
            time: "t".into(),
            client: Some("c".into()),
            write: None,
        };
        let (mut rows, len) = Rows::open(&path, &names).unwrap();
        assert_eq!(len, text.len() as u64);
        let mut held = 0;
        let mut n = 0u64;
        while let Some(r) = rows.next().unwrap() {
            assert_eq!(r.t, n as i64 * 1_000_000_000);
            assert_eq!(r.client, Some(n % 7));
            held = held.max(rows.rec.as_byte_record().as_slice().len());
            n += 1;
        }
        assert_eq!(n, 200_000);
        assert!(held <= 12, "{held}");
        // Everything was read (and hashed) through the tap, a chunk at a time.
        assert_eq!(rows.tap().bytes, len);
        let want: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        assert_eq!(<[u8; 32]>::from(rows.tap().hash.clone().finalize()), want);
    }

    #[test]
    fn a_newline_in_quotes_does_not_end_a_row_for_the_row_cap() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.csv");
        let half = "b".repeat(40_000);
        let long = format!("{half}\n{half}");
        std::fs::write(&path, format!("t,c\n1,\"{long}\"\n")).unwrap();
        let names = ColumnNames {
            time: "t".into(),
            client: Some("c".into()),
            write: None,
        };
        let (mut rows, _) = Rows::open(&path, &names).unwrap();
        let e = loop {
            match rows.next() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("an 80,001-byte row was read"),
                Err(e) => break e,
            }
        };
        assert!(
            e.contains("a row is longer than the 65536 bytes allowed"),
            "{e}"
        );
    }

    #[test]
    fn marks_estimate_rows_before_a_time() {
        let c = Checked {
            path: PathBuf::new(),
            written: String::new(),
            key: String::new(),
            bytes: 0,
            sha256: [0; 32],
            modified: None,
            columns: Columns {
                time: (0, "t".into()),
                client: None,
                write: None,
            },
            rows: 101,
            first: 0,
            last: 100,
            marks: (0..=50).map(|k| 2 * k).collect(),
            stride: 2,
        };
        assert_eq!(c.rows_before(0.0), 0.0);
        assert_eq!(c.rows_before(50.0), 50.0);
        assert_eq!(c.rows_before(49.0), 49.5);
        assert_eq!(c.rows_before(100.0), 100.0);
        assert_eq!(c.rows_before(1000.0), 101.0);
    }
}
