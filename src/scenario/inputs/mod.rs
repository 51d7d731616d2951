//! Telemetry inputs: data files a scenario reads, such as a recorded load profile.
//!
//! A path is relative to the scenario file. Each file is read once per load, whole,
//! within [`MAX_INPUT_BYTES`] (a path that is not a regular file is refused before it
//! is opened), parsed into what the run keeps of it, and recorded with its SHA-256 in
//! the manifest's `[[inputs]]`, so a baseline knows when its input changed. The model
//! never sees a file: reading happens here, between parsing and validation, and the
//! validated scenario holds the numbers. Every rule broken names the scenario, the key,
//! the data file and the line or point in it.

pub(crate) mod dists;
pub(crate) mod incidents;
pub(crate) mod profile;
pub(crate) mod series;
pub(crate) mod trace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::file::{ArrivalFile, LoadProfileFile, ScenarioFile};
use super::{ScenarioError, Source};

/// Largest data file read (64 MiB).
pub(crate) const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Most points a recording may hold, all its files together.
pub(crate) const MAX_POINTS: usize = crate::scenario::guard::MAX_RECORDED_POINTS;

/// A data file a scenario read, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRecord {
    /// The key that names it (`fleets[0].load_profile.file`).
    pub key: String,
    /// The path as written in the scenario.
    pub file: String,
    /// Its size.
    pub bytes: u64,
    /// Its SHA-256, in hex.
    pub sha256: String,
}

/// What reading a scenario's data files gave: the manifest's records, and where each
/// outage of a timeline came from (so a rule one breaks names the file and the row).
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// The files read, in key order.
    pub records: Vec<InputRecord>,
    /// For each outage after the timelines were expanded: its entry in the file as
    /// written, and the timeline and line it came from, if it did.
    rows: Vec<(usize, Option<(String, u64)>)>,
}

impl Inputs {
    /// `e` as the user reads it when it is about an outage a timeline row gave:
    /// `outages[2].mode.p` becomes `outages[0].file` with the file, line and key.
    pub(crate) fn name_rows(&self, e: ScenarioError) -> ScenarioError {
        let ScenarioError::Field {
            path,
            field,
            message,
        } = e
        else {
            return e;
        };
        let row = field
            .strip_prefix("outages[")
            .and_then(|r| r.split_once(']'))
            .and_then(|(k, rest)| Some((k.parse::<usize>().ok()?, rest)));
        match row.and_then(|(k, rest)| Some((self.rows.get(k)?, rest))) {
            Some(((entry, Some((file, line))), rest)) => ScenarioError::Field {
                path,
                field: format!("outages[{entry}].file"),
                message: format!(
                    "'{file}' at line {line}{}: {message}",
                    match rest.strip_prefix('.') {
                        Some(key) => format!(" ({key})"),
                        None => String::new(),
                    }
                ),
            },
            Some(((entry, None), rest)) => ScenarioError::Field {
                path,
                field: format!("outages[{entry}]{rest}"),
                message,
            },
            _ => ScenarioError::Field {
                path,
                field,
                message,
            },
        }
    }
}

