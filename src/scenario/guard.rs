//! Resource rules: a validated scenario must also fit in memory and time before it
//! runs. [`super::validate`] checks each value; these rules check what values add up
//! to (windows a Markov outage draws, state per layer instance, a burst against the
//! in-flight cap, fleets, outages and profile points), so a hostile or mistaken file gets a
//! clear error naming the field instead of a run that exhausts the machine.

use crate::engine::time::format;
use crate::engine::Nanos;
use crate::model::breaker::Breaker;

use crate::metrics::recorder::{BucketRow, MAX_BUCKET_SAMPLES};
use crate::model::concurrency;
use crate::model::limits::{
    bytes_per_event, bytes_per_request_with_nodes, nodes_per_fleet, nodes_per_request,
};

use super::error::ScenarioError;
use crate::model::config::{Arrival, OutageTiming, Scenario};
use crate::scenario::validate::services::MAX_SERVICES;

/// Most `[[outages]]` entries (each is checked against every other while active).
pub(crate) const MAX_OUTAGES: usize = 1_000;
/// Most outage windows a scenario may draw over its horizon, Markov ones included.
pub(crate) const MAX_OUTAGE_WINDOWS: f64 = 1_000_000.0;
/// Most `[[fleets]]`.
pub(crate) const MAX_FLEETS: usize = 1_000;
/// Most clients of closed fleets, over all fleets (each waits as one pending event).
pub(crate) const MAX_CLOSED_CLIENTS: u64 = 10_000_000;
/// Most points of a load profile (each arrival looks its multiplier up).
pub(crate) const MAX_PROFILE_POINTS: usize = 10_000;
/// Most points of a recorded load profile, its files together (a week of 15 s
/// Prometheus steps is 40,320; a lookup is a binary search).
pub(crate) const MAX_RECORDED_POINTS: usize = 1_000_000;
/// Most bytes the budgets and breakers of every layer instance may take together.
pub(crate) const MAX_STATE_BYTES: u64 = 4 << 30;

/// Most memory a run may need by [`memory`]'s estimate (8 GiB: the layer state cap
/// and work in flight at the default caps with the deepest stack): a run that could
/// need more is refused before it starts, naming what takes it.
pub(crate) const MAX_RUN_BYTES: u64 = 8 << 30;
/// Largest `limits.max_events` (about two days of CPU at 6 million events a second).
pub(crate) const MAX_EVENTS: u64 = 1_000_000_000_000;

/// The most memory a run can hold, by part (every part bounded by `[limits]` or by the
/// scenario's sizes; nothing grows with the events handled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Memory {
    /// Work in flight at the `limits.max_in_flight` caps (requests, calls and
    /// attempts, pending events), doubled for tables that grow by doubling, plus what the
    /// run schedules up front (closed clients, outage windows).
    pub in_flight: u64,
    /// Budgets, breakers and limiters of every layer instance.
    pub state: u64,
    /// The time series, one exact bucket of latencies and the herd series.
    pub series: u64,
}

impl Memory {
    /// All parts together.
    pub(crate) fn total(&self) -> u64 {
        self.in_flight
            .saturating_add(self.state)
            .saturating_add(self.series)
    }
}

/// Bytes of one layer instance's budget and breaker state.
fn instance_bytes(l: &crate::model::config::LayerConfig) -> u64 {
    let budget = l.budget.map_or(0, |b| b.state_bytes(l.instances));
    let breaker = l.breaker.map_or(0, |b| {
        std::mem::size_of::<Breaker>() as u64 + b.trip.state_bytes()
    });
    let limiter = l.limiter.as_ref().map_or(0, |_| {
        std::mem::size_of::<crate::model::limiter::Limiter>() as u64
    });
    budget + breaker + limiter
}

