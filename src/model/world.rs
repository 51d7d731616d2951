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
//! [`World`] owns the state in parts (the arena of requests and nodes, the calls, the
//! services, the fleets, the observers and the run) and dispatches each [`Event`] to
//! the code it concerns:
//! [`super::fleet`] (arrivals and logical requests), [`super::call`] (the retry state
//! machine of a layer call), [`super::layer`] (budgets, breakers and limiters per
//! layer instance), [`super::dependency`] (servers, queue, OCC, outage effects) and
//! the timer lanes of [`super::timers`].

use crate::engine::{Control, Handler, Nanos, Scheduler};
use crate::metrics::trace::{StackNames, TraceLog, TraceWindow};
use crate::metrics::{Recorder, RunMetrics};
use crate::model::config::{Arrival, DependencyKind, Scenario};

use super::broker::Broker;
use super::call::{CallTimes, Calls};
use super::dependency::{Service, Services};
pub(crate) use super::event::{Event, Packed};
use super::fleet::{Fleet, Fleets};
use super::hedge::Hedges;
use super::limits::Caps;
use super::observe::{CallObserver, NoTrace, Observers};
use super::outage::{self, Window};
use super::request::{Arena, NodeState};
use super::service::Visits;
use super::stack;
use super::timers::Lanes;
use super::trace::Tracer;

impl<T> std::fmt::Debug for World<T> {
    /// The shape of the world, not its state (requests and timers can be millions).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("fleets", &self.fleets.list.len())
            .field("layers", &self.calls.layer_index.len())
            .finish_non_exhaustive()
    }
}

/// A simulation of one run of a scenario, owned in parts: each part holds its fields
/// and the methods that need no other part; the handlers that move a call from one
/// part to the next are `impl World` blocks beside the part they mostly concern.
///
/// `T` is its tracer: `NoTrace` (the public `World`), or the crate's request tracer
/// in a run that traces (`World::with_trace`), so that a run without traces has no
/// test of tracing in its code. The impl blocks bounded by the crate's observer trait
/// allow `private_bounds`: outside the crate there is only the untraced world.
pub(crate) struct World<T = NoTrace> {
    /// The logical requests and their nodes, which every part reads by index.
    pub(super) arena: Arena,
    /// The layer stacks and their calls' live state.
    pub(super) calls: Calls,
    /// The services, their visits and the outage windows.
    pub(super) services: Services,
    /// The fleets, their requests in flight and their message queues.
    pub(super) fleets: Fleets,
    /// The metrics, and the request traces when this run records them.
    pub(super) obs: Observers<Recorder, T>,
    /// The run's bounds, caps and timers.
    pub(super) run: Run,
}

/// The run itself: how long it goes, what stops it early, and its timer lanes.
pub(super) struct Run {
    pub(super) duration: Nanos,
    horizon: Nanos,
    caps: Caps,
    truncated: Option<String>,
    /// Timer lanes: one per layer (timeouts), then one per fleet (deadlines).
    pub(super) lanes: Lanes,
}

