//! The capacity-limited dependency (MODEL.md §4): servers, a bounded queue served
//! FIFO or LIFO, service times and errors, or an optimistic-concurrency record; and
//! the outage windows (MODEL.md §5) whose combined effect fails, slows, shrinks or
//! blackholes it.

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Nanos, Scheduler};
use crate::model::config::{DependencyConfig, DependencyKind, Discipline};

use super::event::{Event, Packed};
use super::outage::{Effect, Window};
use super::outcome::{Class, Outcome};
use super::request::{Halves, Memo, NodeState};
use super::world::World;

/// The dependency's live state.
pub(super) struct Dependency {
    pub(super) cfg: DependencyConfig,
    /// Attempts in service.
    busy: u32,
    /// Queued attempts as (node, generation); cancelled ones stay until popped.
    queue: VecDeque<(u32, u32)>,
    /// Attempts in the queue that are still live.
    queued: u64,
    service: ChaCha8Rng,
    errors: ChaCha8Rng,
    /// The combined effect of the active outage windows.
    effect: Effect,
    /// The record's version, for an OCC dependency.
    version: Option<u64>,
    /// The outage windows of the run, and the indices of the active ones.
    pub(super) windows: Vec<Window>,
    active: Vec<u32>,
}

impl Dependency {
    /// The dependency `cfg` with streams from `seed` and the run's outage windows.
    pub(super) fn new(cfg: &DependencyConfig, seed: u64, windows: Vec<Window>) -> Dependency {
        Dependency {
            cfg: cfg.clone(),
            busy: 0,
            queue: VecDeque::new(),
            queued: 0,
            service: stream(seed, "service"),
            errors: stream(seed, "errors"),
            effect: Effect::default(),
            version: (cfg.kind == DependencyKind::Occ).then_some(0),
            windows,
            active: Vec::new(),
        }
    }

    /// Servers available now: the configured ones, fewer during a capacity outage.
    fn capacity(&self) -> u32 {
        let base = self.cfg.servers.unwrap_or(u32::MAX);
        self.effect.capacity.map_or(base, |c| c.min(base))
    }

    /// Draws an attempt's service time and outcome class, at its start.
    fn draw_service(&mut self) -> (Nanos, Class) {
        match self.effect.fail_after {
            Some(after) => (after, Class::Error),
            None => {
                // A slow outage stretches the whole service time, coordination cost
                // (per_concurrent) included: the dependency is `slow` times slower.
                let base = self.cfg.service_time.sample(&mut self.service);
                let mut t = base
                    .saturating_add(self.cfg.per_concurrent.saturating_mul(u64::from(self.busy)));
                if self.effect.slow != 1.0 {
                    t = crate::engine::time::from_f64_ns(t as f64 * self.effect.slow);
                }
                let p = 1.0 - (1.0 - self.cfg.error_rate) * (1.0 - self.effect.error_p);
                let failed = p > 0.0 && self.errors.random::<f64>() < p;
                (t, if failed { Class::Error } else { Class::Success })
            }
        }
    }
}

impl World {
    /// An attempt arrives at the dependency: read (OCC), swallowed (blackhole),
    /// served, queued or rejected.
    pub(super) fn dep_arrive(&mut self, node: u32, s: &mut Scheduler<Packed>) {
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
            self.rec.admitted(false);
            self.start_service(node, 0, s);
        } else if self.dep.cfg.queue_limit.is_none_or(|l| self.dep.queued < l) {
            self.rec.admitted(true);
            let nm = &mut self.arena.nodes[node as usize];
            nm.state = NodeState::Queued;
            nm.memo = Memo::Queued(Halves::new(now));
            let gen = nm.gen;
            self.dep.queue.push_back((node, gen));
            self.dep.queued += 1;
            self.rec.set_queue(s.now(), self.dep.queued);
        } else {
            self.rec.blocked();
            let outcome = Outcome {
                class: Class::Rejected,
                retry_after: self.dep.cfg.retry_after.is_some(),
            };
            self.fail_call(node, outcome, s);
        }
    }

    /// A queued attempt was cancelled: it leaves the queue's count now, its entry
    /// when it is popped.
    pub(super) fn leave_queue(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        self.dep.queued -= 1;
        self.rec.set_queue(s.now(), self.dep.queued);
        self.arena.free_node(node);
    }

    /// Starts serving the attempt at `node`, which waited `wait` ns for its server.
    fn start_service(&mut self, node: u32, wait: Nanos, s: &mut Scheduler<Packed>) {
        self.rec.service_started(wait);
        let (service, class) = self.dep.draw_service();
        self.dep.busy += 1;
        self.rec.set_busy(s.now(), u64::from(self.dep.busy));
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.memo = Memo::Service {
            time: Halves::new(service),
            outcome: Outcome::of(class),
        };
        s.after(service, Event::ServiceDone { node, gen: nm.gen });
    }

    /// [`Event::ServiceDone`]: the dependency finished serving the attempt at `node`.
    pub(super) fn on_service_done(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        self.dep.busy -= 1;
        self.rec.set_busy(s.now(), u64::from(self.dep.busy));
        let n = self.arena.nodes[node as usize];
        let Memo::Service { time, outcome } = n.memo else {
            unreachable!("a served attempt's memo is its service, not {:?}", n.memo)
        };
        let useful = self.arena.useful(node, now);
        self.rec.served(time.get(), !useful);
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
                match layer.hop() {
                    Some(back) => back.saturating_add(layer.hop().unwrap_or(0)),
                    None => 0,
                }
            }
            None => 0,
        };
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.memo = Memo::Read(Halves::new(version));
        s.after(legs, Event::OccWrite { node, gen: nm.gen });
    }

    /// [`Event::OccWrite`]: the conditional write succeeds only if nobody wrote since
    /// this attempt's read.
    pub(super) fn occ_write(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let memo = self.arena.nodes[node as usize].memo;
        let Memo::Read(read) = memo else {
            unreachable!("an OCC attempt's memo is its read, not {memo:?}")
        };
        let version = self.dep.version.as_mut().expect("occ dependency");
        let won = *version == read.get();
        if won {
            *version += 1;
        }
        self.rec.write_call(now, won);
        if won {
            self.finish_call(node, Outcome::of(Class::Success), s);
        } else {
            self.fail_call(node, Outcome::of(Class::Conflict), s);
        }
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
            let Memo::Queued(since) = n.memo else {
                unreachable!("a queued attempt's memo is its arrival, not {:?}", n.memo)
            };
            self.start_service(node, now - since.get(), s);
        }
    }

    /// [`Event::OutageStart`] / [`Event::OutageEnd`]: window `window` starts (`true`)
    /// or ends; the dependency takes the combined effect of the active windows.
    pub(super) fn on_outage(&mut self, window: u32, starts: bool, s: &mut Scheduler<Packed>) {
        let dep = &mut self.dep;
        if starts {
            dep.active.push(window);
        } else {
            dep.active.retain(|&w| w != window);
        }
        let windows = &dep.windows;
        dep.effect = Effect::combine(dep.active.iter().map(|&i| &windows[i as usize].mode));
        self.dispatch(s);
    }
}