/// The most memory a run of `scn` can hold: see [`Memory`].
pub(crate) fn memory(scn: &Scenario) -> Memory {
    let nodes = nodes_per_request(scn);
    let event = bytes_per_event();
    let closed: u64 = scn
        .fleets
        .iter()
        .filter(|f| matches!(f.arrival, Arrival::Closed { .. }))
        .map(|f| f.clients)
        .fold(0, u64::saturating_add);
    let horizon = scn.duration.saturating_add(scn.drain);
    let windows: u64 = scn
        .outages
        .iter()
        .map(|o| match o.timing {
            OutageTiming::Window { .. } => 1,
            OutageTiming::Markov { mean_up, mean_down } => {
                (horizon / mean_up.saturating_add(mean_down).max(1)).saturating_add(1)
            }
        })
        .fold(0, u64::saturating_add);
    let window_bytes = std::mem::size_of::<crate::model::outage::Window>() as u64 + 2 * event;
    let limited = scn.limited_tiers();
    let stamps = nodes.saturating_mul(limited.saturating_mul(concurrency::BYTES_PER_NODE));
    let in_flight = scn
        .limits
        .max_in_flight
        .saturating_mul(bytes_per_request_with_nodes(nodes).saturating_add(stamps))
        .saturating_add(closed.saturating_mul(event))
        .saturating_add(windows.saturating_mul(window_bytes))
        .saturating_mul(2);
    let state = layer_states(scn)
        .map(|(_, bytes)| bytes)
        .fold(0, u64::saturating_add);
    let buckets = scn.duration.div_ceil(scn.bucket);
    let series = buckets
        .saturating_mul(
            std::mem::size_of::<BucketRow>() as u64
                + scn.guard_bytes_per_bucket()
                + limited.saturating_mul(concurrency::BYTES_PER_BUCKET),
        )
        .saturating_add(3 * 2 * 8 * MAX_BUCKET_SAMPLES as u64)
        .saturating_add(20_000 * 8);
    Memory {
        in_flight,
        state,
        series,
    }
}

/// The state bytes of every layer of `scn` (all its instances), each with the
/// `instances` field it is written at: fleets' layers, then the service calls'
/// layers, a fan-out's counted once per callee (each callee has its copy).
fn layer_states(scn: &Scenario) -> impl Iterator<Item = (Field, u64)> + '_ {
    let fleets = scn.fleets.iter().enumerate().flat_map(|(i, f)| {
        f.layers.iter().enumerate().map(move |(j, l)| {
            (
                Field::Fleet(i, j),
                l.instances.saturating_mul(instance_bytes(l)),
            )
        })
    });
    let services = scn.services.iter().enumerate().flat_map(|(i, s)| {
        s.calls.iter().enumerate().flat_map(move |(j, c)| {
            c.layers.iter().enumerate().map(move |(k, l)| {
                (
                    Field::Call(i, j, k),
                    l.instances
                        .saturating_mul(instance_bytes(l))
                        .saturating_mul(c.to.len() as u64),
                )
            })
        })
    });
    fleets.chain(services)
}

/// Where a layer is written, for messages.
#[derive(Clone, Copy)]
enum Field {
    /// `fleets[i].layers[j]`.
    Fleet(usize, usize),
    /// `services[i].calls[j].layers[k]`.
    Call(usize, usize, usize),
}

impl Field {
    fn name(self) -> String {
        match self {
            Field::Fleet(i, j) => format!("fleets[{i}].layers[{j}].instances"),
            Field::Call(i, j, k) => format!("services[{i}].calls[{j}].layers[{k}].instances"),
        }
    }
}

/// Refuses lists longer than their caps in the raw table, before any of their
/// entries is parsed, resolved or validated: `[[fleets]]`, `[[outages]]`,
/// `[[services]]`.
pub(crate) fn lists(path: &str, table: &toml::Table) -> Result<(), ScenarioError> {
    for (key, max) in [
        ("fleets", MAX_FLEETS),
        ("outages", MAX_OUTAGES),
        ("services", MAX_SERVICES),
    ] {
        if let Some(toml::Value::Array(a)) = table.get(key) {
            if a.len() > max {
                return Err(ScenarioError::Field {
                    path: path.to_string(),
                    field: key.to_string(),
                    message: format!("at most {max} {key} are allowed (found {})", a.len()),
                });
            }
        }
    }
    Ok(())
}

