//! Delay distributions read from files, wherever a distribution is accepted
//! (`hop_latency`, `service_time`, `think_time`):
//!
//! - `{ kind = "histogram", file = "lat.csv", max }`: Prometheus classic buckets from
//!   a CSV table (`le,count`, cumulative, `+Inf` last if at all) or a Prometheus query
//!   answer of `_bucket` series; they become the inline `le` and `counts`, so the
//!   distribution is the inline histogram's to the byte.
//! - `{ kind = "hdr", file = "latency.hlog", tag }`: an HdrHistogram interval log read
//!   by the hdrhistogram crate's own reader, its intervals (those tagged `tag`)
//!   merged.
//! - `{ kind = "empirical", file = "samples.csv", column }`: raw samples, resampled
//!   exactly.
//!
//! Reading happens here, before validation; the model sees the numbers only. Each
//! file joins the manifest's `[[inputs]]`; every rule broken names the key, the file
//! and its line (or its point in a JSON answer).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::{at_or_is, field, read_one, InputRecord};
use crate::engine::time::from_f64_ns;
use crate::model::dist::Measured;
use crate::model::field::{DistFile, Dur, FileFormat as Format, Unit, MAX_BUCKETS};
use crate::scenario::file::{ArrivalFile, ScenarioFile};
use crate::scenario::{ScenarioError, Source};

/// Most samples an `empirical` distribution may hold (what the run keeps of it).
pub(crate) const MAX_SAMPLES: usize = crate::scenario::guard::MAX_RECORDED_POINTS;

/// Most distinct recorded bins an `hdr` distribution may hold.
pub(crate) const MAX_HDR_BINS: usize = crate::scenario::guard::MAX_RECORDED_POINTS;

/// The unit of a histogram file's bounds and of raw samples when none is written.
pub(crate) const DEFAULT_UNIT: Unit = Unit::S;
/// The unit of an HdrHistogram log's values when none is written (jHiccup and
/// HdrHistogram's `HistogramLogProcessor` take nanoseconds).
pub(crate) const DEFAULT_HDR_UNIT: Unit = Unit::Ns;

/// Reads the file of every distribution of `file` that names one, relative to `base`,
/// and puts what the run keeps beside it; adds a record per file to `records`.
pub(super) fn read(
    source: &Source,
    base: &Path,
    file: &mut ScenarioFile,
    records: &mut Vec<InputRecord>,
) -> Result<(), ScenarioError> {
    let mut at: Vec<(String, &mut DistFile)> = Vec::new();
    for (i, f) in file.fleets.iter_mut().enumerate() {
        if let ArrivalFile::Closed { think_time, .. } = &mut f.arrival {
            at.push((format!("fleets[{i}].arrival.think_time"), &mut think_time.0));
        }
        for (j, l) in f.layers.iter_mut().enumerate() {
            if let Some(d) = &mut l.hop_latency {
                at.push((format!("fleets[{i}].layers[{j}].hop_latency"), &mut d.0));
            }
        }
    }
    if let Some(d) = file
        .dependency
        .as_mut()
        .and_then(|d| d.service_time.as_mut())
    {
        at.push(("dependency.service_time".to_string(), &mut d.0));
    }
    for (k, s) in file.services.iter_mut().enumerate() {
        if let Some(d) = &mut s.service_time {
            at.push((format!("services[{k}].service_time"), &mut d.0));
        }
        for (c, call) in s.calls.iter_mut().enumerate() {
            for (j, l) in call.layers.iter_mut().enumerate() {
                if let Some(d) = &mut l.hop_latency {
                    at.push((
                        format!("services[{k}].calls[{c}].layers[{j}].hop_latency"),
                        &mut d.0,
                    ));
                }
            }
        }
    }
    for (key, d) in at {
        if let Some(record) = one(source, base, &key, d)? {
            records.push(record);
        }
    }
    Ok(())
}

