//! Resource rules: a validated scenario must also fit in memory and time before it
//! runs. [`super::validate`] checks each value; these rules check what values add up
//! to (windows a Markov outage draws, state per layer instance, a burst against the
//! in-flight cap, fleets, outages and profile points), so a hostile or mistaken file gets a
//! clear error naming the field instead of a run that exhausts the machine.

use crate::engine::time::format;
use crate::engine::Nanos;
use crate::model::breaker::Breaker;
use crate::model::budget::Budget;

use super::config::{Arrival, OutageTiming, Scenario, Trip};
use super::error::ScenarioError;

/// Most `[[outages]]` entries (each is checked against every other while active).
pub const MAX_OUTAGES: usize = 1_000;
/// Most outage windows a scenario may draw over its horizon, Markov ones included.
pub const MAX_OUTAGE_WINDOWS: f64 = 1_000_000.0;
/// Most `[[fleets]]`.
pub const MAX_FLEETS: usize = 1_000;
/// Most clients of closed fleets, over all fleets (each waits as one pending event).
pub const MAX_CLOSED_CLIENTS: u64 = 10_000_000;
/// Most points of a load profile (each arrival looks its multiplier up).
pub const MAX_PROFILE_POINTS: usize = 10_000;
/// Most bytes the budgets and breakers of every layer instance may take together.
pub const MAX_STATE_BYTES: u64 = 4 << 30;

/// Checks the resource rules of a validated scenario; `path` names the file.
pub fn check(scn: &Scenario, path: &str) -> Result<(), ScenarioError> {
    let err = |field: String, message: String| {
        Err(ScenarioError::Field {
            path: path.to_string(),
            field,
            message,
        })
    };
    if scn.fleets.len() > MAX_FLEETS {
        return err(
            "fleets".into(),
            format!(
                "at most {MAX_FLEETS} fleets are allowed (found {})",
                scn.fleets.len()
            ),
        );
    }
    if scn.outages.len() > MAX_OUTAGES {
        return err(
            "outages".into(),
            format!(
                "at most {MAX_OUTAGES} outages are allowed (found {}); a kind = \"markov\" outage draws many windows",
                scn.outages.len()
            ),
        );
    }
    let horizon = scn.duration.saturating_add(scn.drain);
    let mut windows = 0.0;
    for (i, o) in scn.outages.iter().enumerate() {
        windows += match o.timing {
            OutageTiming::Window { .. } => 1.0,
            OutageTiming::Markov { mean_up, mean_down } => {
                let cycle = mean_up.saturating_add(mean_down);
                let n = horizon as f64 / cycle as f64;
                if n > MAX_OUTAGE_WINDOWS {
                    return err(
                        format!("outages[{i}].mean_up"),
                        format!(
                            "mean_up + mean_down = {} gives about {n:.0} outage windows over duration + drain = {}; at most {MAX_OUTAGE_WINDOWS:.0} are allowed (mean_up + mean_down at least {})",
                            format(cycle),
                            format(horizon),
                            format((horizon as f64 / MAX_OUTAGE_WINDOWS).ceil() as Nanos)
                        ),
                    );
                }
                n
            }
        };
    }
    if windows > MAX_OUTAGE_WINDOWS {
        return err(
            "outages".into(),
            format!(
                "the outages draw about {windows:.0} windows over duration + drain = {}; at most {MAX_OUTAGE_WINDOWS:.0} are allowed",
                format(horizon)
            ),
        );
    }
    let mut closed = 0u64;
    let mut state = 0u64;
    let mut biggest: Option<(u64, String)> = None;
    for (i, f) in scn.fleets.iter().enumerate() {
        let p = format!("fleets[{i}]");
        match f.arrival {
            Arrival::Burst { at, count } => {
                if at >= scn.duration {
                    return err(
                        format!("{p}.arrival.at"),
                        format!(
                            "must be before duration {}: requests arrive in [0, duration) (found {})",
                            format(scn.duration),
                            format(at)
                        ),
                    );
                }
                if count > scn.limits.max_in_flight {
                    return err(
                        format!("{p}.arrival.count"),
                        format!(
                            "a burst of {count} requests is more than limits.max_in_flight = {}: at most that many may arrive at once (raise limits.max_in_flight to allow it)",
                            scn.limits.max_in_flight
                        ),
                    );
                }
            }
            Arrival::Closed { .. } => {
                closed = closed.saturating_add(f.clients);
                if closed > MAX_CLOSED_CLIENTS {
                    return err(
                        format!("{p}.arrival.clients"),
                        format!(
                            "closed fleets have {closed} clients together, more than the {MAX_CLOSED_CLIENTS} allowed"
                        ),
                    );
                }
            }
            Arrival::Poisson { .. } | Arrival::Constant { .. } => {
                if let Some(lp) = &f.load_profile {
                    let points = match lp {
                        super::config::LoadProfile::Steps(p)
                        | super::config::LoadProfile::Ramp(p) => p.len(),
                    };
                    if points > MAX_PROFILE_POINTS {
                        return err(
                            format!("{p}.load_profile"),
                            format!(
                                "at most {MAX_PROFILE_POINTS} points are allowed (found {points})"
                            ),
                        );
                    }
                }
            }
        }
        for (j, l) in f.layers.iter().enumerate() {
            let per_instance = l.budget.map_or(0, |_| std::mem::size_of::<Budget>() as u64)
                + l.breaker.map_or(0, |b| {
                    std::mem::size_of::<Breaker>() as u64
                        + match b.trip {
                            Trip::Rate { window, .. } => u64::from(window),
                            Trip::Consecutive(_) => 0,
                            // A slot per call or per second of the window.
                            Trip::Resilience4j { window, .. } => match window {
                                super::config::R4jWindow::Count(n) => 16 * u64::from(n),
                                super::config::R4jWindow::Time(n) => 32 * u64::from(n),
                            },
                            // Polly's rolling metrics: a handful of buckets.
                            Trip::Polly { .. } => 256,
                        }
                });
            let bytes = l.instances.saturating_mul(per_instance);
            state = state.saturating_add(bytes);
            if biggest.as_ref().is_none_or(|(b, _)| bytes > *b) {
                biggest = Some((bytes, format!("{p}.layers[{j}].instances")));
            }
        }
    }
    if state > MAX_STATE_BYTES {
        let (bytes, field) = biggest.expect("a layer holds the state");
        return err(
            field,
            format!(
                "the budgets and breakers of every layer instance need about {} ({} here); at most {} are allowed (fewer instances, or a smaller breaker window_calls)",
                bytes_text(state),
                bytes_text(bytes),
                bytes_text(MAX_STATE_BYTES)
            ),
        );
    }
    Ok(())
}

/// `1.5 GiB`, `12 MiB`, `300 B`.
pub fn bytes_text(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_shown_in_binary_units() {
        assert_eq!(bytes_text(300), "300 B");
        assert_eq!(bytes_text(1536), "1.5 KiB");
        assert_eq!(bytes_text(1 << 30), "1.0 GiB");
        assert_eq!(bytes_text(u64::MAX), "16777216.0 TiB");
    }
}