/// Checks the resource rules of a validated scenario; `path` names the file.
pub(crate) fn check(scn: &Scenario, path: &str) -> Result<(), ScenarioError> {
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
            Arrival::Trace(_) => {}
            Arrival::Poisson { .. } | Arrival::Constant { .. } => {
                if let Some(lp) = &f.load_profile {
                    let points = match lp {
                        crate::model::config::LoadProfile::Steps(p)
                        | crate::model::config::LoadProfile::Ramp(p) => p.len(),
                    };
                    let cap = if f.recorded.is_some() {
                        MAX_RECORDED_POINTS
                    } else {
                        MAX_PROFILE_POINTS
                    };
                    if points > cap {
                        return err(
                            format!("{p}.load_profile"),
                            format!("at most {cap} points are allowed (found {points})"),
                        );
                    }
                }
            }
        }
    }
    for (field, bytes) in layer_states(scn) {
        state = state.saturating_add(bytes);
        if biggest.as_ref().is_none_or(|(b, _)| bytes > *b) {
            biggest = Some((bytes, field.name()));
        }
    }
    if state > MAX_STATE_BYTES {
        let (bytes, field) = biggest.expect("a layer holds the state");
        return err(
            field,
            format!(
                "the budgets and breakers of every layer instance need about {} ({} here); at most {} are allowed (fewer instances, or a smaller breaker window_calls; a top layer has one instance per client unless `instances` says otherwise)",
                bytes_text(state),
                bytes_text(bytes),
                bytes_text(MAX_STATE_BYTES)
            ),
        );
    }
    if scn.limits.max_events > MAX_EVENTS {
        return err(
            "limits.max_events".into(),
            format!(
                "must be at most {MAX_EVENTS}: it bounds the CPU time of a run, and that many events take about two days (found {})",
                scn.limits.max_events
            ),
        );
    }
    let mem = memory(scn);
    if mem.total() > MAX_RUN_BYTES {
        let m = scn.limits.max_in_flight;
        let nodes = nodes_per_request(scn);
        let parts = format!(
            "work in flight {}, layer state {}, time series {}",
            bytes_text(mem.in_flight),
            bytes_text(mem.state),
            bytes_text(mem.series)
        );
        let why = format!(
            "a run may take at most {} so that runs in parallel fit in memory",
            bytes_text(MAX_RUN_BYTES)
        );
        let per = bytes_per_request_with_nodes(nodes);
        let room = MAX_RUN_BYTES.saturating_sub(mem.state.saturating_add(mem.series)) / 2;
        if per > room {
            // Not even one request fits: a lower max_in_flight cannot help.
            return one_request_too_large(scn, per, path);
        }
        if mem.in_flight >= mem.state.max(mem.series) {
            let each = if scn.graph {
                format!(
                    "{per} B each holding up to {nodes} calls and attempts at once across the service graph"
                )
            } else {
                let depth = nodes - 1;
                format!(
                    "{per} B each with {depth} layer{}",
                    if depth == 1 { "" } else { "s" }
                )
            };
            return err(
                "limits.max_in_flight".into(),
                format!(
                    "{m} requests in flight could take {} ({each}, twice that while the tables grow; {parts}); {why}: at most about {} requests fit",
                    bytes_text(mem.in_flight),
                    room / per
                ),
            );
        }
        if mem.state >= mem.series {
            let (_, field) = biggest.expect("a layer holds the state");
            return err(
                field,
                format!(
                    "the run could need {} ({parts}); {why} (fewer instances, a smaller breaker window, or a lower limits.max_in_flight; a top layer has one instance per client unless `instances` says otherwise)",
                    bytes_text(mem.total())
                ),
            );
        }
        return err(
            "bucket".into(),
            format!(
                "the run could need {} ({parts}); {why} (a longer bucket, or a lower limits.max_in_flight)",
                bytes_text(mem.total())
            ),
        );
    }
    Ok(())
}

