//! Safety caps of one run (`[limits]`): what counts as in flight, and when a run stops
//! early. A run that hits a cap stops at once; what it measured so far is kept and
//! marked truncated.
//!
//! `limits.max_in_flight` bounds the memory of work in flight. Three counts are held
//! against it after every event:
//! - requests: logical requests in flight, counting a request until the last of its
//!   attempts is let go of (orphaned work still queued or in service keeps it);
//! - calls and attempts (arena nodes), orphans included: at most
//!   `max_in_flight × nodes_per_request`, the most one request holds at once: the
//!   deepest stack's chain, `layers + 1`, with one `[dependency]`; in a service graph
//!   the chain down every tier, fan-outs counted once per callee
//!   ([`nodes_per_request`]);
//! - pending events (timers of finished requests included): at most
//!   `PENDING_PER_REQUEST × max_in_flight`, plus what the run schedules up front
//!   (closed clients, outage starts and ends, breaker timers).
//!
//! `limits.max_events` bounds the events handled: the CPU time of a run.

use crate::model::config::{Arrival, Scenario, ServiceConfig};

/// Pending events allowed per request of `limits.max_in_flight`.
pub(crate) const PENDING_PER_REQUEST: u64 = 16;

/// Bytes of one pending event: its queue key and packed event, or a timer in a lane.
pub(crate) fn bytes_per_event() -> u64 {
    let queued = std::mem::size_of::<u128>() + std::mem::size_of::<crate::model::event::Packed>();
    queued.max(std::mem::size_of::<crate::model::timers::Timer>()) as u64
}

/// Bytes of one call or attempt in flight: its arena node, its free-list slot, its
/// two per-node times and its place in the dependency's queue.
pub(crate) fn bytes_per_node() -> u64 {
    (std::mem::size_of::<crate::model::request::Node>()
        + std::mem::size_of::<u32>()
        + 2 * std::mem::size_of::<crate::engine::Nanos>()
        + std::mem::size_of::<(u32, u32)>()) as u64
}

/// Most bytes one request in flight holds with `layers` retry layers and one
/// dependency at the caps: [`bytes_per_request_with_nodes`] of `layers + 1` nodes.
#[cfg(test)]
pub(crate) fn bytes_per_request(layers: usize) -> u64 {
    bytes_per_request_with_nodes(layers as u64 + 1)
}

/// Most bytes one request in flight holds when it holds at most `nodes` calls and
/// attempts at once ([`nodes_per_request`]): its slot (and free-list entry), the
/// nodes, and its share of the pending events.
/// Saturates at `u64::MAX` (hedging copies and fan-outs multiply: the count can pass
/// 2^64), which validation refuses, rather than wrapping around to a small number.
pub(crate) fn bytes_per_request_with_nodes(nodes: u64) -> u64 {
    ((std::mem::size_of::<crate::model::request::Request>() + std::mem::size_of::<u32>()) as u64)
        .saturating_add(nodes.saturating_mul(bytes_per_node()))
        .saturating_add(PENDING_PER_REQUEST * bytes_per_event())
}

/// The most calls and attempts (arena nodes) one logical request holds at once: over
/// the fleets, the fleet's layers + 1 (its attempt) + what its target holds below.
/// A service holds, below it, the most of any one of its calls (they run one after
/// another); a call holds, for each callee at once (a fan-out runs them in
/// parallel), its layers + 1 + what the callee holds below; a service without calls
/// holds nothing below. With one `[dependency]` this is the deepest stack + 1. A
/// hedging layer holds each of its copies at once, each with all below it.
/// Saturates at `u64::MAX`.
pub(crate) fn nodes_per_request(scn: &Scenario) -> u64 {
    nodes_per_fleet(scn).into_iter().max().unwrap_or(1)
}

/// [`nodes_per_request`] of each fleet's requests, in fleet order.
pub(crate) fn nodes_per_fleet(scn: &Scenario) -> Vec<u64> {
    let mut memo = vec![None; scn.services.len()];
    scn.fleets
        .iter()
        .map(|f| {
            stack_nodes(
                &f.layers,
                below(&scn.services, f.target as usize, &mut memo, 0),
            )
        })
        .collect()
}

/// The nodes a stack of `layers` holds at once above a target holding `below`: its
/// layers + 1 + `below`, a hedging layer's copies each holding all below it.
fn stack_nodes(layers: &[crate::model::config::LayerConfig], below: u64) -> u64 {
    layers.iter().rev().fold(below.saturating_add(1), |n, l| {
        l.calls_held_below().saturating_mul(n).saturating_add(1)
    })
}

/// What service `i` holds below it (see [`nodes_per_request`]); `depth` bounds the
/// walk should the graph not be acyclic (validation refuses cycles).
fn below(services: &[ServiceConfig], i: usize, memo: &mut [Option<u64>], depth: usize) -> u64 {
    let Some(s) = services.get(i) else { return 0 };
    if let Some(n) = memo[i] {
        return n;
    }
    if depth > services.len() {
        return 0;
    }
    let mut most = 0u64;
    for call in &s.calls {
        let mut at_once = 0u64;
        for &k in &call.to {
            let n = stack_nodes(&call.layers, below(services, k as usize, memo, depth + 1));
            at_once = at_once.saturating_add(n);
        }
        most = most.max(at_once);
    }
    memo[i] = Some(most);
    most
}

/// The caps of one run, resolved from its scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    max_requests: u64,
    max_nodes: u64,
    max_pending: u64,
    max_events: u64,
}

impl Caps {
    /// The caps of `scn`, whose outages drew `windows` windows.
    pub(crate) fn new(scn: &Scenario, windows: usize) -> Caps {
        let m = scn.limits.max_in_flight;
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
            .saturating_add(service_breakers(scn))
            .saturating_add(2 * windows as u64);
        Caps {
            max_requests: m,
            max_nodes: m.saturating_mul(nodes_per_request(scn)),
            max_pending: m
                .saturating_mul(PENDING_PER_REQUEST)
                .saturating_add(up_front),
            max_events: scn.limits.max_events,
        }
    }

    /// Calls and attempts allowed in flight: `limits.max_in_flight ×`
    /// [`nodes_per_request`].
    #[cfg(test)]
    pub(crate) fn max_nodes(&self) -> u64 {
        self.max_nodes
    }

    /// Why the run must stop, given what it holds and has handled; `None` to go on.
    #[inline]
    pub(crate) fn exceeded(
        &self,
        requests: u64,
        nodes: u64,
        pending: u64,
        events: u64,
    ) -> Option<String> {
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

/// Breaker instances of the service calls' layers (each may keep a timer pending): a
/// fan-out has one copy of the call's layers per callee.
fn service_breakers(scn: &Scenario) -> u64 {
    scn.services
        .iter()
        .flat_map(|s| &s.calls)
        .map(|c| {
            c.layers
                .iter()
                .filter(|l| l.breaker.is_some())
                .map(|l| l.instances)
                .fold(0u64, u64::saturating_add)
                .saturating_mul(c.to.len() as u64)
        })
        .fold(0u64, u64::saturating_add)
}
