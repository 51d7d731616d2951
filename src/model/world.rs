//! The world: fleets, their retry layers, the dependency and the outages, reacting to
//! events. This is where MODEL.md §2–§5 become code.
//!
//! Flow of one logical request with two layers:
//! ```text
//! arrival ─► call(layer 0) ─► attempt ─► call(layer 1) ─► attempt ─► dependency
//!                 ▲  retry/backoff ◄── outcome ◄──┘  retry/backoff ◄── outcome ◄──┘
//! ```
//! A layer call makes attempts until one succeeds, the outcome is not retryable, the
//! attempts run out, the budget denies a retry or the deadline would pass in backoff.
//! An attempt's outcome is the whole outcome of the call below, its retries included.
//! Outcomes are counted once, where they arise; propagating one upward is not counting.
//!
//! [`World`] owns the state and dispatches each [`Event`] to the part it concerns:
//! [`super::fleet`] (arrivals and logical requests), [`super::call`] (the retry state
//! machine of a layer call), [`super::layer`] (budgets, breakers and limiters per
//! layer instance), [`super::dependency`] (servers, queue, OCC, outage effects) and
//! the timer lanes of [`super::timers`].

use crate::engine::{Control, Handler, Nanos, Scheduler};
use crate::metrics::{Recorder, RunMetrics};
use crate::model::config::{Arrival, DependencyKind, Scenario, ServiceConfig};

use super::broker::Broker;
use super::call::CallTimes;
use super::dependency::Service;
pub use super::event::{Event, Packed};
use super::fleet::Fleet;
use super::hedge::Hedges;
use super::limits::Caps;
use super::outage::{self, Window};
use super::request::{Arena, NodeState};
use super::service::Visits;
use super::stack::{self, Stack};
use super::timers::Lanes;

impl std::fmt::Debug for World {
    /// The shape of the world, not its state (requests and timers can be millions).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("fleets", &self.fleets.len())
            .field("layers", &self.layer_index.len())
            .finish_non_exhaustive()
    }
}

/// A simulation of one run of a scenario.
pub struct World {
    pub(super) fleets: Vec<Fleet>,
    /// Layer stacks: the fleets' first (index = fleet), then the service calls'.
    pub(super) stacks: Vec<Stack>,
    /// The fleets' stacks are `0..n_top` (their counts are the whole-run columns).
    pub(super) n_top: usize,
    /// The stack of each (service, call, callee).
    pub(super) call_stacks: Vec<Vec<Vec<u16>>>,
    /// (stack, depth) of each global layer index.
    pub(super) layer_index: Vec<(u16, u8)>,
    /// The services' live state, and their configuration.
    pub(super) svcs: Vec<Service>,
    pub(super) services: Vec<ServiceConfig>,
    /// The service fleet 0 calls: the whole-run columns describe it.
    pub(super) primary: usize,
    /// Whether attempts carry deadlines to services (a graph, or a fleet that
    /// propagates its deadline): nodes then keep theirs in [`CallTimes`].
    pub(super) deadlines: bool,
    /// Visits of graph services making their calls.
    pub(super) visits: Visits,
    /// The outage windows of the run.
    pub(super) windows: Vec<Window>,
    pub(super) arena: Arena,
    /// Timer lanes: one per layer (timeouts), then one per fleet (deadlines).
    pub(super) lanes: Lanes,
    pub(super) rec: Recorder,
    pub(super) duration: Nanos,
    horizon: Nanos,
    /// Logical requests not yet done.
    pub(super) in_flight: u64,
    pub(super) open_breakers: u64,
    pub(super) budget_instances: u64,
    caps: Caps,
    truncated: Option<String>,
    /// Per-node times of layer calls.
    pub(super) calls: CallTimes,
    /// The message queues of queue fleets (`None` without one).
    pub(super) broker: Option<Broker>,
    /// The copies of hedging calls.
    pub(super) hedge: Hedges,
    /// Whether any layer hedges: one test of a well-predicted flag keeps the hedging
    /// code off the hot path of scenarios without it.
    pub(super) any_hedging: bool,
    /// Whether any fleet or call has a bulkhead or a pool (likewise).
    pub(super) any_guards: bool,
    /// The request traces, when this run records them (`None`: every hook is one
    /// test of this field).
    pub(super) trace: Option<Box<super::trace::Tracer>>,
}

