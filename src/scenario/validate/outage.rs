//! Rules of an `[[outages]]` entry: its timing and its mode.

use super::*;
use crate::model::field::{Ctx, R};

pub(super) fn validate_outage(c: &Ctx, i: usize, o: &OutageFile) -> R<OutageConfig> {
    let p = format!("outages[{i}]");
    if o.file.is_some() {
        // Read and replaced by its rows before validation (inputs::read).
        return c.err(format!("{p}.file"), "was not read");
    }
    let Some(mode) = &o.mode else {
        return c.err(
            format!("{p}.mode"),
            "is required: what happens (fail, error_rate, slow, capacity, blackhole), or `file` for a timeline",
        );
    };
    let timing = match o.kind.unwrap_or_default() {
        OutageKind::Window => {
            for (k, v) in [("mean_up", o.mean_up), ("mean_down", o.mean_down)] {
                if v.is_some() {
                    return c.err(
                        format!("{p}.{k}"),
                        "belongs to kind = \"markov\", not a window",
                    );
                }
            }
            let start = match o.start {
                Some(s) => s.0,
                None => return c.err(format!("{p}.start"), "is required for a window outage"),
            };
            let end = match o.end {
                Some(e) => e.0,
                None => return c.err(format!("{p}.end"), "is required for a window outage"),
            };
            if end <= start {
                return c.err(
                    format!("{p}.end"),
                    format!(
                        "must be after start {} (found {})",
                        crate::engine::time::format(start),
                        crate::engine::time::format(end)
                    ),
                );
            }
            OutageTiming::Window { start, end }
        }
        OutageKind::Markov => {
            for (k, v) in [("start", o.start), ("end", o.end)] {
                if v.is_some() {
                    return c.err(
                        format!("{p}.{k}"),
                        "belongs to a window outage, not kind = \"markov\"",
                    );
                }
            }
            let up = match o.mean_up {
                Some(d) => c.positive_dur(&format!("{p}.mean_up"), d)?,
                None => return c.err(format!("{p}.mean_up"), "is required for a markov outage"),
            };
            let down = match o.mean_down {
                Some(d) => c.positive_dur(&format!("{p}.mean_down"), d)?,
                None => return c.err(format!("{p}.mean_down"), "is required for a markov outage"),
            };
            OutageTiming::Markov {
                mean_up: up,
                mean_down: down,
            }
        }
    };
    let mode = match *mode {
        ModeFile::Fail { after } => {
            OutageMode::Fail(after.map_or(crate::model::config::DEFAULT_FAIL_AFTER, |a| a.0))
        }
        ModeFile::ErrorRate { p: prob } => {
            OutageMode::ErrorRate(c.probability(&format!("{p}.mode.p"), prob)?)
        }
        ModeFile::Slow { factor } => {
            let f = c.positive(&format!("{p}.mode.factor"), factor)?;
            if f > 1e6 {
                return c.err(
                    format!("{p}.mode.factor"),
                    format!("must be at most 1e6 (found {f})"),
                );
            }
            OutageMode::Slow(f)
        }
        ModeFile::Capacity { servers } => {
            OutageMode::Capacity(c.u32_field(&format!("{p}.mode.servers"), servers)?)
        }
        ModeFile::Blackhole {} => OutageMode::Blackhole,
    };
    Ok(OutageConfig {
        timing,
        mode,
        // Resolved against the services by the caller.
        target: None,
    })
}