/// Reads the file `d` names, if it names one.
fn one(
    source: &Source,
    base: &Path,
    key: &str,
    d: &mut DistFile,
) -> Result<Option<InputRecord>, ScenarioError> {
    let err = |k: String, m: String| Err(field(source, k, m));
    match d {
        DistFile::Histogram {
            file: None,
            format,
            unit,
            series,
            time,
            ..
        } => {
            let only = [
                ("format", format.is_some()),
                ("unit", unit.is_some()),
                ("series", series.is_some()),
                ("time", time.is_some()),
            ];
            if let Some((name, _)) = only.iter().find(|o| o.1) {
                return err(
                    format!("{key}.{name}"),
                    "applies only to buckets read from a file (`file = \"...\"`)".into(),
                );
            }
            Ok(None)
        }
        DistFile::Histogram {
            file: Some(written),
            le,
            counts,
            format,
            unit,
            series,
            time,
            ..
        } => {
            if !le.is_empty() || !counts.is_empty() {
                return err(
                    format!("{key}.file"),
                    "takes no `le` or `counts` beside it: the file gives the buckets".into(),
                );
            }
            let fkey = format!("{key}.file");
            let (text, record) = read_one(source, base, &fkey, written)?;
            let format = format.unwrap_or(if written.to_ascii_lowercase().ends_with(".json") {
                Format::Prometheus
            } else {
                Format::Csv
            });
            let unit = unit.unwrap_or(DEFAULT_UNIT);
            let got = match format {
                Format::Csv => csv_buckets(&text),
                Format::Prometheus => {
                    prometheus_buckets(&text, series.as_ref().unwrap_or(&BTreeMap::new()), *time)
                }
            };
            let (bounds, cum) = got
                .and_then(|b| to_durations(b, unit))
                .map_err(|e| field(source, fkey.clone(), format!("'{written}' {}", at_or_is(e))))?;
            *le = bounds;
            *counts = cum;
            Ok(Some(record))
        }
        DistFile::Hdr {
            file: written,
            tag,
            unit,
            measured,
        } => {
            let fkey = format!("{key}.file");
            let (text, record) = read_one(source, base, &fkey, written)?;
            let unit = unit.unwrap_or(DEFAULT_HDR_UNIT);
            let m = hdr(&text, tag.as_deref(), unit)
                .map_err(|e| field(source, fkey.clone(), format!("'{written}' {}", at_or_is(e))))?;
            *measured = Some(Arc::new(m));
            Ok(Some(record))
        }
        DistFile::Empirical {
            file: written,
            column,
            unit,
            measured,
        } => {
            let fkey = format!("{key}.file");
            let (text, record) = read_one(source, base, &fkey, written)?;
            let unit = unit.unwrap_or(DEFAULT_UNIT);
            let m = empirical(&text, column, unit)
                .map_err(|e| field(source, fkey.clone(), format!("'{written}' {}", at_or_is(e))))?;
            *measured = Some(Arc::new(m));
            Ok(Some(record))
        }
        _ => Ok(None),
    }
}

/// A bucket as read: its upper bound (`None` for `+Inf`), its cumulative count, and
/// where it was (for a message about the bounds after the unit is applied).
type Bucket = (Option<f64>, f64, String);

/// The bounds in `unit` as durations, strictly increasing once in whole ns, and the
/// counts (the `+Inf` bucket's last, when given).
fn to_durations(b: Vec<Bucket>, unit: Unit) -> Result<(Vec<Dur>, Vec<f64>), String> {
    let mut le: Vec<Dur> = Vec::with_capacity(b.len());
    let mut counts = Vec::with_capacity(b.len());
    for (bound, c, at) in b {
        if let Some(x) = bound {
            let ns = from_f64_ns(x * unit.ns());
            if let Some(prev) = le.last() {
                if ns <= prev.0 {
                    return Err(format!(
                        "{at}: bounds must increase, in whole nanoseconds (found {} after {})",
                        crate::engine::time::format(ns),
                        crate::engine::time::format(prev.0)
                    ));
                }
            }
            le.push(Dur(ns));
        }
        counts.push(c);
    }
    if le.is_empty() {
        return Err("must give at least one finite bound besides +Inf (found none)".into());
    }
    if counts.last().copied().unwrap_or(0.0) <= 0.0 {
        return Err("holds no observations (its counts are all 0)".into());
    }
    Ok((le, counts))
}

/// A bound: a finite number at least 0, or `+Inf` (`None`).
fn parse_le(s: &str) -> Result<Option<f64>, String> {
    let s = s.trim();
    if matches!(s, "+Inf" | "Inf" | "inf" | "+inf") {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(format!(
            "must be a bound: a finite number at least 0, or +Inf (found \"{}\")",
            clip(s)
        )),
    }
}

/// A count or a sample: a finite number at least 0.
fn parse_count(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "must be a finite number at least 0 (found \"{}\")",
            clip(s.trim())
        )),
    }
}

