//! Correlated faults: outage windows and what the dependency does while they are active.
//!
//! Markov outages are turned into windows up front (alternating exponential up and down
//! periods, starting up, drawn from the outage's own stream), so every outage is a list
//! of `[start, end)` windows known before the run: the recovery metric and the plots
//! use the same windows the model used.

use crate::engine::variate::Exp1;
use rand::RngExt;

use crate::engine::time::from_f64_ns;
use crate::engine::{stream, Nanos};
use crate::model::config::{OutageConfig, OutageMode, OutageTiming};

/// One active period of one outage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Start (inclusive).
    pub start: Nanos,
    /// End (exclusive).
    pub end: Nanos,
    /// What the dependency does meanwhile.
    pub mode: OutageMode,
    /// The service it hits (`None`: every service).
    pub target: Option<u16>,
}

/// Every window of every outage that starts before `horizon`, sorted by start.
pub(crate) fn windows(outages: &[OutageConfig], seed: u64, horizon: Nanos) -> Vec<Window> {
    let mut out = Vec::new();
    for (i, o) in outages.iter().enumerate() {
        match o.timing {
            OutageTiming::Window { start, end } => {
                if start < horizon {
                    out.push(Window {
                        start,
                        end,
                        mode: o.mode,
                        target: o.target,
                    })
                }
            }
            OutageTiming::Markov { mean_up, mean_down } => {
                let mut rng = stream(seed, &format!("outages/{i}"));
                let mut t: Nanos = 0;
                loop {
                    let up: f64 = rng.sample(Exp1);
                    let down: f64 = rng.sample(Exp1);
                    let start = t.saturating_add(from_f64_ns(up * mean_up as f64));
                    if start >= horizon {
                        break;
                    }
                    let end = start
                        .saturating_add(from_f64_ns(down * mean_down as f64))
                        .max(start + 1);
                    out.push(Window {
                        start,
                        end,
                        mode: o.mode,
                        target: o.target,
                    });
                    t = end;
                }
            }
        }
    }
    out.sort_by_key(|w| (w.start, w.end));
    out
}

/// The combined effect of the active windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Effect {
    /// Attempts starting service fail after this long.
    pub fail_after: Option<Nanos>,
    /// Extra failure probability of served attempts.
    pub error_p: f64,
    /// Service-time factor.
    pub slow: f64,
    /// Servers available, if reduced.
    pub capacity: Option<u32>,
    /// No answers.
    pub blackhole: bool,
}

impl Default for Effect {
    fn default() -> Self {
        Effect {
            fail_after: None,
            error_p: 0.0,
            slow: 1.0,
            capacity: None,
            blackhole: false,
        }
    }
}

impl Effect {
    /// Combines active modes: the shortest `fail` wins, error probabilities combine as
    /// independent events, slow factors multiply, the smallest capacity wins.
    pub(crate) fn combine<'a>(modes: impl Iterator<Item = &'a OutageMode>) -> Effect {
        let mut e = Effect::default();
        for m in modes {
            match *m {
                OutageMode::Fail(after) => {
                    e.fail_after = Some(e.fail_after.map_or(after, |a| a.min(after)))
                }
                OutageMode::ErrorRate(p) => e.error_p = 1.0 - (1.0 - e.error_p) * (1.0 - p),
                OutageMode::Slow(f) => e.slow *= f,
                OutageMode::Capacity(s) => e.capacity = Some(e.capacity.map_or(s, |c| c.min(s))),
                OutageMode::Blackhole => e.blackhole = true,
            }
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SECOND;

    #[test]
    fn markov_windows_have_the_configured_mean_lengths() {
        let o = OutageConfig {
            timing: OutageTiming::Markov {
                mean_up: 9 * SECOND,
                mean_down: SECOND,
            },
            mode: OutageMode::Blackhole,
            target: None,
        };
        let ws = windows(&[o], 4, 100_000 * SECOND);
        // About 10k windows: mean down within 3% (sd of the mean 1%).
        let n = ws.len() as f64;
        assert!((n / 10_000.0 - 1.0).abs() < 0.05, "{n}");
        let down: f64 = ws.iter().map(|w| (w.end - w.start) as f64).sum::<f64>() / n;
        assert!((down / 1e9 - 1.0).abs() < 0.03, "{down}");
        assert!(ws.windows(2).all(|p| p[0].end <= p[1].start));
    }

    #[test]
    fn effects_combine() {
        let e = Effect::combine(
            [
                OutageMode::ErrorRate(0.5),
                OutageMode::ErrorRate(0.5),
                OutageMode::Slow(2.0),
                OutageMode::Slow(3.0),
                OutageMode::Capacity(4),
                OutageMode::Capacity(2),
            ]
            .iter(),
        );
        assert_eq!(e.error_p, 0.75);
        assert_eq!(e.slow, 6.0);
        assert_eq!(e.capacity, Some(2));
        assert!(!e.blackhole);
    }
}
