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

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Control, Handler, Nanos, Scheduler};
use crate::metrics::{Recorder, RunMetrics};
use crate::model::breaker::{Placement, Trip};
use crate::model::config::{Arrival, DependencyKind, Discipline, Scenario};

use super::arrival::OpenArrivals;
use super::backoff::{self, Failure};
use super::breaker::Breaker;
use super::budget::{Budget, RetryCause};
use super::limiter::{Gate, Limiter};
use super::limits::Caps;
use super::outage::{self, Effect, Window};
use super::outcome::{Class, Outcome};
use super::request::{Arena, NodeState, Request, NONE};
use super::timers::{Timer, TimerLane};

/// Everything that can happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Next open-loop arrival of a fleet.
    Arrival {
        /// Fleet.
        fleet: u16,
    },
    /// All requests of a burst fleet.
    Burst {
        /// Fleet.
        fleet: u16,
    },
    /// A closed-loop client sends its next request.
    ClientSend {
        /// Fleet.
        fleet: u16,
        /// Client.
        client: u32,
    },
    /// A node reaches its layer or the dependency after the hop.
    Deliver {
        /// Node.
        node: u32,
        /// Its generation.
        gen: u32,
    },
    /// The outcome of a node's current attempt reaches it after the hop back.
    Answer {
        /// The waiting layer node.
        node: u32,
        /// Its generation when the attempt was made.
        gen: u32,
        /// The outcome.
        outcome: Outcome,
    },
    /// A layer attempt's timeout cut short by the request's deadline (timeouts at
    /// their full delay go through the layer's timer lane).
    Timeout {
        /// Node.
        node: u32,
        /// Generation.
        gen: u32,
    },
    /// A layer's backoff is over.
    Retry {
        /// Node.
        node: u32,
        /// Generation.
        gen: u32,
    },
    /// The dependency finished serving an attempt.
    ServiceDone {
        /// Node.
        node: u32,
        /// Generation.
        gen: u32,
    },
    /// The front timer of a timer lane is due (a layer's attempt timeout, or a
    /// fleet's deadline).
    Lane {
        /// Lane index: layers' timeout lanes first (by global layer index), then one
        /// deadline lane per fleet.
        lane: u32,
        /// Sequence number of the timer it was armed for.
        seq: u64,
    },
    /// An outage window starts.
    OutageStart {
        /// Window index.
        window: u32,
    },
    /// An outage window ends.
    OutageEnd {
        /// Window index.
        window: u32,
    },
    /// An OCC attempt's conditional write reaches the record (after the read's answer
    /// and the write's request legs).
    OccWrite {
        /// Node.
        node: u32,
        /// Generation.
        gen: u32,
    },
    /// An open breaker's timer ran out.
    BreakerTimer {
        /// Global layer index.
        layer: u16,
        /// Instance.
        instance: u32,
    },
}

/// An [`Event`] packed into two words: what the event queue stores. Moving two whole
/// words is cheaper than moving an enum with padding (whose copies the compiler splits
/// into overlapping moves that defeat store-to-load forwarding).
///
/// Word 0: kind (bits 0–7), outcome class (8–15), Retry-After flag (16), first field
/// (32–63); word 1: second field (0–31), third field (32–63).
#[derive(Debug, Clone, Copy)]
pub struct Packed([u64; 2]);

impl From<Event> for Packed {
    #[inline]
    fn from(e: Event) -> Packed {
        let w = |kind: u64, a: u32, b: u32| Packed([kind | (u64::from(a) << 32), u64::from(b)]);
        match e {
            Event::Arrival { fleet } => w(0, u32::from(fleet), 0),
            Event::Burst { fleet } => w(1, u32::from(fleet), 0),
            Event::ClientSend { fleet, client } => w(2, u32::from(fleet), client),
            Event::Deliver { node, gen } => w(3, node, gen),
            Event::Answer { node, gen, outcome } => {
                let aux =
                    (u64::from(outcome.class as u8) << 8) | (u64::from(outcome.retry_after) << 16);
                w(4 | aux, node, gen)
            }
            Event::Timeout { node, gen } => w(5, node, gen),
            Event::Retry { node, gen } => w(6, node, gen),
            Event::ServiceDone { node, gen } => w(7, node, gen),
            Event::Lane { lane, seq } => Packed([8 | (u64::from(lane) << 32), seq]),
            Event::OutageStart { window } => w(9, window, 0),
            Event::OutageEnd { window } => w(10, window, 0),
            Event::OccWrite { node, gen } => w(11, node, gen),
            Event::BreakerTimer { layer, instance } => w(12, u32::from(layer), instance),
        }
    }
}

impl From<Packed> for Event {
    #[inline]
    fn from(p: Packed) -> Event {
        let [w0, w1] = p.0;
        let a = (w0 >> 32) as u32;
        let b = w1 as u32;
        match w0 & 0xff {
            0 => Event::Arrival { fleet: a as u16 },
            1 => Event::Burst { fleet: a as u16 },
            2 => Event::ClientSend {
                fleet: a as u16,
                client: b,
            },
            3 => Event::Deliver { node: a, gen: b },
            4 => Event::Answer {
                node: a,
                gen: b,
                outcome: Outcome {
                    class: Class::from_u8((w0 >> 8) as u8),
                    retry_after: (w0 >> 16) & 1 == 1,
                },
            },
            5 => Event::Timeout { node: a, gen: b },
            6 => Event::Retry { node: a, gen: b },
            7 => Event::ServiceDone { node: a, gen: b },
            8 => Event::Lane { lane: a, seq: w1 },
            9 => Event::OutageStart { window: a },
            10 => Event::OutageEnd { window: a },
            11 => Event::OccWrite { node: a, gen: b },
            _ => Event::BreakerTimer {
                layer: a as u16,
                instance: b,
            },
        }
    }
}