fn clip(s: &str) -> String {
    crate::model::field::shown(s)
}

/// Checks one more bucket against the one before it.
fn next_bucket(
    out: &[Bucket],
    le: Option<f64>,
    c: f64,
    at: &str,
    at_count: &str,
) -> Result<(), String> {
    if out.len() > MAX_BUCKETS {
        return Err(format!(
            "{at}: at most {MAX_BUCKETS} buckets are allowed, +Inf besides"
        ));
    }
    if let Some((prev_le, prev_c, _)) = out.last() {
        match (prev_le, le) {
            (None, _) => return Err(format!("{at}: no bucket may follow +Inf")),
            (Some(p), Some(x)) if x <= *p => {
                return Err(format!("{at}: bounds must increase (found {x} after {p})"))
            }
            _ => {}
        }
        if c < *prev_c {
            return Err(format!(
                "{at_count}: cumulative counts must not fall, as Prometheus exports them (found {c} after {prev_c})"
            ));
        }
    }
    Ok(())
}

/// The buckets of a CSV table with columns `le` and `count`.
fn csv_buckets(text: &str) -> Result<Vec<Bucket>, String> {
    if text.trim().is_empty() {
        return Err("is empty".into());
    }
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = r.headers().map_err(|e| format!("its header: {e}"))?.clone();
    let (li, ci) = (col(&headers, "le")?, col(&headers, "count")?);
    let mut out: Vec<Bucket> = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let le = parse_le(rec.get(li).unwrap_or(""))
            .map_err(|why| format!("line {line}, column \"le\": {why}"))?;
        let c = parse_count(rec.get(ci).unwrap_or(""))
            .map_err(|why| format!("line {line}, column \"count\": {why}"))?;
        next_bucket(
            &out,
            le,
            c,
            &format!("line {line}, column \"le\""),
            &format!("line {line}, column \"count\""),
        )?;
        out.push((le, c, format!("line {line}, column \"le\"")));
    }
    if out.is_empty() {
        return Err("holds no rows".into());
    }
    Ok(out)
}