impl World {
    /// Builds the world for `scn` with random streams from `seed`, and schedules the
    /// first events.
    pub fn new(scn: &Scenario, seed: u64, sched: &mut Scheduler<Packed>) -> World {
        let horizon = scn.duration.saturating_add(scn.drain);
        let budget_instances = scn
            .fleets
            .iter()
            .flat_map(|f| &f.layers)
            .filter(|l| l.budget.is_some())
            .map(|l| l.instances)
            .sum();
        let fleets = scn
            .fleets
            .iter()
            .map(|f| Fleet::new(f, seed, scn.duration))
            .collect();
        let (stacks, call_stacks, layer_index) = stack::build(scn, seed);
        let windows = outage::windows(&scn.outages, seed, horizon);
        let caps = Caps::new(scn, windows.len());
        let max_depth = scn.fleets.iter().map(|f| f.layers.len()).max().unwrap_or(0);
        let herd = herd_window(scn, &windows, horizon);
        let mut rec = Recorder::new(scn.duration, scn.bucket, scn.fleets.len(), max_depth, herd);
        if scn.dependency.kind == DependencyKind::Occ {
            rec.herd_counts_writes();
        }
        if scn.uses_guards() {
            rec.track_guards();
        }
        if scn.graph {
            rec.track_services(scn.services.iter().map(|s| s.capacity.servers).collect());
        }
        if scn.services.iter().any(|s| s.capacity.admission.is_some()) {
            let n = scn.services.len();
            let counts = crate::model::admission::Counts::new(scn.duration, scn.bucket, n);
            rec.admission = Some(Box::new(counts));
        }
        let mut w = World {
            lanes: Lanes::new(layer_index.len(), scn.fleets.len()),
            fleets,
            n_top: scn.fleets.len(),
            stacks,
            call_stacks,
            layer_index,
            svcs: scn
                .services
                .iter()
                .map(|c| Service::new(c, seed, scn.graph))
                .collect(),
            services: scn.services.clone(),
            primary: scn.fleets.first().map_or(0, |f| f.target as usize),
            deadlines: scn.graph || scn.fleets.iter().any(|f| f.propagate_deadline),
            visits: Visits::default(),
            windows,
            arena: Arena::default(),
            rec,
            duration: scn.duration,
            horizon,
            in_flight: 0,
            open_breakers: 0,
            budget_instances,
            caps,
            truncated: None,
            calls: CallTimes::default(),
            broker: Broker::new(scn, seed),
            hedge: Hedges::default(),
            any_hedging: scn.uses_hedging(),
            any_guards: scn.uses_bulkheads() || scn.uses_pools(),
            trace: None,
        };
        for (i, win) in w.windows.iter().enumerate() {
            sched.at(win.start, Event::OutageStart { window: i as u32 });
            if win.end < horizon {
                sched.at(win.end, Event::OutageEnd { window: i as u32 });
            }
        }
        for (fi, f) in w.fleets.iter_mut().enumerate() {
            f.schedule_first(fi as u16, scn.duration, sched);
        }
        w
    }

    /// The outage windows of this run.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// Ends the run and hands over its request traces, if it recorded them (`end` as
    /// for [`World::finish`]; call it first).
    pub fn take_traces(&mut self, end: Nanos) -> Option<crate::metrics::trace::TraceLog> {
        self.take_trace(end.min(self.horizon))
    }

    /// Ends the run and hands over the measurements.
    pub fn finish(mut self, end: Nanos, events: u64) -> RunMetrics {
        self.count_attempts_in_flight();
        let level = self.budget_level_at(end);
        let end = end.min(self.horizon);
        let mut m = self
            .rec
            .finish(end, level, self.in_flight, events, self.truncated);
        m.queue = self.broker.map(|b| b.finish(end));
        m
    }
}

/// The fine-bucket window of the herd series: around the first burst, or from just
/// before the first outage to a while after the last one ends; at most 20,000 buckets.
fn herd_window(
    scn: &Scenario,
    windows: &[Window],
    horizon: Nanos,
) -> Option<(Nanos, Nanos, usize)> {
    let sec = crate::engine::time::SECOND;
    let burst = scn
        .fleets
        .iter()
        .filter_map(|f| match f.arrival {
            Arrival::Burst { at, .. } => Some(at),
            _ => None,
        })
        .min();
    let (start, end) = match (burst, windows.first(), windows.iter().map(|w| w.end).max()) {
        (Some(at), _, _) => (at.saturating_sub(sec / 10), at.saturating_add(20 * sec)),
        (None, Some(first), Some(last_end)) => (
            first.start.saturating_sub(sec),
            last_end.saturating_add(10 * sec),
        ),
        _ => return None,
    };
    let end = end.min(horizon);
    if end <= start {
        return None;
    }
    let n = (end - start).div_ceil(scn.herd_bucket).min(20_000) as usize;
    Some((start, scn.herd_bucket, n))
}