impl World {
    /// Builds the world for `scn` with random streams from `seed`, and schedules the
    /// first events.
    pub(crate) fn new(scn: &Scenario, seed: u64, sched: &mut Scheduler<Packed>) -> World {
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
        let lanes = Lanes::new(layer_index.len(), scn.fleets.len());
        if scn.services.iter().any(|s| s.capacity.admission.is_some()) {
            let n = scn.services.len();
            let counts = crate::model::admission::Counts::new(scn.duration, scn.bucket, n);
            rec.admission = Some(Box::new(counts));
        }
        if scn
            .services
            .iter()
            .any(crate::model::queue_policy::QueuePolicyConfig::drops_at)
        {
            let n = scn.services.len();
            let d = crate::model::queue_policy::Dropped::new(scn.duration, scn.bucket, n);
            rec.codel = Some(Box::new(d));
        }
        if scn.uses_reject_cost() {
            let servers = scn.services.iter().map(|s| s.capacity.servers).collect();
            let primary = scn.fleets.first().map_or(0, |f| f.target as usize);
            rec.track_reject_busy(servers, primary);
        }
        let mut w = World {
            arena: Arena::default(),
            calls: Calls {
                stacks,
                n_top: scn.fleets.len(),
                call_stacks,
                times: CallTimes::default(),
                hedge: Hedges::default(),
                open_breakers: 0,
                budget_instances,
                any_hedging: scn.uses_hedging(),
                any_guards: scn.uses_bulkheads() || scn.uses_pools(),
                deadlines: scn.graph || scn.fleets.iter().any(|f| f.propagate_deadline),
                classes: scn.sheds_by_criticality(),
                layer_index,
            },
            services: Services {
                list: scn
                    .services
                    .iter()
                    .map(|c| Service::new(c, seed, scn.graph))
                    .collect(),
                cfgs: scn.services.clone(),
                primary: scn.fleets.first().map_or(0, |f| f.target as usize),
                visits: Visits::default(),
                windows,
            },
            fleets: Fleets {
                list: fleets,
                in_flight: 0,
                broker: Broker::new(scn, seed),
            },
            obs: Observers {
                rec,
                trace: NoTrace,
            },
            run: Run {
                lanes,
                duration: scn.duration,
                horizon,
                caps,
                truncated: None,
            },
        };
        for (i, win) in w.services.windows.iter().enumerate() {
            sched.at(win.start, Event::OutageStart { window: i as u32 });
            if win.end < horizon {
                sched.at(win.end, Event::OutageEnd { window: i as u32 });
            }
        }
        for (fi, f) in w.fleets.list.iter_mut().enumerate() {
            f.schedule_first(fi as u16, scn.duration, sched);
        }
        if scn.uses_concurrency_limit() {
            let initial: Vec<Option<u32>> = w
                .services
                .list
                .iter()
                .map(|s| s.limit.as_ref().map(|l| l.limit()))
                .collect();
            let primary = w.services.primary;
            let counts =
                crate::model::concurrency::Counts::new(scn.duration, scn.bucket, &initial, primary);
            w.obs.rec.limits = Some(Box::new(counts));
        }
        for (sv, svc) in w.services.list.iter_mut().enumerate() {
            if let Some(t) = svc.limit.as_mut().and_then(|l| l.tick_to_schedule(0)) {
                sched.at(t, Event::LimitTick { tier: sv as u32 });
            }
        }
        w
    }

    /// Traces the logical requests of this run whose ordinals are `picks` (sorted;
    /// see [`crate::metrics::trace::sample`]), into a log that records `sample_seed`
    /// and the run's `seed`.
    pub(crate) fn with_trace(self, picks: Vec<u64>, seed: u64, sample_seed: u64) -> World<Tracer> {
        let svc_name = |i: u16| self.services.cfgs[i as usize].name.clone();
        let mut callers: Vec<String> = self
            .fleets
            .list
            .iter()
            .map(|f| f.cfg.name.clone())
            .collect();
        callers.resize(self.calls.stacks.len(), String::new());
        for (sv, calls) in self.calls.call_stacks.iter().enumerate() {
            for &st in calls.iter().flatten() {
                callers[st as usize] = self.services.cfgs[sv].name.clone();
            }
        }
        let stacks = self
            .calls
            .stacks
            .iter()
            .zip(callers)
            .map(|(st, caller)| StackNames {
                caller,
                service: svc_name(st.target),
                layers: st.layers.iter().map(|l| l.cfg.name.clone()).collect(),
            })
            .collect();
        let windows = self
            .services
            .windows
            .iter()
            .map(|w| TraceWindow {
                start: w.start,
                end: w.end,
                service: w.target.map(svc_name),
            })
            .collect();
        let log = TraceLog {
            seed,
            sample_seed,
            population: 0,
            fleets: self
                .fleets
                .list
                .iter()
                .map(|f| f.cfg.name.clone())
                .collect(),
            services: self.services.cfgs.iter().map(|s| s.name.clone()).collect(),
            stacks,
            windows,
            requests: Vec::new(),
            spans: Vec::new(),
            end: 0,
            truncated: false,
        };
        World {
            arena: self.arena,
            calls: self.calls,
            services: self.services,
            fleets: self.fleets,
            obs: Observers {
                rec: self.obs.rec,
                trace: Tracer::new(picks, log),
            },
            run: self.run,
        }
    }
}

