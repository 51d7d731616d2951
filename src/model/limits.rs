//! Safety caps of one run (`[limits]`): what counts as in flight, and when a run stops
//! early. A run that hits a cap stops at once; what it measured so far is kept and
//! marked truncated.
//!
//! `limits.max_in_flight` bounds the memory of work in flight. Three counts are held
//! against it after every event:
//! - requests: logical requests in flight, counting a request until the last of its
//!   attempts is let go of (orphaned work still queued or in service keeps it);
//! - calls and attempts (arena nodes), orphans included: at most
//!   `max_in_flight × (layers + 1)`, the deepest stack's chain per request;
//! - pending events (timers of finished requests included): at most
//!   `PENDING_PER_REQUEST × max_in_flight`, plus what the run schedules up front
//!   (closed clients, outage starts and ends, breaker timers).
//!
//! `limits.max_events` bounds the events handled: the CPU time of a run.

use crate::model::config::{Arrival, Scenario};

/// Pending events allowed per request of `limits.max_in_flight`.
pub const PENDING_PER_REQUEST: u64 = 16;

/// Bytes of one pending event: its queue key and packed event, or a timer in a lane.
pub fn bytes_per_event() -> u64 {
    let queued = std::mem::size_of::<u128>() + std::mem::size_of::<crate::model::event::Packed>();
    queued.max(std::mem::size_of::<crate::model::timers::Timer>()) as u64
}

/// Bytes of one call or attempt in flight: its arena node, its free-list slot, its
/// two per-node times and its place in the dependency's queue.
pub fn bytes_per_node() -> u64 {
    (std::mem::size_of::<crate::model::request::Node>()
        + std::mem::size_of::<u32>()
        + 2 * std::mem::size_of::<crate::engine::Nanos>()
        + std::mem::size_of::<(u32, u32)>()) as u64
}

/// Most bytes one request in flight holds with `layers` retry layers at the caps: its
/// slot (and free-list entry), a call per layer and the attempt, and its share of the
/// pending events.
pub fn bytes_per_request(layers: usize) -> u64 {
    (std::mem::size_of::<crate::model::request::Request>() + std::mem::size_of::<u32>()) as u64
        + (layers as u64 + 1) * bytes_per_node()
        + PENDING_PER_REQUEST * bytes_per_event()
}

/// The caps of one run, resolved from its scenario.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    max_requests: u64,
    max_nodes: u64,
    max_pending: u64,
    max_events: u64,
}

impl Caps {
    /// The caps of `scn`, whose outages drew `windows` windows.
    pub fn new(scn: &Scenario, windows: usize) -> Caps {
        let m = scn.limits.max_in_flight;
        let depth = scn.fleets.iter().map(|f| f.layers.len()).max().unwrap_or(0) as u64;
        let up_front: u64 = scn
            .fleets
            .iter()
            .map(|f| {
                let clients = match f.arrival {
                    Arrival::Closed { .. } => f.clients,
                    _ => 0,
                };
                let breakers: u64 = f
                    .layers
                    .iter()
                    .filter(|l| l.breaker.is_some())
                    .map(|l| l.instances)
                    .sum();
                clients.saturating_add(breakers).saturating_add(1)
            })
            .fold(0u64, u64::saturating_add)
            .saturating_add(2 * windows as u64);
        Caps {
            max_requests: m,
            max_nodes: m.saturating_mul(depth + 1),
            max_pending: m
                .saturating_mul(PENDING_PER_REQUEST)
                .saturating_add(up_front),
            max_events: scn.limits.max_events,
        }
    }

    /// Why the run must stop, given what it holds and has handled; `None` to go on.
    #[inline]
    pub fn exceeded(&self, requests: u64, nodes: u64, pending: u64, events: u64) -> Option<String> {
        if requests > self.max_requests
            || nodes > self.max_nodes
            || pending > self.max_pending
            || events >= self.max_events
        {
            Some(self.why(requests, nodes, pending))
        } else {
            None
        }
    }

    #[cold]
    fn why(&self, requests: u64, nodes: u64, pending: u64) -> String {
        let m = self.max_requests;
        if requests > m {
            format!(
                "more than limits.max_in_flight = {m} requests in flight (orphaned work included)"
            )
        } else if nodes > self.max_nodes {
            format!(
                "more than {} calls and attempts in flight, orphans included (limits.max_in_flight = {m} × {} per request)",
                self.max_nodes,
                self.max_nodes / m.max(1)
            )
        } else if pending > self.max_pending {
            format!(
                "more than {} events pending, timers of finished requests included (limits.max_in_flight = {m} × {PENDING_PER_REQUEST}, plus what the run schedules up front)",
                self.max_pending
            )
        } else {
            format!("limits.max_events = {} events handled", self.max_events)
        }
    }
}