/// Runtime of one retry layer of one fleet.
struct Layer {
    cfg: crate::model::config::LayerConfig,
    jitter: ChaCha8Rng,
    network: ChaCha8Rng,
    budgets: Vec<Budget>,
    breakers: Vec<Breaker>,
    /// Client-side limiters, per instance, and their random stream.
    limiters: Vec<Limiter>,
    limiter_rng: Option<ChaCha8Rng>,
    /// Global index (over all fleets) for breaker timers.
    global: u16,
}

/// Runtime of one fleet.
struct Fleet {
    cfg: crate::model::config::FleetConfig,
    layers: Vec<Layer>,
    open: Option<OpenArrivals>,
    arrivals: ChaCha8Rng,
    writes: ChaCha8Rng,
    think: ChaCha8Rng,
    next_client: u64,
}

/// The dependency's live state.
struct Dependency {
    cfg: crate::model::config::DependencyConfig,
    busy: u32,
    queue: std::collections::VecDeque<(u32, u32)>,
    queued: u64,
    service: ChaCha8Rng,
    errors: ChaCha8Rng,
    effect: Effect,
    /// The record's version, for an OCC dependency.
    version: Option<u64>,
}

impl Dependency {
    fn capacity(&self) -> u32 {
        let base = self.cfg.servers.unwrap_or(u32::MAX);
        self.effect.capacity.map_or(base, |c| c.min(base))
    }
}

/// A simulation of one run of a scenario.
pub struct World {
    fleets: Vec<Fleet>,
    /// (fleet, depth) of each global layer index.
    layer_index: Vec<(u16, u8)>,
    dep: Dependency,
    arena: Arena,
    windows: Vec<Window>,
    active: Vec<u32>,
    /// Timer lanes: one per layer (timeouts), then one per fleet (deadlines).
    lanes: Vec<TimerLane>,
    rec: Recorder,
    duration: Nanos,
    horizon: Nanos,
    in_flight: u64,
    open_breakers: u64,
    budget_instances: u64,
    caps: Caps,
    truncated: Option<String>,
    /// Per node: when its current attempt (inside breaker) or call (outside) started.
    started: Vec<Nanos>,
    /// Per node: the end of its call's `total_timeout`, for layers that have one.
    call_deadline: Vec<Nanos>,
}

impl World {
    /// Builds the world for `scn` with random streams from `seed`, and schedules the
    /// first events.
    pub fn new(scn: &Scenario, seed: u64, sched: &mut Scheduler<Packed>) -> World {
        let horizon = scn.duration.saturating_add(scn.drain);
        let mut layer_index = Vec::new();
        let mut budget_instances = 0u64;
        let fleets: Vec<Fleet> = scn
            .fleets
            .iter()
            .enumerate()
            .map(|(fi, f)| {
                let layers = f
                    .layers
                    .iter()
                    .enumerate()
                    .map(|(li, l)| {
                        let global = layer_index.len() as u16;
                        layer_index.push((fi as u16, li as u8));
                        let n = l.instances as usize;
                        if l.budget.is_some() {
                            budget_instances += l.instances;
                        }
                        Layer {
                            cfg: l.clone(),
                            jitter: stream(seed, &format!("jitter/{}/{}", f.name, li)),
                            network: stream(seed, &format!("network/{}/{}", f.name, li)),
                            budgets: l.budget.map_or(Vec::new(), |b| {
                                vec![Budget::for_instances(b, n as u64); n]
                            }),
                            breakers: l.breaker.map_or(Vec::new(), |b| vec![Breaker::new(b); n]),
                            limiters: l.limiter.map_or(Vec::new(), |c| vec![Limiter::new(c); n]),
                            limiter_rng: l
                                .limiter
                                .map(|_| stream(seed, &format!("limiter/{}/{}", f.name, li))),
                            global,
                        }
                    })
                    .collect();
                Fleet {
                    cfg: f.clone(),
                    layers,
                    open: OpenArrivals::new(&f.arrival, f.load_profile.clone(), scn.duration),
                    arrivals: stream(seed, &format!("arrivals/{}", f.name)),
                    writes: stream(seed, &format!("writes/{}", f.name)),
                    think: stream(seed, &format!("think/{}", f.name)),
                    next_client: 0,
                }
            })
            .collect();
        let n_lanes = layer_index.len() + scn.fleets.len();
        let windows = outage::windows(&scn.outages, seed, horizon);
        let caps = Caps::new(scn, windows.len());
        let max_depth = scn.fleets.iter().map(|f| f.layers.len()).max().unwrap_or(0);
        let herd = herd_window(scn, &windows, horizon);
        let mut rec = Recorder::new(scn.duration, scn.bucket, scn.fleets.len(), max_depth, herd);
        if scn.dependency.kind == DependencyKind::Occ {
            rec.herd_counts_writes();
        }
        let mut w = World {
            fleets,
            layer_index,
            dep: Dependency {
                cfg: scn.dependency.clone(),
                busy: 0,
                queue: Default::default(),
                queued: 0,
                service: stream(seed, "service"),
                errors: stream(seed, "errors"),
                effect: Effect::default(),
                version: (scn.dependency.kind == DependencyKind::Occ).then_some(0),
            },
            arena: Arena::default(),
            lanes: (0..n_lanes).map(|_| TimerLane::default()).collect(),
            windows,
            active: Vec::new(),
            rec,
            duration: scn.duration,
            horizon,
            in_flight: 0,
            open_breakers: 0,
            budget_instances,
            caps,
            truncated: None,
            started: Vec::new(),
            call_deadline: Vec::new(),
        };
        for (i, win) in w.windows.iter().enumerate() {
            sched.at(win.start, Event::OutageStart { window: i as u32 });
            if win.end < horizon {
                sched.at(win.end, Event::OutageEnd { window: i as u32 });
            }
        }
        for fi in 0..w.fleets.len() {
            let f = &mut w.fleets[fi];
            let fleet = fi as u16;
            match &f.cfg.arrival {
                Arrival::Poisson { .. } | Arrival::Constant { .. } => {
                    let open = f.open.as_mut().expect("open arrivals");
                    if let Some(t) = open.next(0, &mut f.arrivals) {
                        sched.at(t, Event::Arrival { fleet });
                    }
                }
                Arrival::Burst { at, .. } => {
                    if *at < scn.duration {
                        sched.at(*at, Event::Burst { fleet });
                    }
                }
                Arrival::Closed { think_time } => {
                    for c in 0..f.cfg.clients {
                        let t = think_time.sample(&mut f.think);
                        if t < scn.duration {
                            sched.at(
                                t,
                                Event::ClientSend {
                                    fleet,
                                    client: c as u32,
                                },
                            );
                        }
                    }
                }
            }
        }
        w
    }