/// The index of column `name`, or a message listing the columns there are.
fn col(headers: &csv::StringRecord, name: &str) -> Result<usize, String> {
    headers.iter().position(|h| h == name).ok_or_else(|| {
        format!(
            "has no column \"{name}\"; its columns: {}",
            headers
                .iter()
                .map(|h| format!("\"{h}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// The buckets of a Prometheus query answer (`vector` of an instant query, or
/// `matrix` of a range query, taking each series' last sample or the one at `time`):
/// the `_bucket` series (those with an `le` label) whose labels include `selector`,
/// which must all belong to one histogram (the same labels besides `le`).
fn prometheus_buckets(
    text: &str,
    selector: &BTreeMap<String, String>,
    time: Option<f64>,
) -> Result<Vec<Bucket>, String> {
    let data = super::series::prometheus_answer(text)?;
    if data.result_type != "matrix" && data.result_type != "vector" {
        return Err(format!(
            "must hold a query's answer of resultType \"vector\" or \"matrix\" (found \"{}\")",
            data.result_type
        ));
    }
    let labels = |m: &BTreeMap<String, String>| {
        let inner = m
            .iter()
            .filter(|(k, _)| *k != "le")
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect::<Vec<_>>()
            .join(",");
        format!("{{{inner}}}")
    };
    let matching: Vec<usize> = (0..data.result.len())
        .filter(|&i| {
            let m = &data.result[i].metric;
            m.contains_key("le") && selector.iter().all(|(k, v)| m.get(k) == Some(v))
        })
        .collect();
    let mut histograms: Vec<String> = matching
        .iter()
        .map(|&i| labels(&data.result[i].metric))
        .collect();
    histograms.sort();
    histograms.dedup();
    if histograms.len() != 1 {
        let mut found = histograms.clone();
        let more = found.len().saturating_sub(10);
        found.truncate(10);
        if more > 0 {
            found.push(format!("and {more} more"));
        }
        return Err(format!(
            "must hold the `_bucket` series (with an `le` label) of exactly one histogram matching `series` {} (found {}{})",
            labels(selector),
            histograms.len(),
            if found.is_empty() {
                String::new()
            } else {
                format!(": {}", found.join(", "))
            }
        ));
    }
    let mut read: Vec<Bucket> = Vec::with_capacity(matching.len());
    for &i in &matching {
        let s = &data.result[i];
        let le_text = &s.metric["le"];
        let le = parse_le(le_text).map_err(|why| format!("result[{i}], label le: {why}"))?;
        let (at, (_, v)) = match (&s.value, time) {
            (Some(v), None) => (format!("result[{i}].value"), v),
            (Some(v), Some(t)) if v.0 == t => (format!("result[{i}].value"), v),
            (None, None) if !s.values.is_empty() => {
                let j = s.values.len() - 1;
                (format!("result[{i}].values[{j}]"), &s.values[j])
            }
            (None, Some(t)) if s.values.iter().any(|v| v.0 == t) => {
                let j = s.values.iter().position(|v| v.0 == t).unwrap_or(0);
                (format!("result[{i}].values[{j}]"), &s.values[j])
            }
            (_, Some(t)) => {
                return Err(format!(
                    "result[{i}] (le=\"{le_text}\") has no sample at `time` {t}"
                ))
            }
            (None, None) => return Err(format!("result[{i}] (le=\"{le_text}\") holds no values")),
        };
        let c = parse_count(v).map_err(|why| format!("{at}: {why}"))?;
        read.push((le, c, format!("{at} (le=\"{le_text}\")")));
    }
    read.sort_by(|a, b| match (a.0, b.0) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.total_cmp(&y),
    });
    let mut out: Vec<Bucket> = Vec::with_capacity(read.len());
    for (le, c, at) in read {
        if let Some((p, _, before)) = out.last() {
            if *p == le {
                return Err(format!("{at}: the same bound as {before}"));
            }
        }
        next_bucket(&out, le, c, &at, &at)?;
        out.push((le, c, at));
    }
    Ok(out)
}

/// The merged intervals of an HdrHistogram interval log (those tagged `tag`, if
/// given), as a distribution in ns.
/// Most counts (bins) one decoded interval histogram may allocate (8 MiB of counts):
/// HdrHistogram's header says how many, and the decoder allocates them before it reads
/// a count, so the header is read first.
pub(crate) const MAX_HDR_COUNTS: u64 = 1 << 20;

/// HdrHistogram's encodings (V2, and V2 compressed with zlib), as its serializer writes
/// their cookies.
const HDR_V2: u32 = 0x1c84_9303 | 0x10;
const HDR_V2_COMPRESSED: u32 = 0x1c84_9304 | 0x10;

/// Checks what an encoded histogram would allocate, from its header alone (at most 40
/// bytes inflated): its counts array, from its significant digits and its range, as
/// `Histogram::new_with_bounds` sizes it, and its payload buffer, at most the 9 bytes
/// of LEB128 a count takes per count. The decoder refuses what else is wrong.
fn hdr_size(bytes: &[u8]) -> Result<(), String> {
    use std::io::Read;
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let mut head = [0u8; 36];
    match bytes.get(..4).map(be32) {
        Some(HDR_V2) => match bytes.get(4..40) {
            Some(h) => head.copy_from_slice(h),
            None => return Ok(()),
        },
        Some(HDR_V2_COMPRESSED) => {
            let mut z = flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default());
            let mut inner = [0u8; 40];
            if z.read_exact(&mut inner).is_err() || be32(&inner[..4]) != HDR_V2 {
                return Ok(());
            }
            head.copy_from_slice(&inner[4..]);
        }
        _ => return Ok(()),
    }
    let be64 = |b: &[u8]| u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
    let payload = u64::from(be32(&head[..4]));
    let digits = be32(&head[8..12]);
    let (low, high) = (be64(&head[12..20]), be64(&head[20..28]));
    if digits > 5 || !(1..=u64::MAX / 2).contains(&low) || high < 2 * low {
        return Ok(());
    }
    let largest = 2 * 10u64.pow(digits);
    let sub_magnitude = 64 - (largest - 1).leading_zeros();
    let unit_magnitude = 63 - low.leading_zeros();
    if unit_magnitude + sub_magnitude > 63 {
        return Ok(());
    }
    let mut untrackable = 1u64 << (sub_magnitude + unit_magnitude);
    let mut buckets = 1u64;
    while untrackable <= high {
        if untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        untrackable <<= 1;
        buckets += 1;
    }
    let counts = (buckets + 1) * (1u64 << (sub_magnitude - 1));
    if counts > MAX_HDR_COUNTS {
        return Err(format!(
            "the histogram's header asks for {counts} counts ({digits} significant digits from {low} to {high}): at most {MAX_HDR_COUNTS} are read (fewer digits or a narrower range)"
        ));
    }
    if payload > counts * 9 {
        return Err(format!(
            "the histogram's header gives a payload of {payload} bytes, more than its {counts} counts can take ({})",
            counts * 9
        ));
    }
    Ok(())
}

fn hdr(text: &str, tag: Option<&str>, unit: Unit) -> Result<Measured, String> {
    use base64::Engine as _;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::Histogram;
    if text.trim().is_empty() {
        return Err("is empty".into());
    }
    let start = text.as_ptr() as usize;
    // The line of a byte offset, counted on from the last one asked.
    let (mut seen, mut line) = (0usize, 1usize);
    let mut line_of = |offset: usize| {
        let offset = offset.min(text.len());
        if offset >= seen {
            line += text.as_bytes()[seen..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            seen = offset;
        }
        line
    };
    let mut merged: Option<Histogram<u64>> = None;
    let mut intervals = 0usize;
    let mut tags: Vec<String> = Vec::new();
    let mut decoder = Deserializer::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        let h = match entry {
            Ok(LogEntry::Interval(h)) => h,
            Ok(_) => continue,
            Err(hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                offset,
            }) => {
                return Err(format!(
                    "line {}: is not a line of an HdrHistogram interval log",
                    line_of(offset)
                ))
            }
        };
        let encoded = h.encoded_histogram();
        let here = line_of(encoded.as_ptr() as usize - start);
        let t = h.tag().map(|t| t.as_str().to_string());
        if let Some(t) = &t {
            if !tags.contains(t) && tags.len() < 20 {
                tags.push(t.clone());
            }
        }
        if tag.is_some() && t.as_deref() != tag {
            continue;
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("line {here}: the histogram is not base64 ({e})"))?;
        hdr_size(&bytes).map_err(|e| format!("line {here}: {e}"))?;
        let one: Histogram<u64> = decoder
            .deserialize(&mut &bytes[..])
            .map_err(|e| format!("line {here}: the histogram cannot be decoded ({e:?})"))?;
        match &mut merged {
            None => merged = Some(one),
            Some(m) => m
                .add(&one)
                .map_err(|e| format!("line {here}: the histogram cannot be merged ({e:?})"))?,
        }
        intervals += 1;
    }
    let Some(m) = merged else {
        return Err(match tag {
            Some(t) => format!(
                "has no interval tagged \"{t}\" (its tags: {})",
                if tags.is_empty() {
                    "none".to_string()
                } else {
                    tags.iter()
                        .map(|t| format!("\"{t}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            None => "holds no interval histograms".into(),
        });
    };
    if m.is_empty() {
        return Err("holds no recorded values (every interval is empty)".into());
    }
    let mut bins: Vec<(f64, f64, u64)> = Vec::new();
    for v in m.iter_recorded() {
        if bins.len() >= MAX_HDR_BINS {
            return Err(format!(
                "records more than {MAX_HDR_BINS} distinct values (bins): at most {MAX_HDR_BINS} are allowed"
            ));
        }
        let x = v.value_iterated_to();
        let lo = m.lowest_equivalent(x) as f64 * unit.ns();
        let hi = m.highest_equivalent(x) as f64 * unit.ns();
        bins.push((lo, hi, v.count_at_value()));
    }
    Ok(Measured::hdr(&bins, intervals))
}

/// The samples of CSV column `column`, in `unit`.
fn empirical(text: &str, column: &str, unit: Unit) -> Result<Measured, String> {
    if text.trim().is_empty() {
        return Err("is empty".into());
    }
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = r.headers().map_err(|e| format!("its header: {e}"))?.clone();
    let ci = col(&headers, column)?;
    let mut samples: Vec<f64> = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if samples.len() >= MAX_SAMPLES {
            return Err(format!(
                "line {line}: holds more than {MAX_SAMPLES} samples: at most {MAX_SAMPLES} are allowed"
            ));
        }
        let v = parse_count(rec.get(ci).unwrap_or(""))
            .map_err(|why| format!("line {line}, column \"{column}\": {why}"))?;
        samples.push(from_f64_ns(v * unit.ns()) as f64);
    }
    if samples.is_empty() {
        return Err("holds no rows".into());
    }
    Ok(Measured::empirical(samples))
}