impl World {
    /// [`Event::Lane`]: the armed timer of `lane` is due. A live timeout times out
    /// its attempt, a live deadline ends its request; then the lane arms its next.
    fn on_lane(&mut self, lane: usize, seq: u64, s: &mut Scheduler<Packed>) {
        if let Some(t) = self.lanes.fire(lane, seq, &self.arena) {
            if self.lanes.is_timeout(lane) {
                self.on_timeout(t.id, s);
            } else {
                self.expire_request(t.id, s);
            }
        }
        self.lanes.rearm(lane, &self.arena, s);
    }
}

impl Handler<Packed> for World {
    #[inline]
    fn handle(&mut self, ev: Packed, s: &mut Scheduler<Packed>) -> Control {
        let ev = Event::try_from(ev)
            .unwrap_or_else(|e| unreachable!("{e}: the queue holds only encoded events"));
        let now = s.now();
        if now > self.horizon {
            return Control::Stop;
        }
        if self.rec.crosses(now) {
            let level = self.budget_level_at(now);
            self.rec.advance(now, level);
        }
        match ev {
            Event::Arrival { fleet } => self.on_arrival(fleet, s),
            Event::Burst { fleet } => self.on_burst(fleet, s),
            Event::ClientSend { fleet, client } => {
                self.start_request(fleet as usize, u64::from(client), s);
            }
            Event::Deliver { node, gen } => {
                let n = self.arena.nodes[node as usize];
                if n.gen == gen && n.state == NodeState::InTransit {
                    self.deliver(node, s);
                }
            }
            Event::Answer {
                node,
                gen,
                outcome,
                copy,
            } => self.on_answer(node, gen, outcome, copy, s),
            Event::Timeout { node, gen } => {
                let n = self.arena.nodes[node as usize];
                if n.gen == gen && n.state == NodeState::Waiting {
                    self.on_timeout(node, s);
                }
            }
            Event::Retry { node, gen } => {
                let n = self.arena.nodes[node as usize];
                if n.gen == gen && n.state == NodeState::Sleeping {
                    self.start_attempt(node, s);
                }
            }
            Event::ServiceDone { node, gen } => {
                if self.arena.nodes[node as usize].gen == gen {
                    self.on_service_done(node, s);
                }
            }
            Event::Lane { lane, seq } => self.on_lane(lane as usize, seq, s),
            Event::OutageStart { window } => self.on_outage(window, true, s),
            Event::OutageEnd { window } => self.on_outage(window, false, s),
            Event::OccWrite { node, gen } => {
                if self.arena.nodes[node as usize].gen == gen {
                    self.occ_write(node, s);
                }
            }
            Event::BreakerTimer { layer, instance } => self.on_breaker_timer(layer, instance, s),
            Event::Visibility { msg, gen } => self.on_visibility(msg, gen, s),
            Event::Receive { queue } => self.on_receive(queue, s),
            Event::GuardTimer { node, gen } => self.on_guard_timer(node, gen, s),
            Event::HedgeTimer { node, seq } => self.on_hedge_timer(node, seq, s),
        }
        // The drain ends when every logical request is over and so is the work they
        // left behind (orphaned attempts, retries below a timed-out layer): the summary
        // counts everything.
        // With queue fleets, so are the messages not yet deleted or dead-lettered.
        if now >= self.duration
            && self.in_flight == 0
            && self.arena.live_nodes() == 0
            && !self.messages_pending()
        {
            return Control::Stop;
        }
        if let Some(why) = self.caps.exceeded(
            // Messages held by the broker count as requests.
            self.arena.live_requests() + self.broker.as_ref().map_or(0, Broker::live),
            self.arena.live_nodes(),
            // Pending events and timers are summed every 64 events: the cap is a memory
            // bound, and 64 events cannot move it far.
            if s.processed().is_multiple_of(64) {
                s.pending() as u64 + self.lanes.held()
            } else {
                0
            },
            s.processed(),
        ) {
            self.truncated = Some(format!(
                "{why} at t = {:.3}s",
                crate::engine::time::to_secs(now)
            ));
            return Control::Stop;
        }
        Control::Continue
    }
}