/// Reads every data file `file` names, relative to the folder of `source`, and puts
/// what the run keeps of each beside the key that names it (a timeline's rows replace
/// its `[[outages]]` entry). Returns the records for the manifest, in key order.
pub(crate) fn read(source: &Source, file: &mut ScenarioFile) -> Result<Inputs, ScenarioError> {
    let base = Path::new(&source.path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut records = Vec::new();
    for (i, fleet) in file.fleets.iter_mut().enumerate() {
        if let ArrivalFile::Trace(t) = &mut fleet.arrival {
            let key = format!("fleets[{i}].arrival");
            records.push(trace::check(source, &base, &key, t)?);
        }
        let Some(LoadProfileFile::Recorded(r)) = &mut fleet.load_profile else {
            continue;
        };
        let key = format!("fleets[{i}].load_profile");
        let paths = r.file.paths().to_vec();
        let many = paths.len() > 1;
        if paths.is_empty() {
            return Err(field(
                source,
                format!("{key}.file"),
                "needs at least one file".into(),
            ));
        }
        let mut chunks = Vec::with_capacity(paths.len());
        let mut total = 0usize;
        for (k, written) in paths.iter().enumerate() {
            let fkey = if many {
                format!("{key}.file[{k}]")
            } else {
                format!("{key}.file")
            };
            let (text, record) = read_one(source, &base, &fkey, written)?;
            let bad = |why: String| field(source, fkey.clone(), format!("'{written}' {why}"));
            let points = match r.format.unwrap_or_default() {
                profile::Format::Csv => series::csv_points(
                    &text,
                    r.time.as_deref().unwrap_or(profile::DEFAULT_TIME_COLUMN),
                    r.value.as_deref().unwrap_or(profile::DEFAULT_VALUE_COLUMN),
                )
                .map_err(|e| bad(at_or_is(e)))?,
                profile::Format::Prometheus => series::prometheus_points(
                    &text,
                    r.series.as_ref().unwrap_or(&Default::default()),
                )
                .map_err(|e| bad(at_or_is(e)))?,
            };
            total += points.len();
            if total > MAX_POINTS {
                return Err(bad(format!(
                    "brings the recording to {total} points: at most {MAX_POINTS} are allowed"
                )));
            }
            chunks.push(points);
            records.push(record);
        }
        let points = series::join(chunks).map_err(|(k, why)| {
            field(
                source,
                format!("{key}.file[{k}]"),
                format!("'{}' {why}", paths[k]),
            )
        })?;
        r.points = Some(Arc::new(points));
    }
    let origin = file.fleets.iter().find_map(|f| match &f.load_profile {
        Some(LoadProfileFile::Recorded(r)) => Some(incidents::Origin {
            t0: r.points.as_ref()?.first()?.0,
            speed: r.speed.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0),
        }),
        _ => None,
    });
    let mut rows = Vec::with_capacity(file.outages.len());
    if file.outages.iter().any(|o| o.file.is_some()) {
        let mut expanded = Vec::with_capacity(file.outages.len());
        for (i, o) in std::mem::take(&mut file.outages).into_iter().enumerate() {
            let Some(written) = o.file.clone() else {
                rows.push((i, None));
                expanded.push(o);
                continue;
            };
            let key = format!("outages[{i}].file");
            let others = [
                o.kind.is_some(),
                o.start.is_some(),
                o.end.is_some(),
                o.mean_up.is_some(),
                o.mean_down.is_some(),
                o.mode.is_some(),
            ];
            if others.contains(&true) {
                return Err(field(
                    source,
                    key,
                    "takes no other key in its entry but `target` (the rows give kind, start, end and mode)".into(),
                ));
            }
            let (text, record) = read_one(source, &base, &key, &written)?;
            let cap = crate::scenario::guard::MAX_OUTAGES.saturating_sub(expanded.len());
            let got = incidents::outages(&text, o.target.as_deref(), origin, cap)
                .map_err(|e| field(source, key.clone(), format!("'{written}' {}", at_or_is(e))))?;
            for (line, row) in got {
                rows.push((i, Some((written.clone(), line))));
                expanded.push(row);
            }
            records.push(record);
        }
        file.outages = expanded;
    }
    dists::read(source, &base, file, &mut records)?;
    Ok(Inputs { records, rows })
}

/// A CSV or JSON message, worded after the file's name: "line 3, ...: ..." reads
/// "'day.csv' at line 3, ...", anything else "'day.csv' has no column ...".
fn at_or_is(e: String) -> String {
    if e.starts_with("line ") || e.starts_with("result[") {
        format!("at {e}")
    } else {
        e
    }
}

/// Reads one data file named `written` at `key`: its text and its record.
pub(crate) fn read_one(
    source: &Source,
    base: &Path,
    key: &str,
    written: &str,
) -> Result<(String, InputRecord), ScenarioError> {
    if written.trim().is_empty() {
        return Err(field(
            source,
            key.to_string(),
            "must name a file (found \"\")".into(),
        ));
    }
    let path: PathBuf = base.join(written);
    let bytes = crate::export::read::read(&path, MAX_INPUT_BYTES).map_err(|e| {
        field(
            source,
            key.to_string(),
            format!("cannot read '{}': {e}", path.display()),
        )
    })?;
    let sha256 = hex(&sha2::Sha256::digest(&bytes));
    let n = bytes.len() as u64;
    let text = String::from_utf8(bytes).map_err(|e| {
        field(
            source,
            key.to_string(),
            format!("'{}' is not UTF-8 text: {e}", path.display()),
        )
    })?;
    Ok((
        text,
        InputRecord {
            key: key.to_string(),
            file: written.to_string(),
            bytes: n,
            sha256,
        },
    ))
}

use sha2::Digest;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn field(source: &Source, field: String, message: String) -> ScenarioError {
    ScenarioError::Field {
        path: source.path.clone(),
        field,
        message,
    }
}