/// The error for a scenario one request of which could hold more than a run may take
/// (`per` bytes, saturated at `u64::MAX`): names the fleet whose requests hold the
/// most.
fn one_request_too_large(scn: &Scenario, per: u64, path: &str) -> Result<(), ScenarioError> {
    let (i, nodes) = nodes_per_fleet(scn)
        .into_iter()
        .enumerate()
        .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
        .unwrap_or((0, 0));
    let held = if nodes == u64::MAX {
        "2^64 or more calls and attempts".to_string()
    } else if per == u64::MAX {
        format!("{nodes} calls and attempts (2^64 bytes or more)")
    } else {
        format!("{nodes} calls and attempts ({})", bytes_text(per))
    };
    Err(ScenarioError::Field {
        path: path.to_string(),
        field: format!("fleets[{i}]"),
        message: format!(
            "one request could hold {held} at once (each hedging layer's copies, and each fan-out's callees, multiply what is below them), more than the {} a run may take, even with limits.max_in_flight = 1: fewer hedging copies (hedging.max_attempts), layers or callees",
            bytes_text(MAX_RUN_BYTES)
        ),
    })
}

/// `1.5 GiB`, `12 MiB`, `300 B`.
pub(crate) fn bytes_text(b: u64) -> String {
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

    fn load(text: &str) -> Result<Scenario, ScenarioError> {
        let source = crate::scenario::Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text: format!("duration = '10s'\n{text}"),
        };
        Ok(crate::scenario::from_table(&source, source.table()?)?.scenario)
    }

    const FLEET: &str = "[[fleets]]\nname = 'f'\narrival = { kind = 'poisson', rate = 10 }\ntarget = 'front'\n[[fleets.layers]]\nmax_attempts = 2\n";

    fn graph(to: &str) -> String {
        let svc =
            |n: &str| format!("[[services]]\nname = '{n}'\nservers = 4\nservice_time = '1ms'\n");
        format!(
            "{}[[services.calls]]\nto = {to}\n[[services.calls.layers]]\npreset = 'polly'\n{}{}{FLEET}",
            svc("front"),
            svc("a"),
            svc("b")
        )
    }

    #[test]
    fn a_limited_tier_counts_its_stamps_per_node_and_its_series_per_bucket() {
        use crate::engine::Nanos;
        assert_eq!(
            std::mem::size_of::<(Nanos, u32)>() as u64,
            concurrency::BYTES_PER_NODE
        );
        assert_eq!(
            (std::mem::size_of::<u128>() + std::mem::size_of::<u64>()) as u64,
            concurrency::BYTES_PER_BUCKET
        );
        let plain = load(&graph("'a'")).unwrap();
        let limited = load(&graph("'a'").replace(
            "name = 'a'\n",
            "name = 'a'\nconcurrency_limit = { kind = 'aimd' }\n",
        ))
        .unwrap();
        assert_eq!(limited.limited_tiers(), 1);
        let (m0, m1) = (memory(&plain), memory(&limited));
        let nodes = nodes_per_request(&plain);
        assert_eq!(
            m1.in_flight - m0.in_flight,
            2 * plain.limits.max_in_flight * nodes * concurrency::BYTES_PER_NODE
        );
        let buckets = plain.duration.div_ceil(plain.bucket);
        assert_eq!(
            m1.series - m0.series,
            buckets * concurrency::BYTES_PER_BUCKET
        );
    }

    #[test]
    fn service_call_layers_count_in_the_state_once_per_callee() {
        let one = memory(&load(&graph("'a'")).unwrap());
        let two = memory(&load(&graph("['a', 'b']")).unwrap());
        let s = load(&graph("'a'")).unwrap();
        let l = &s.services[0].calls[0].layers[0];
        assert_eq!(l.instances, 1);
        // The fleet's layer has no budget, breaker or limiter: the state is the call's.
        assert_eq!(one.state, instance_bytes(l));
        assert!(one.state > 0);
        assert_eq!(two.state, 2 * one.state);
        // Work in flight: 2 + 1 + 2 nodes with one callee, 2 + (2 + 2) with two.
        let per = |n| bytes_per_request_with_nodes(n);
        let m = s.limits.max_in_flight;
        assert_eq!(one.in_flight, 2 * m * per(4));
        assert_eq!(two.in_flight, 2 * m * per(6));
    }

    #[test]
    fn too_many_services_are_refused_before_parsing() {
        let mut t = toml::Table::new();
        let entries = vec![toml::Value::Integer(0); MAX_SERVICES + 1];
        t.insert("services".into(), toml::Value::Array(entries));
        let e = lists("x.toml", &t).unwrap_err().to_string();
        assert!(e.contains("x.toml"), "{e}");
        assert!(e.contains("services"), "{e}");
        assert!(
            e.contains("at most 64 services are allowed (found 65)"),
            "{e}"
        );
        let mut t = toml::Table::new();
        let entries = vec![toml::Value::Integer(0); MAX_SERVICES];
        t.insert("services".into(), toml::Value::Array(entries));
        assert!(lists("x.toml", &t).is_ok());
    }

    #[test]
    fn a_graph_too_large_for_memory_names_its_nodes_per_request() {
        let text = format!(
            "{}[limits]\nmax_in_flight = 100000000\n",
            graph("['a', 'b']")
        );
        let e = load(&text).unwrap_err().to_string();
        assert!(e.contains("limits.max_in_flight"), "{e}");
        let per = bytes_per_request_with_nodes(6);
        assert!(
            e.contains(&format!(
                "({per} B each holding up to 6 calls and attempts at once across the service graph, twice"
            )),
            "{e}"
        );
    }

    /// 16 layers hedging 16 copies each: 16^16 copies of the innermost call at once.
    fn hedged_tower() -> String {
        let layer = "[[fleets.layers]]\nmax_attempts = 1\nhedging = { max_attempts = 16 }\n";
        format!(
            "[dependency]\nservers = 1\nservice_time = '1ms'\n\
             [[fleets]]\nname = 'f'\narrival = {{ kind = 'poisson', rate = 10 }}\n{}",
            layer.repeat(16)
        )
    }

    /// 64 services, each calling the next eight at once: 8.3 × 10^18 calls, 2^64
    /// bytes and more.
    fn fan_out_lattice() -> String {
        let mut t = String::new();
        for i in 0..64 {
            t.push_str(&format!(
                "[[services]]\nname = 's{i}'\nservers = 1\nservice_time = '1ms'\n"
            ));
            let to: Vec<String> = (i + 1..(i + 9).min(64))
                .map(|j| format!("'s{j}'"))
                .collect();
            if !to.is_empty() {
                t.push_str(&format!("[[services.calls]]\nto = [{}]\n", to.join(", ")));
            }
        }
        t + "[[fleets]]\nname = 'f'\narrival = { kind = 'poisson', rate = 10 }\ntarget = 's0'\n"
    }

    #[test]
    fn a_request_whose_calls_saturate_the_estimate_is_refused_naming_its_fleet() {
        let held = [
            "2^64 or more calls and attempts at once",
            "calls and attempts (2^64 bytes or more) at once",
        ];
        for (text, held) in [hedged_tower(), fan_out_lattice()].into_iter().zip(held) {
            // Even one request in flight could not fit: the counts saturate at 2^64
            // instead of wrapping around to a small estimate that passes.
            let e = load(&format!("{text}[limits]\nmax_in_flight = 1\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("t.toml"), "{e}");
            assert!(e.contains("fleets[0]: one request could hold "), "{e}");
            assert!(e.contains(held), "{e}");
            assert!(e.contains("more than the 8.0 GiB a run may take"), "{e}");
            assert!(e.contains("even with limits.max_in_flight = 1"), "{e}");
        }
    }
}