impl World<Tracer> {
    /// Ends the run and hands over its request traces (`end` as for
    /// [`World::finish`]; call it first).
    pub(crate) fn take_traces(&mut self, end: Nanos) -> TraceLog {
        let end = end.min(self.run.horizon);
        self.obs.trace.finish(end)
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The outage windows of this run.
    pub(crate) fn windows(&self) -> &[Window] {
        &self.services.windows
    }

    /// Ends the run and hands over the measurements.
    pub(crate) fn finish(mut self, end: Nanos, events: u64) -> RunMetrics {
        if self.run.truncated.is_none() {
            // A trace that failed mid-run (changed since it was checked) stopped its
            // arrivals early: the run did not replay it whole.
            self.run.truncated = self.fleets.list.iter().find_map(Fleet::replay_failure);
        }
        self.count_attempts_in_flight();
        let level = self.calls.budget_level_at(end);
        let end = end.min(self.run.horizon);
        let mut m = self.obs.rec.finish(
            end,
            level,
            self.fleets.in_flight,
            events,
            self.run.truncated,
        );
        m.queue = self.fleets.broker.map(|b| b.finish(end));
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

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// [`Event::Lane`]: the armed timer of `lane` is due. A live timeout times out
    /// its attempt, a live deadline ends its request; then the lane arms its next.
    fn on_lane(&mut self, lane: usize, seq: u64, s: &mut Scheduler<Packed>) {
        if let Some(t) = self.run.lanes.fire(lane, seq, &self.arena) {
            if self.run.lanes.is_timeout(lane) {
                self.on_timeout(t.id, s);
            } else {
                self.expire_request(t.id, s);
            }
        }
        self.run.lanes.rearm(lane, &self.arena, s);
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> Handler<Packed> for World<T> {
    #[inline]
    fn handle(&mut self, ev: Packed, s: &mut Scheduler<Packed>) -> Control {
        let ev = Event::try_from(ev)
            .unwrap_or_else(|e| unreachable!("{e}: the queue holds only encoded events"));
        let now = s.now();
        if now > self.run.horizon {
            return Control::Stop;
        }
        if self.obs.rec.crosses(now) {
            let level = self.calls.budget_level_at(now);
            self.obs.rec.advance(now, level);
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
            Event::RejectDone { node, gen } => {
                if self.arena.nodes[node as usize].gen == gen {
                    self.on_reject_done(node, s);
                }
            }
            Event::AdmissionDelay { node, gen } => {
                let n = self.arena.nodes[node as usize];
                if n.gen == gen && n.state == NodeState::InTransit {
                    self.on_admission_delay(node, s);
                }
            }
            Event::LimitTick { tier } => self.on_limit_tick(tier as usize, s),
        }
        // The drain ends when every logical request is over and so is the work they
        // left behind (orphaned attempts, retries below a timed-out layer): the summary
        // counts everything.
        // With queue fleets, so are the messages not yet deleted or dead-lettered.
        if now >= self.run.duration
            && self.fleets.in_flight == 0
            && self.arena.live_nodes() == 0
            && !self.messages_pending()
        {
            return Control::Stop;
        }
        if let Some(why) = self.run.caps.exceeded(
            // Messages held by the broker count as requests.
            self.arena.live_requests() + self.fleets.broker.as_ref().map_or(0, Broker::live),
            self.arena.live_nodes(),
            // Pending events and timers are summed every 64 events: the cap is a memory
            // bound, and 64 events cannot move it far.
            if s.processed().is_multiple_of(64) {
                s.pending() as u64 + self.run.lanes.held()
            } else {
                0
            },
            s.processed(),
        ) {
            self.run.truncated = Some(format!(
                "{why} at t = {:.3}s",
                crate::engine::time::to_secs(now)
            ));
            return Control::Stop;
        }
        Control::Continue
    }
}