    /// The outage windows of this run.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    fn budget_level_at(&self, now: Nanos) -> Option<f64> {
        if self.budget_instances == 0 {
            return None;
        }
        let mut sum = 0.0;
        for f in &self.fleets {
            for l in &f.layers {
                for b in &l.budgets {
                    sum += b.level(now);
                }
            }
        }
        Some(sum / self.budget_instances as f64)
    }

    /// Ends the run and hands over the measurements.
    pub fn finish(self, end: Nanos, events: u64) -> RunMetrics {
        let level = self.budget_level_at(end);
        let end = end.min(self.horizon);
        self.rec
            .finish(end, level, self.in_flight, events, self.truncated)
    }

    // ----- requests -------------------------------------------------------------

    fn start_request(&mut self, fleet: usize, client: u64, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let f = &mut self.fleets[fleet];
        let is_write = f.cfg.writes > 0.0 && f.writes.random::<f64>() < f.cfg.writes;
        let deadline = f.cfg.deadline.map_or(Nanos::MAX, |d| now.saturating_add(d));
        let req = self.arena.alloc_req(Request {
            gen: 0,
            fleet: fleet as u16,
            client: client as u32,
            arrival: now,
            deadline,
            is_write,
            applied: 0,
            done: false,
            refs: 0,
        });
        self.in_flight += 1;
        self.rec.offered(fleet);
        if deadline != Nanos::MAX {
            let gen = self.arena.reqs[req as usize].gen;
            let lane = self.layer_index.len() + fleet;
            self.set_timer(lane, deadline, req, gen, s);
        }
        let node = self.arena.alloc_node(req, 0, NONE, 0);
        if self.fleets[fleet].layers.is_empty() {
            self.dep_arrive(node, s);
        } else {
            self.begin_call(node, s);
        }
    }

    fn finish_request(&mut self, req: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let r = &mut self.arena.reqs[req as usize];
        if r.done {
            return;
        }
        r.done = true;
        let (fleet, client, latency) = (r.fleet as usize, r.client, now - r.arrival);
        self.in_flight -= 1;
        self.rec
            .completion(now, fleet, outcome.class == Class::Success, latency);
        if let Arrival::Closed { think_time } = self.fleets[fleet].cfg.arrival {
            let t = now.saturating_add(think_time.sample(&mut self.fleets[fleet].think));
            if t < self.duration {
                s.at(
                    t,
                    Event::ClientSend {
                        fleet: fleet as u16,
                        client,
                    },
                );
            }
        }
        self.arena.maybe_free_req(req);
    }

    // ----- layer calls ----------------------------------------------------------

    fn fleet_of(&self, node: u32) -> usize {
        let req = self.arena.nodes[node as usize].req;
        self.arena.reqs[req as usize].fleet as usize
    }

    /// A call node has arrived at its layer.
    fn begin_call(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let fi = self.fleet_of(node);
        let n = self.arena.nodes[node as usize];
        let r = self.arena.reqs[n.req as usize];
        if now >= r.deadline {
            self.abandon(node, s);
            return;
        }
        let depth = n.depth as usize;
        let layer = &mut self.fleets[fi].layers[depth];
        let instance = (u64::from(r.client) % layer.cfg.instances) as u32;
        {
            let nm = &mut self.arena.nodes[node as usize];
            nm.instance = instance;
            nm.prev = backoff::initial_state(&layer.cfg.backoff);
            nm.state = NodeState::Waiting;
        }
        if let Some(b) = layer.budgets.get_mut(instance as usize) {
            b.on_call(now);
        }
        if let Some(t) = layer.cfg.total_timeout {
            set_at(&mut self.call_deadline, node, now.saturating_add(t));
        }
        if layer
            .cfg
            .breaker
            .is_some_and(|b| b.placement == Placement::Outside)
        {
            let admitted = self.breaker_allow(fi, depth, instance, s);
            if !admitted {
                self.rec.outcome(Class::BreakerOpen);
                self.finish_call(node, Outcome::of(Class::BreakerOpen), s);
                return;
            }
            self.arena.nodes[node as usize].outside_admitted = true;
            set_at(&mut self.started, node, now);
        }
        self.start_attempt(node, s);
    }

    /// Makes the next attempt of a call node.
    fn start_attempt(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let fi = self.fleet_of(node);
        let n = self.arena.nodes[node as usize];
        let deadline = self.arena.reqs[n.req as usize].deadline;
        if now >= deadline {
            self.abandon(node, s);
            return;
        }
        let depth = n.depth as usize;
        match self.limiter_gate(fi, depth, n.instance, now) {
            Gate::Pass => {}
            Gate::Reject => {
                self.arena.nodes[node as usize].attempts += 1;
                self.rec.outcome(Class::BudgetExhausted);
                self.attempt_failed(node, Outcome::of(Class::BudgetExhausted), s);
                return;
            }
            Gate::Wait(d) => {
                let nm = &mut self.arena.nodes[node as usize];
                nm.state = NodeState::Sleeping;
                s.after(d, Event::Retry { node, gen: nm.gen });
                return;
            }
        }
        self.arena.nodes[node as usize].attempts += 1;
        let inside = self.fleets[fi].layers[depth]
            .cfg
            .breaker
            .is_some_and(|b| b.placement == Placement::Inside);
        if inside {
            if !self.breaker_allow(fi, depth, n.instance, s) {
                self.rec.outcome(Class::BreakerOpen);
                self.arena.nodes[node as usize].inside_admitted = false;
                self.attempt_failed(node, Outcome::of(Class::BreakerOpen), s);
                return;
            }
            self.arena.nodes[node as usize].inside_admitted = true;
            set_at(&mut self.started, node, now);
        }
        self.rec.layer_call(depth);
        let gen = n.gen;
        let child_depth = depth as u8 + 1;
        let child = self.arena.alloc_node(n.req, child_depth, node, gen);
        let child_gen = self.arena.nodes[child as usize].gen;
        {
            let nm = &mut self.arena.nodes[node as usize];
            nm.child = child;
            nm.child_gen = child_gen;
            nm.state = NodeState::Waiting;
        }
        let call_deadline = self.call_deadline_of(node, fi, depth, deadline);
        let layer = &mut self.fleets[fi].layers[depth];
        let attempts = self.arena.nodes[node as usize].attempts;
        if let Some(b) = layer.budgets.get_mut(n.instance as usize) {
            b.on_sent(attempts >= 2);
        }
        let (timeout, hop, global) = (
            layer.cfg.attempt_timeout,
            layer.cfg.hop_latency,
            layer.global,
        );
        if let Some(t) = timeout {
            let at = now.saturating_add(t);
            if at <= call_deadline {
                self.set_timer(usize::from(global), at, node, gen, s);
            } else {
                s.at(call_deadline, Event::Timeout { node, gen });
            }
        } else if call_deadline < deadline {
            s.at(call_deadline, Event::Timeout { node, gen });
        }
        let layer = &mut self.fleets[fi].layers[depth];
        match hop {
            Some(d) => {
                let delay = d.sample(&mut layer.network);
                s.after(
                    delay,
                    Event::Deliver {
                        node: child,
                        gen: child_gen,
                    },
                );
            }
            None => self.deliver(child, s),
        }
    }

    // ----- timer lanes ----------------------------------------------------------

    /// Sets a fixed-delay timer in `lane` for object `id` of generation `gen`.
    #[inline]
    fn set_timer(&mut self, lane: usize, at: Nanos, id: u32, gen: u32, s: &mut Scheduler<Packed>) {
        let timeout = lane < self.layer_index.len();
        let arena = &self.arena;
        self.lanes[lane].compact(|t| Self::timer_live(arena, timeout, t));
        let seq = s.reserve_seq();
        if self.lanes[lane].push(Timer { at, seq, id, gen }) {
            s.at_seq(
                at,
                seq,
                Event::Lane {
                    lane: lane as u32,
                    seq,
                },
            );
        }
    }

    /// Whether a timer still matters: for a timeout, the node still waits on the same
    /// attempt; for a deadline, the request is still going.
    #[inline]
    fn timer_live(arena: &Arena, timeout: bool, t: &Timer) -> bool {
        if timeout {
            let n = &arena.nodes[t.id as usize];
            n.gen == t.gen && n.state == NodeState::Waiting
        } else {
            let r = &arena.reqs[t.id as usize];
            r.gen == t.gen && !r.done
        }
    }

    /// The armed timer of `lane` is due: fire it if it is still there and still
    /// matters, then arm the next live one.
    fn on_lane(&mut self, lane: usize, seq: u64, s: &mut Scheduler<Packed>) {
        let timeout = lane < self.layer_index.len();
        // The timer is gone when compaction dropped it; either way, arm the next.
        let fired = self.lanes[lane].fire(seq);
        if let Some(t) = fired.filter(|t| Self::timer_live(&self.arena, timeout, t)) {
            if timeout {
                self.on_timeout(t.id, s);
            } else {
                self.rec.outcome(Class::DeadlineExceeded);
                self.finish_request(t.id, Outcome::of(Class::DeadlineExceeded), s);
            }
        }
        let arena = &self.arena;
        let next = self.lanes[lane].next_live(|t| Self::timer_live(arena, timeout, t));
        if let Some(n) = next {
            s.at_seq(
                n.at,
                n.seq,
                Event::Lane {
                    lane: lane as u32,
                    seq: n.seq,
                },
            );
        }
    }

    fn deliver(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let fi = self.fleet_of(node);
        if self.arena.nodes[node as usize].depth as usize == self.fleets[fi].layers.len() {
            self.dep_arrive(node, s);
        } else {
            self.begin_call(node, s);
        }
    }

    /// The current attempt of `node` timed out.
    fn on_timeout(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let fi = self.fleet_of(node);
        let depth = n.depth as usize;
        self.attempt_over(fi, depth, n.instance, now, Some(Class::Timeout));
        // The attempt is over: the child is orphaned (or cancelled).
        self.arena.nodes[node as usize].gen = n.gen.wrapping_add(1);
        if self.fleets[fi].layers[depth].cfg.cancel_on_timeout {
            self.cancel(n.child, n.child_gen, s);
        }
        if now >= self.arena.reqs[n.req as usize].deadline {
            // The deadline, not the attempt timeout: counted once, at the request. It
            // cancels the attempt.
            if n.inside_admitted {
                let ok = self.cancel_is_success(fi, depth);
                self.breaker_record(fi, depth, n.instance, ok, node, s);
            }
            self.abandon(node, s);
            return;
        }
        self.rec.outcome(Class::Timeout);
        if n.inside_admitted {
            self.breaker_record(fi, depth, n.instance, false, node, s);
        }
        self.attempt_failed(node, Outcome::of(Class::Timeout), s);
    }

    /// The outcome of `node`'s current attempt has arrived.
    fn on_answer(&mut self, node: u32, gen: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        if n.gen != gen || n.state != NodeState::Waiting {
            return; // the attempt already timed out: an orphan's answer
        }
        self.arena.nodes[node as usize].gen = gen.wrapping_add(1);
        let fi = self.fleet_of(node);
        let depth = n.depth as usize;
        let ok = outcome.class == Class::Success;
        let now = s.now();
        self.attempt_over(fi, depth, n.instance, now, Some(outcome.class));
        if n.inside_admitted {
            self.breaker_record(fi, depth, n.instance, ok, node, s);
        }
        if ok {
            if let Some(b) = self.fleets[fi].layers[depth]
                .budgets
                .get_mut(n.instance as usize)
            {
                b.on_succeeded(now, n.retry_cost);
            }
            self.finish_call(node, outcome, s);
        } else {
            self.attempt_failed(node, outcome, s);
        }
    }

    /// Decides what follows a failed attempt: a retry after backoff, or the end of the call.
    fn attempt_failed(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let r = self.arena.reqs[n.req as usize];
        let fi = r.fleet as usize;
        let depth = n.depth as usize;
        let keys = self.fleets[fi].cfg.idempotency_keys;
        let dep_retry_after = self.dep.cfg.retry_after;
        let call_deadline = self.call_deadline_of(node, fi, depth, r.deadline);
        let cls = outcome.class;
        let reject_status = self.dep.cfg.reject_status;
        let throttled = cls == Class::Rejected && reject_status == 429;
        // A retry granted before this attempt is resolved by its outcome.
        self.release_retry(node);
        let layer = &mut self.fleets[fi].layers[depth];
        let ambiguous_write =
            cls == Class::Timeout && r.is_write && !keys && !layer.cfg.retry_ambiguous_writes;
        let retryable = layer.cfg.retry_on.retries(cls, reject_status) && !ambiguous_write;
        let refused = match layer.budgets.get_mut(n.instance as usize) {
            Some(b) => {
                b.on_failed(now, cls, retryable);
                b.refused_failure()
            }
            None => false,
        };
        if refused {
            self.rec.outcome(Class::BudgetExhausted);
            self.finish_call(node, Outcome::of(Class::BudgetExhausted), s);
            return;
        }
        let out_of_time = call_deadline < r.deadline && now >= call_deadline;
        if !retryable || n.attempts >= layer.cfg.max_attempts || out_of_time {
            self.finish_call(node, outcome, s);
            return;
        }
        let mut prev = n.prev;
        let failure = Failure {
            throttled,
            retry_after: (outcome.retry_after && layer.cfg.respect_retry_after)
                .then(|| dep_retry_after.unwrap_or(0)),
        };
        let wait = backoff::next_wait(
            &layer.cfg.backoff,
            n.attempts,
            &mut prev,
            &failure,
            &mut layer.jitter,
        );
        let wake = now.saturating_add(wait);
        if wake > r.deadline || (call_deadline < r.deadline && wake >= call_deadline) {
            if now >= r.deadline {
                self.abandon(node, s);
            } else {
                self.rec.outcome(Class::DeadlineExceeded);
                self.finish_call(node, Outcome::of(Class::DeadlineExceeded), s);
            }
            return;
        }
        let mut cost = 0;
        if let Some(b) = layer.budgets.get_mut(n.instance as usize) {
            let cause = RetryCause {
                timeout: cls == Class::Timeout,
                throttled,
            };
            match b.ask(now, cause) {
                Some(c) => {
                    cost = c;
                    b.on_retry_scheduled(wake);
                }
                None => {
                    self.rec.outcome(Class::BudgetExhausted);
                    self.finish_call(node, Outcome::of(Class::BudgetExhausted), s);
                    return;
                }
            }
        }
        let nm = &mut self.arena.nodes[node as usize];
        nm.prev = prev;
        nm.retry_cost = cost;
        nm.state = NodeState::Sleeping;
        s.at(wake, Event::Retry { node, gen: nm.gen });
    }

    /// The call at `node` is over with `outcome`: report it to the caller.
    fn finish_call(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let fi = self.fleet_of(node);
        let depth = n.depth as usize;
        if n.outside_admitted {
            let ok = outcome.class == Class::Success;
            self.breaker_record(fi, depth, n.instance, ok, node, s);
        }
        self.arena.free_node(node);
        if n.parent == NONE {
            self.finish_request(n.req, outcome, s);
            return;
        }
        let p = self.arena.nodes[n.parent as usize];
        if p.gen != n.parent_gen || p.state != NodeState::Waiting {
            return; // nobody waits for this answer
        }
        let layer = &mut self.fleets[fi].layers[depth - 1];
        match layer.cfg.hop_latency {
            Some(d) => {
                let delay = d.sample(&mut layer.network);
                s.after(
                    delay,
                    Event::Answer {
                        node: n.parent,
                        gen: n.parent_gen,
                        outcome,
                    },
                );
            }
            None => self.on_answer(n.parent, n.parent_gen, outcome, s),
        }
    }

    /// Ends a call whose request's deadline has passed. The deadline is counted once,
    /// at the request (here if its timer has not fired yet at this instant); a caller
    /// that still waits gets `deadline_exceeded` as the attempt's outcome, so its
    /// breakers and budgets see the failure instead of waiting forever.
    fn abandon(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let req = self.arena.nodes[node as usize].req;
        if !self.arena.reqs[req as usize].done {
            self.rec.outcome(Class::DeadlineExceeded);
            self.finish_request(req, Outcome::of(Class::DeadlineExceeded), s);
        }
        self.release_retry(node);
        self.finish_call(node, Outcome::of(Class::DeadlineExceeded), s);
    }

    /// Ends a node that its caller cancelled: nobody waits for its answer. An attempt
    /// its inside breaker admitted is recorded, so a half-open probe slot is not held
    /// forever: as a failure, or as a success for a Polly breaker (see
    /// [`World::cancel_is_success`]).
    fn end_silently(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let fi = self.fleet_of(node);
        let depth = n.depth as usize;
        let ok = self.cancel_is_success(fi, depth);
        self.release_retry(node);
        if n.inside_admitted && n.state == NodeState::Waiting {
            self.breaker_record(fi, depth, n.instance, ok, node, s);
        }
        if n.outside_admitted {
            self.breaker_record(fi, depth, n.instance, ok, node, s);
        }
        self.arena.free_node(node);
    }

    /// Whether the breaker of layer `depth` records a cancelled call (its caller gave
    /// up, or the request's deadline passed) as a success: Polly's does, since the
    /// default `ShouldHandle` does not handle `OperationCanceledException`
    /// (`OnUnhandledOutcomeAsync`: a success, which also closes a half-open circuit).
    fn cancel_is_success(&self, fi: usize, depth: usize) -> bool {
        self.fleets[fi].layers.get(depth).is_some_and(|l| {
            l.cfg
                .breaker
                .is_some_and(|b| matches!(b.trip, Trip::Polly { .. }))
        })
    }

    /// Returns a retry granted to `node` and not yet resolved to its budget.
    fn release_retry(&mut self, node: u32) {
        let n = self.arena.nodes[node as usize];
        if n.retry_cost == 0 {
            return;
        }
        let fi = self.fleet_of(node);
        if let Some(b) = self.fleets[fi]
            .layers
            .get_mut(n.depth as usize)
            .and_then(|l| l.budgets.get_mut(n.instance as usize))
        {
            b.release(n.retry_cost, n.state == NodeState::Waiting);
        }
        self.arena.nodes[node as usize].retry_cost = 0;
    }

    /// Cancels a node and, below it, its current attempt. Work in service runs on.
    fn cancel(&mut self, node: u32, gen: u32, s: &mut Scheduler<Packed>) {
        if node == NONE {
            return;
        }
        let n = self.arena.nodes[node as usize];
        if n.gen != gen {
            return;
        }
        match n.state {
            NodeState::Free | NodeState::InService => {}
            NodeState::Waiting => {
                let fi = self.fleet_of(node);
                self.attempt_over(fi, n.depth as usize, n.instance, s.now(), None);
                self.cancel(n.child, n.child_gen, s);
                self.end_silently(node, s);
            }
            NodeState::Sleeping | NodeState::InTransit => self.end_silently(node, s),
            NodeState::Queued => {
                self.dep.queued -= 1;
                self.rec.set_queue(s.now(), self.dep.queued);
                self.arena.free_node(node);
            }
        }
    }

    // ----- breakers -------------------------------------------------------------

    fn breaker_allow(
        &mut self,
        fi: usize,
        depth: usize,
        inst: u32,
        s: &mut Scheduler<Packed>,
    ) -> bool {
        self.breaker_op(fi, depth, inst, s, |b, now| b.allow(now))
    }

    fn breaker_record(
        &mut self,
        fi: usize,
        depth: usize,
        inst: u32,
        ok: bool,
        node: u32,
        s: &mut Scheduler<Packed>,
    ) {
        let since = self.started.get(node as usize).copied().unwrap_or(0);
        self.breaker_op(fi, depth, inst, s, |b, now| {
            b.record_timed(now, ok, now.saturating_sub(since))
        });
    }

    // ----- limiters, budgets in flight, total timeouts -------------------------

    /// Asks the layer instance's limiter, if any, to send an attempt at `now`.
    fn limiter_gate(&mut self, fi: usize, depth: usize, inst: u32, now: Nanos) -> Gate {
        let layer = &mut self.fleets[fi].layers[depth];
        match (
            layer.limiters.get_mut(inst as usize),
            &mut layer.limiter_rng,
        ) {
            (Some(l), Some(rng)) => l.before_send(now, rng),
            _ => Gate::Pass,
        }
    }

    /// An attempt in flight ended (`answer`: its class, or `None` when cancelled): the
    /// budget's count of attempts in flight and the limiter's view of the answers.
    fn attempt_over(
        &mut self,
        fi: usize,
        depth: usize,
        inst: u32,
        now: Nanos,
        answer: Option<Class>,
    ) {
        let throttled = self.dep.cfg.reject_status == 429;
        let layer = &mut self.fleets[fi].layers[depth];
        if let Some(b) = layer.budgets.get_mut(inst as usize) {
            b.on_done();
        }
        if let (Some(l), Some(c)) = (layer.limiters.get_mut(inst as usize), answer) {
            let rejected = c == Class::Rejected;
            l.on_answer(now, c == Class::Success, rejected, rejected && throttled);
        }
    }

    /// The end of the call at `node`: the request's deadline, or earlier the end of
    /// the layer's `total_timeout`.
    fn call_deadline_of(&self, node: u32, fi: usize, depth: usize, deadline: Nanos) -> Nanos {
        if self.fleets[fi].layers[depth].cfg.total_timeout.is_some() {
            self.call_deadline[node as usize].min(deadline)
        } else {
            deadline
        }
    }

    /// Runs `op` on a breaker, keeping the open count and the half-open timer right.
    fn breaker_op<T>(
        &mut self,
        fi: usize,
        depth: usize,
        inst: u32,
        s: &mut Scheduler<Packed>,
        op: impl FnOnce(&mut Breaker, Nanos) -> T,
    ) -> T {
        let now = s.now();
        let layer = &mut self.fleets[fi].layers[depth];
        let global = layer.global;
        let b = &mut layer.breakers[inst as usize];
        let was_open = matches!(b.state(), super::breaker::State::Open { .. });
        let trips_before = b.times_opened();
        let out = op(b, now);
        let is_open = matches!(b.state(), super::breaker::State::Open { .. });
        let tripped = b.times_opened() > trips_before;
        if tripped {
            if let super::breaker::State::Open { until } = b.state() {
                s.at(
                    until,
                    Event::BreakerTimer {
                        layer: global,
                        instance: inst,
                    },
                );
            }
            self.rec.breaker_tripped();
        }
        if was_open != is_open {
            if is_open {
                self.open_breakers += 1;
            } else {
                self.open_breakers -= 1;
            }
            self.rec.set_open_breakers(now, self.open_breakers);
        }
        out
    }

    // ----- the dependency -------------------------------------------------------

    fn dep_arrive(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let fi = self.fleet_of(node);
        self.rec.inbound(now, fi);
        if let Some(version) = self.dep.version {
            self.occ_read(node, fi, version, s);
            return;
        }
        if self.dep.effect.blackhole {
            self.arena.free_node(node); // swallowed: no answer, ever
            return;
        }
        if self.dep.busy < self.dep.capacity() {
            self.start_service(node, s);
        } else if self.dep.cfg.queue_limit.is_none_or(|l| self.dep.queued < l) {
            let gen = self.arena.nodes[node as usize].gen;
            self.arena.nodes[node as usize].state = NodeState::Queued;
            self.dep.queue.push_back((node, gen));
            self.dep.queued += 1;
            self.rec.set_queue(s.now(), self.dep.queued);
        } else {
            self.rec.outcome(Class::Rejected);
            let outcome = Outcome {
                class: Class::Rejected,
                retry_after: self.dep.cfg.retry_after.is_some(),
            };
            self.finish_call(node, outcome, s);
        }
    }

    fn start_service(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let dep = &mut self.dep;
        let (service, class) = match dep.effect.fail_after {
            Some(after) => (after, Class::Error),
            None => {
                // A slow outage stretches the whole service time, coordination cost
                // (per_concurrent) included: the dependency is `slow` times slower.
                let base = dep.cfg.service_time.sample(&mut dep.service);
                let mut t =
                    base.saturating_add(dep.cfg.per_concurrent.saturating_mul(u64::from(dep.busy)));
                if dep.effect.slow != 1.0 {
                    t = crate::engine::time::from_f64_ns(t as f64 * dep.effect.slow);
                }
                let p = 1.0 - (1.0 - dep.cfg.error_rate) * (1.0 - dep.effect.error_p);
                let failed = p > 0.0 && dep.errors.random::<f64>() < p;
                (t, if failed { Class::Error } else { Class::Success })
            }
        };
        dep.busy += 1;
        self.rec.set_busy(s.now(), u64::from(dep.busy));
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.prev = service;
        nm.outcome = Outcome::of(class);
        s.after(service, Event::ServiceDone { node, gen: nm.gen });
    }

    fn on_service_done(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        self.dep.busy -= 1;
        self.rec.set_busy(s.now(), u64::from(self.dep.busy));
        let n = self.arena.nodes[node as usize];
        let useful = self.arena.useful(node, now);
        self.rec.served(n.prev, !useful);
        let outcome = n.outcome;
        if outcome.class == Class::Success {
            let fi = self.fleet_of(node);
            let keys = self.fleets[fi].cfg.idempotency_keys;
            let r = &mut self.arena.reqs[n.req as usize];
            if r.is_write && !(keys && r.applied > 0) {
                r.applied += 1;
                if r.applied >= 2 {
                    let first = r.applied == 2;
                    self.rec.duplicate(first);
                }
            }
        } else {
            self.rec.outcome(outcome.class);
        }
        if self.dep.effect.blackhole {
            self.arena.free_node(node); // the answer is lost
        } else {
            self.finish_call(node, outcome, s);
        }
        self.dispatch(s);
    }

    /// An OCC attempt reads the record's version; its conditional write arrives after
    /// the read's answer travels back and the write travels out (two more legs).
    fn occ_read(&mut self, node: u32, fi: usize, version: u64, s: &mut Scheduler<Packed>) {
        let depth = self.arena.nodes[node as usize].depth as usize;
        let legs = match depth.checked_sub(1) {
            Some(d) => {
                let layer = &mut self.fleets[fi].layers[d];
                match layer.cfg.hop_latency {
                    Some(h) => {
                        let back = h.sample(&mut layer.network);
                        back.saturating_add(h.sample(&mut layer.network))
                    }
                    None => 0,
                }
            }
            None => 0,
        };
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.prev = version;
        s.after(legs, Event::OccWrite { node, gen: nm.gen });
    }

    /// The conditional write: succeeds only if nobody wrote since this attempt's read.
    fn occ_write(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let read = self.arena.nodes[node as usize].prev;
        let version = self.dep.version.as_mut().expect("occ dependency");
        let outcome = if *version == read {
            *version += 1;
            Outcome::of(Class::Success)
        } else {
            self.rec.outcome(Class::Conflict);
            Outcome::of(Class::Conflict)
        };
        self.rec.write_call(now, outcome.class == Class::Success);
        self.finish_call(node, outcome, s);
    }

    /// Starts queued attempts while servers are free.
    fn dispatch(&mut self, s: &mut Scheduler<Packed>) {
        let now = s.now();
        while self.dep.busy < self.dep.capacity() {
            let next = match self.dep.cfg.discipline {
                Discipline::Fifo => self.dep.queue.pop_front(),
                Discipline::Lifo => self.dep.queue.pop_back(),
            };
            let Some((node, gen)) = next else { break };
            let n = self.arena.nodes[node as usize];
            if n.gen != gen || n.state != NodeState::Queued {
                continue; // cancelled while queued
            }
            self.dep.queued -= 1;
            self.rec.set_queue(s.now(), self.dep.queued);
            if self.dep.cfg.drop_expired && !self.arena.useful(node, now) {
                self.rec.shed();
                self.arena.free_node(node);
                continue;
            }
            self.start_service(node, s);
        }
    }

    fn set_effect(&mut self, s: &mut Scheduler<Packed>) {
        let windows = &self.windows;
        self.dep.effect = Effect::combine(self.active.iter().map(|&i| &windows[i as usize].mode));
        self.dispatch(s);
    }
}

