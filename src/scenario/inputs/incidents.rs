//! An incident timeline: `[[outages]] file = "incidents.csv"`, one outage window per
//! row, so an incident report's table is replayed rather than transcribed.
//!
//! Columns (a header row; names as below, in any order, unknown columns refused):
//! `start` and `end` (required), `mode` (required: `fail`, `error_rate`, `slow`,
//! `capacity`, `blackhole`), and as the mode needs them `after` (fail, optional),
//! `p` (error_rate), `factor` (slow), `servers` (capacity); `target` (optional: the
//! service hit; empty is the entry's `target`, or every service).
//!
//! A time is a duration from the run's start (`90s`, `2m` is not a unit: `120s`), or a
//! point in time (Unix seconds, or RFC 3339) placed on the run by the recording of the
//! first fleet with a recorded load profile: its first point is the run's start and its
//! `speed` applies, so the incident of March 3rd lands where it happened in March 3rd's
//! traffic.

use crate::engine::time::SECOND;
use crate::engine::Nanos;
use crate::scenario::file::{Dur, ModeFile, OutageFile};

/// Where the run's time 0 is in the recording, and how fast it plays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    /// The recording's first time (seconds).
    pub t0: f64,
    /// Its `speed`.
    pub speed: f64,
}

/// The columns a timeline may have.
const COLUMNS: [&str; 8] = [
    "start", "end", "mode", "target", "after", "p", "factor", "servers",
];

/// The outages of a timeline's CSV `text`, each with its line; `target` is the
/// entry's own (a row's empty target takes it); `cap` is the most rows allowed.
pub(crate) fn outages(
    text: &str,
    target: Option<&str>,
    origin: Option<Origin>,
    cap: usize,
) -> Result<Vec<(u64, OutageFile)>, String> {
    if text.trim().is_empty() {
        return Err("is empty".to_string());
    }
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = r.headers().map_err(|e| format!("its header: {e}"))?.clone();
    for h in headers.iter() {
        if !COLUMNS.contains(&h) {
            return Err(format!(
                "has a column \"{h}\" that a timeline does not have (allowed: {})",
                COLUMNS.join(", ")
            ));
        }
    }
    let col = |name: &str| headers.iter().position(|h| h == name);
    for need in ["start", "end", "mode"] {
        if col(need).is_none() {
            return Err(format!("has no column \"{need}\" (required)"));
        }
    }
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if out.len() == cap {
            return Err(format!(
                "line {line}: at most {cap} outages are allowed in a scenario"
            ));
        }
        let cell = |name: &str| col(name).and_then(|i| rec.get(i)).unwrap_or("");
        let bad = |name: &str, why: String| format!("line {line}, column \"{name}\": {why}");
        let time = |name: &str| -> Result<Nanos, String> {
            time_of(cell(name), origin).map_err(|why| bad(name, why))
        };
        let (start, end) = (time("start")?, time("end")?);
        let num = |name: &str| -> Result<f64, String> {
            let s = cell(name);
            if s.is_empty() {
                return Err(bad(
                    name,
                    format!("is required for mode \"{}\"", cell("mode")),
                ));
            }
            s.parse::<f64>()
                .map_err(|_| bad(name, format!("must be a number (found \"{s}\")")))
        };
        let mode = match cell("mode") {
            "fail" => ModeFile::Fail {
                after: match cell("after") {
                    "" => None,
                    s => Some(Dur(
                        crate::model::duration::parse(s).map_err(|e| bad("after", e))?
                    )),
                },
            },
            "error_rate" => ModeFile::ErrorRate { p: num("p")? },
            "slow" => ModeFile::Slow {
                factor: num("factor")?,
            },
            "capacity" => {
                let s = num("servers")?;
                if s < 0.0 || s.fract() != 0.0 || s > u32::MAX as f64 {
                    return Err(bad(
                        "servers",
                        format!("must be a whole number of servers (found {s})"),
                    ));
                }
                ModeFile::Capacity { servers: s as u64 }
            }
            "blackhole" => ModeFile::Blackhole {},
            m => {
                return Err(bad(
                    "mode",
                    format!(
                        "must be fail, error_rate, slow, capacity or blackhole (found \"{m}\")"
                    ),
                ))
            }
        };
        let target = match cell("target") {
            "" => target.map(str::to_string),
            t => Some(t.to_string()),
        };
        out.push((
            line,
            OutageFile {
                kind: None,
                start: Some(Dur(start)),
                end: Some(Dur(end)),
                mean_up: None,
                mean_down: None,
                mode: Some(mode),
                target,
                file: None,
            },
        ));
    }
    if out.is_empty() {
        return Err("holds no rows".to_string());
    }
    Ok(out)
}