/// Sets `v[node] = t`, growing `v` as needed (per-node side tables).
fn set_at(v: &mut Vec<Nanos>, node: u32, t: Nanos) {
    let i = node as usize;
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] = t;
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

impl Handler<Packed> for World {
    #[inline]
    fn handle(&mut self, ev: Packed, s: &mut Scheduler<Packed>) -> Control {
        let ev = Event::from(ev);
        let now = s.now();
        if now > self.horizon {
            return Control::Stop;
        }
        if self.rec.crosses(now) {
            let level = self.budget_level_at(now);
            self.rec.advance(now, level);
        }
        match ev {
            Event::Arrival { fleet } => {
                let fi = fleet as usize;
                let f = &mut self.fleets[fi];
                let client = f.next_client % f.cfg.clients;
                f.next_client += 1;
                let open = f.open.as_mut().expect("open arrivals");
                if let Some(t) = open.next(now, &mut f.arrivals) {
                    s.at(t, Event::Arrival { fleet });
                }
                self.start_request(fi, client, s);
            }
            Event::Burst { fleet } => {
                let fi = fleet as usize;
                let (count, clients) = match self.fleets[fi].cfg.arrival {
                    Arrival::Burst { count, .. } => (count, self.fleets[fi].cfg.clients),
                    _ => (0, 1),
                };
                for i in 0..count {
                    self.start_request(fi, i % clients, s);
                }
            }
            Event::ClientSend { fleet, client } => {
                self.start_request(fleet as usize, u64::from(client), s);
            }
            Event::Deliver { node, gen } => {
                if self.arena.nodes[node as usize].gen == gen {
                    self.deliver(node, s);
                }
            }
            Event::Answer { node, gen, outcome } => self.on_answer(node, gen, outcome, s),
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
            Event::OutageStart { window } => {
                self.active.push(window);
                self.set_effect(s);
            }
            Event::OutageEnd { window } => {
                self.active.retain(|&w| w != window);
                self.set_effect(s);
            }
            Event::OccWrite { node, gen } => {
                if self.arena.nodes[node as usize].gen == gen {
                    self.occ_write(node, s);
                }
            }
            Event::BreakerTimer { layer, instance } => {
                let (fi, depth) = self.layer_index[layer as usize];
                self.breaker_op(fi as usize, depth as usize, instance, s, |b, now| {
                    b.tick(now)
                });
            }
        }
        // The drain ends when every logical request is over and so is the work they
        // left behind (orphaned attempts, retries below a timed-out layer): the summary
        // counts everything.
        if now >= self.duration && self.in_flight == 0 && self.arena.live_nodes() == 0 {
            return Control::Stop;
        }
        if let Some(why) = self.caps.exceeded(
            self.arena.live_requests(),
            self.arena.live_nodes(),
            // Pending events and timers are summed every 64 events: the cap is a memory
            // bound, and 64 events cannot move it far.
            if s.processed().is_multiple_of(64) {
                s.pending() as u64 + self.lanes.iter().map(|l| l.len() as u64).sum::<u64>()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_packing() {
        let o = Outcome {
            class: Class::Rejected,
            retry_after: true,
        };
        let max = u32::MAX;
        for e in [
            Event::Arrival { fleet: 7 },
            Event::Burst { fleet: u16::MAX },
            Event::ClientSend {
                fleet: 3,
                client: max,
            },
            Event::Deliver { node: max, gen: 1 },
            Event::Answer {
                node: 1,
                gen: max,
                outcome: o,
            },
            Event::Answer {
                node: 2,
                gen: 3,
                outcome: Outcome::of(Class::Conflict),
            },
            Event::Timeout { node: 4, gen: 5 },
            Event::Retry { node: 6, gen: 7 },
            Event::ServiceDone { node: 8, gen: 9 },
            Event::Lane {
                lane: max,
                seq: u64::MAX,
            },
            Event::OutageStart { window: 10 },
            Event::OutageEnd { window: 11 },
            Event::OccWrite { node: 12, gen: 13 },
            Event::BreakerTimer {
                layer: 14,
                instance: max,
            },
        ] {
            assert_eq!(Event::from(Packed::from(e)), e);
        }
        assert_eq!(std::mem::size_of::<Packed>(), 16);
    }
}