/// A time of the timeline on the run: a duration from its start, or a point in time
/// placed by the recording's origin.
fn time_of(s: &str, origin: Option<Origin>) -> Result<Nanos, String> {
    if s.is_empty() {
        return Err("is required".to_string());
    }
    if s.starts_with(|c: char| c.is_ascii_digit())
        && s.ends_with(|c: char| c.is_ascii_alphabetic())
        && !s.contains('T')
        && !s.contains(':')
    {
        return crate::model::duration::parse(s);
    }
    let at = super::series::parse_time(s)?;
    let Some(o) = origin else {
        return Err(format!(
            "is a point in time ({s}), which needs a recorded load profile to place it on the run: write a duration from the run's start such as 90s"
        ));
    };
    let secs = (at - o.t0) / o.speed;
    if secs < 0.0 {
        return Err(format!(
            "is before the recording's first point ({s}, {}s before it)",
            -(at - o.t0)
        ));
    }
    let ns = (secs * SECOND as f64).round();
    if ns >= Nanos::MAX as f64 {
        return Err(format!(
            "is too far after the recording's first point ({s})"
        ));
    }
    Ok(ns as Nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_windows_with_their_modes() {
        let text =
            "start,end,mode,target,p,servers\n10s,20s,error_rate,,0.5,\n30s,40s,capacity,db,,2\n";
        let o = outages(text, Some("api"), None, 10).unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].0, 2);
        assert_eq!(o[0].1.start, Some(Dur(10 * SECOND)));
        assert_eq!(o[0].1.mode, Some(ModeFile::ErrorRate { p: 0.5 }));
        assert_eq!(o[0].1.target.as_deref(), Some("api"));
        assert_eq!(o[1].1.mode, Some(ModeFile::Capacity { servers: 2 }));
        assert_eq!(o[1].1.target.as_deref(), Some("db"));
    }

    #[test]
    fn points_in_time_are_placed_by_the_recording() {
        let origin = Origin {
            t0: 1_700_000_000.0,
            speed: 60.0,
        };
        let text = "start,end,mode\n1700003600,2023-11-14T23:13:20Z,blackhole\n";
        let o = outages(text, None, Some(origin), 10).unwrap();
        // An hour in, played 60x faster: 60 s; 2023-11-14T23:13:20Z is 1700003600 too.
        assert_eq!(o[0].1.start, Some(Dur(60 * SECOND)));
        let e = outages(text, None, None, 10).unwrap_err();
        assert!(
            e.starts_with("line 2, column \"start\": is a point in time"),
            "{e}"
        );
    }

    #[test]
    fn bad_rows_name_the_line_and_the_column() {
        let e = outages("start,end,mode\n1s,2s,melt\n", None, None, 10).unwrap_err();
        assert_eq!(
            e,
            "line 2, column \"mode\": must be fail, error_rate, slow, capacity or blackhole (found \"melt\")"
        );
        let e = outages("start,end,mode\n1s,2s,slow\n", None, None, 10).unwrap_err();
        assert_eq!(
            e,
            "line 2, column \"factor\": is required for mode \"slow\""
        );
        let e = outages("start,end,mode,colour\n", None, None, 10).unwrap_err();
        assert!(e.starts_with("has a column \"colour\""), "{e}");
        let e = outages("start,end,mode\n1s,2s,fail\n3s,4s,fail\n", None, None, 1).unwrap_err();
        assert_eq!(e, "line 3: at most 1 outages are allowed in a scenario");
    }
}
